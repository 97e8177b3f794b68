package emit

import (
	"fmt"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/kopf-go/kopf/generator/model"
)

// In a package with index functions (//kopf:index), the generated file
// also declares the package's indices, one field per index function named
// after it,
//
//	type Indices struct {
//		ByLabel kopf.Index[[2]string, string]
//	}
//
// the kwargs type of every other handler is a struct embedding the kind's
// kwargs and Indices instead of an alias,
//
//	type CreateFnKwargs struct {
//		kopf.ChangingKwargs
//		Indices
//	}
//
// and Register makes the indices first, then registers each index
// function with its index and every other handler through runtime/kwargs'
// WithIndices (WithIndicesEvent for event handlers, WithIndicesWhen for
// when= callbacks taking FKwargs; imported as kopfkwargs), which gives it
// a copy of FKwargs{Indices: indices} with the kind's kwargs set:
//
//	indices := Indices{ByLabel: kopf.NewIndex[[2]string, string]()}
//	... Fn: kopf.IndexFunc(indices.ByLabel, kopfindexing.NoError(ByLabel)) ...
//	... Fn: kopf.ChangingFunc(kopfkwargs.WithIndices[kopf.ChangingKwargs](CreateFnKwargs{Indices: indices}, CreateFn)) ...

// withIndices reports whether a handler's kwargs carry the indices: every
// handler but the index functions and the login handlers (kopf.LoginFunc
// takes kopf.ActivityKwargs: logins run before any index is filled), in a
// package with indices.
func (e *emitter) withIndices(h *model.Handler) bool {
	return len(e.pkg.Indices) > 0 && h.Kind != model.Index && h.Kind != model.Login
}

// indexTypes renders an index's type arguments: K (kopf.None for a single
// value) and V.
func (e *emitter) indexTypes(h *model.Handler) []jen.Code {
	key := kopf("None")
	if h.Index.Key != nil {
		key = jen.Add(e.typeCode(h.Index.Key))
	}
	return []jen.Code{key, e.typeCode(h.Index.Value)}
}

// indicesType declares the Indices struct, if the package has indices.
func (e *emitter) indicesType(f *jen.File) {
	if len(e.pkg.Indices) == 0 {
		return
	}
	f.Comment(fmt.Sprintf("// %s are the package's indices, given to every handler of the package in\n// its kwargs (kw.<index>): one per index function, filled from its\n// resource's objects before any handler runs.", model.IndicesType))
	f.Type().Id(model.IndicesType).StructFunc(func(g *jen.Group) {
		for _, h := range e.pkg.Indices {
			var doc strings.Builder
			fmt.Fprintf(&doc, "// %s is filled by %s, registered by:\n//", h.Func, h.Func)
			for _, r := range e.pkg.Registrations {
				if r.Handler == h {
					for _, m := range r.Markers {
						fmt.Fprintf(&doc, "\n//\t%s", m)
					}
				}
			}
			g.Comment(doc.String())
			g.Id(h.Func).Qual(KopfPath, "Index").Types(e.indexTypes(h)...)
		}
	})
	f.Line()
}

// indicesVar makes the indices at the start of Register.
func (e *emitter) indicesVar(g *jen.Group) {
	if len(e.pkg.Indices) == 0 {
		return
	}
	items := make([]jen.Code, len(e.pkg.Indices))
	for i, h := range e.pkg.Indices {
		items[i] = jen.Id(h.Func).Op(":").Add(kopf("NewIndex").Types(e.indexTypes(h)...).Call())
	}
	g.Id("indices").Op(":=").Id(model.IndicesType).Custom(multiline(), items...)
}

// indexFnLit renders an index function with its index:
// kopf.IndexFunc(indices.F, F), with runtime/indexing's NoError(F) for a function
// returning no error, kopf.ValueIndexFunc for a single value (with
// runtime/indexing's Present(F) for a bare one), and the
// Typed forms for typed resources.
func (e *emitter) indexFnLit(h *model.Handler) jen.Code {
	adapter := "IndexFunc"
	fn := jen.Id(h.Func)
	switch h.Index.Shape {
	case model.IndexMap:
		fn = jen.Qual(indexingPath, "NoError").Call(fn)
	case model.IndexValue:
		adapter = "ValueIndexFunc"
	case model.IndexBare:
		adapter = "ValueIndexFunc"
		fn = jen.Qual(indexingPath, "Present").Call(fn)
	}
	if h.Typed != nil {
		adapter = "Typed" + adapter
	}
	return kopf(adapter).Call(jen.Id("indices").Dot(h.Func), fn)
}

// withIndicesLit renders kopfkwargs.WithIndices[K](FKwargs{Indices: indices}, fn)
// (or WithIndicesEvent, WithIndicesWhen: adapter), K being the kind's
// kwargs type.
func (e *emitter) withIndicesLit(h *model.Handler, adapter string, fn jen.Code) *jen.Statement {
	proto := jen.Id(h.Kwargs).Values(jen.Id(model.IndicesType).Op(":").Id("indices"))
	return jen.Qual(kwargsPath, adapter).Types(e.kwargsType(h)).Call(proto, fn)
}
