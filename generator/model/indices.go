package model

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"reflect"
	"slices"

	"github.com/kopf-go/kopf/generator/markers"
	"github.com/kopf-go/kopf/runtime/kwargs"
)

// IndicesType is the name of the generated struct that holds a package's
// indices, one field per index function, named after it:
//
//	type Indices struct {
//		ByLabel kopf.Index[[2]string, string]
//	}
//
// In a package with indices, every handler's kwargs type (other than the
// index functions') is a struct embedding the kind's kwargs and Indices,
// so that handlers read an index as kw.ByLabel:
//
//	type CreateFnKwargs struct {
//		kopf.ChangingKwargs
//		Indices
//	}
const IndicesType = "Indices"

// IndexShape is the form of an index function's result, which decides the
// index's key and value types and the runtime's adapter.
type IndexShape int

// The accepted results of index functions.
const (
	// IndexMap is map[K]V: Kopf's dict; an index of K to V
	// (kopf.IndexFunc through runtime/indexing's NoError).
	IndexMap IndexShape = iota + 1
	// IndexMapError is (map[K]V, error) (kopf.IndexFunc).
	IndexMapError
	// IndexValue is (V, bool): Kopf's single value, under the key
	// kopf.None; false contributes nothing (kopf.ValueIndexFunc).
	IndexValue
	// IndexBare is V alone, neither a map nor an error: Kopf's single
	// value, always there (kopf.ValueIndexFunc through runtime/indexing's
	// Present).
	IndexBare
)

// IndexResult is what an index function returns.
type IndexResult struct {
	Shape IndexShape
	// Key is K (nil for IndexValue: the key is kopf.None); Value is V.
	Key, Value types.Type
}

// indexSignature checks an index function's signature and infers its
// index's key and value types from the result.
func (b *builder) indexSignature(d *ast.FuncDecl, h *Handler) bool {
	want := fmt.Sprintf("want func %s(ctx context.Context, kw %s) map[K]V, (map[K]V, error), or V or (V, bool) for a single value", h.Func, h.Kwargs)
	fail := func(p token.Pos, format string, args ...any) bool {
		b.errorf(b.pos(p), "index function %s has the wrong signature: %s; %s", h.Func, fmt.Sprintf(format, args...), want)
		return false
	}
	if !b.kwargsParams(d, h, fail) {
		return false
	}
	results := flatten(d.Type.Results)
	p := d.Type.Params.Closing
	if d.Type.Results != nil {
		p = d.Type.Results.Pos()
	}
	types_ := make([]types.Type, len(results))
	for i, r := range results {
		if types_[i] = b.typeOf(r); types_[i] == nil {
			return fail(r.Pos(), "the type %s of its result is unknown", b.exprString(r))
		}
	}
	errType := types.Universe.Lookup("error").Type()
	asMap := func(t types.Type) *types.Map {
		m, _ := t.Underlying().(*types.Map)
		return m
	}
	res := &IndexResult{}
	switch {
	case len(results) == 1 && asMap(types_[0]) != nil:
		m := asMap(types_[0])
		res.Shape, res.Key, res.Value = IndexMap, m.Key(), m.Elem()
	case len(results) == 2 && asMap(types_[0]) != nil && types.Identical(types_[1], errType):
		m := asMap(types_[0])
		res.Shape, res.Key, res.Value = IndexMapError, m.Key(), m.Elem()
	case len(results) == 2 && types.Identical(types_[1], types.Typ[types.Bool]) && !types.Identical(types_[0], errType):
		res.Shape, res.Value = IndexValue, types_[0]
	case len(results) == 1 && !types.Identical(types_[0], errType) && !isDefinedMap(types_[0]):
		res.Shape, res.Value = IndexBare, types_[0]
	default:
		return fail(p, "it returns %s", b.resultsString(results))
	}
	if res.Shape != IndexValue && res.Shape != IndexBare && isDefined(types_[0]) {
		return fail(p, "it returns %s, a defined map type; return a map[K]V", b.resultsString(results[:1]))
	}
	ok := true
	for _, part := range []struct {
		what string
		t    types.Type
	}{{"key", res.Key}, {"value", res.Value}} {
		if part.t == nil {
			continue
		}
		imports := map[string]Import{}
		if why := b.referable(part.t, imports); why != "" {
			b.errorf(b.pos(p), "index function %s: the index's %s type %s cannot be spelt by generated code: %s",
				h.Func, part.what, types.TypeString(part.t, b.qualifier), why)
			ok = false
			continue
		}
		for path, imp := range imports {
			b.imports[path] = imp
		}
	}
	h.Index = res
	return ok
}

// isDefinedMap reports whether t is a defined type whose underlying type
// is a map: refused (return a map[K]V), not taken for a single value.
func isDefinedMap(t types.Type) bool {
	_, m := t.Underlying().(*types.Map)
	return m && isDefined(t)
}

// indices collects the index functions and checks what the generated
// Indices struct needs: one resource per index, and field names that hide
// none of the kwargs that handlers embed.
func (b *builder) indices() {
	regs := map[*Handler][]*Registration{}
	// Backwards: a function's registrations are bottom to top, and the
	// error names the second marker in source order.
	for _, r := range slices.Backward(b.out.Registrations) {
		regs[r.Handler] = append(regs[r.Handler], r)
	}
	taken := kwargsNames()
	for _, h := range b.out.Handlers {
		if h.Kind != Index {
			continue
		}
		b.out.Indices = append(b.out.Indices, h)
		if rs := regs[h]; len(rs) > 1 {
			b.errorf(rs[1].Pos, "%s%s is repeated on %s (first at %s): an index is filled from one resource; use one function per index",
				markers.Prefix, markers.Index, h.Func, where(rs[0].Pos, rs[1].Pos))
		}
		if taken[h.Func] {
			b.errorf(h.Pos, "index function %s would hide kw.%s of the handlers' kwargs, where the index is kw.%[1]s; rename the function", h.Func, h.Func)
		}
	}
}

// kwargsNames are the names that handlers' kwargs have (fields, promoted
// fields and methods of every kind, body-only and typed), which an index
// field must not hide.
func kwargsNames() map[string]bool {
	out := map[string]bool{IndicesType: true}
	for _, kind := range []Kind{Changing, Event, Daemon, Timer, Webhook} { // the embedded fields
		out[kind.Name()+KwargsSuffix] = true
		out["Typed"+kind.Name()+KwargsSuffix] = true
	}
	out[Activity.Name()+KwargsSuffix] = true
	for _, t := range []reflect.Type{
		reflect.TypeFor[kwargs.TypedChanging[struct{}]](), reflect.TypeFor[kwargs.TypedEvent[struct{}]](),
		reflect.TypeFor[kwargs.TypedDaemon[struct{}]](), reflect.TypeFor[kwargs.TypedTimer[struct{}]](),
		reflect.TypeFor[kwargs.Activity](), reflect.TypeFor[kwargs.TypedAdmission[struct{}]](),
	} {
		for _, f := range reflect.VisibleFields(t) {
			out[f.Name] = true
		}
		pt := reflect.PointerTo(t)
		for i := range pt.NumMethod() {
			out[pt.Method(i).Name] = true
		}
	}
	return out
}
