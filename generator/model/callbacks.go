package model

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"slices"
	"sort"
	"strconv"

	"github.com/kopf-go/kopf/generator/markers"
)

// KwargsPath is the runtime package of the kwargs types that callbacks may
// take.
const KwargsPath = "github.com/kopf-go/kopf/runtime/kwargs"

// The kinds of callbacks, by what they filter.
type callbackKind int

const (
	whenCallback   callbackKind = iota // when=
	stringCallback                     // labels=, annotations=
	anyCallback                        // value=, old=, new=
	delayCallback                      // initial_delay=fn:F
)

// resolveCallbacks checks every callback of a registration against the
// signatures its kind accepts, and records their forms.
func (b *builder) resolveCallbacks(h *Handler, r *Registration, m *markers.Marker) {
	if r.When != nil {
		a, _ := m.Arg("when")
		if cb := b.callback(h, r.When.Func, a.Pos, "when", whenCallback); cb != nil {
			r.When = cb
		}
	}
	if r.InitialDelayFn != nil {
		a, _ := m.Arg("initial_delay")
		r.InitialDelayFn = b.callback(h, r.InitialDelayFn.Func, a.Pos, "initial_delay", delayCallback)
	}
	for _, maps := range []struct {
		name    string
		filters []KeyFilter
	}{{"labels", r.Labels}, {"annotations", r.Annotations}} {
		a, _ := m.Arg(maps.name)
		for i := range maps.filters {
			f := &maps.filters[i]
			if f.Kind != markers.MatchCallback {
				continue
			}
			label := maps.name + "[" + strconv.Quote(f.Key) + "]"
			f.Callback = b.callback(h, f.Func, a.Node.Values[i].Pos, label, stringCallback)
		}
	}
	for _, v := range []struct {
		name string
		f    *Filter
	}{{"value", r.Value}, {"old", r.Old}, {"new", r.New}} {
		if v.f == nil || v.f.Kind != markers.MatchCallback {
			continue
		}
		a, _ := m.Arg(v.name)
		v.f.Callback = b.callback(h, v.f.Func, a.Pos, v.name, anyCallback)
	}
}

// callback resolves a function of the package used as a callback, or
// reports why it cannot be one and returns nil.
func (b *builder) callback(h *Handler, name string, pos token.Position, label string, kind callbackKind) *Callback {
	want := b.callbackWant(h, kind)
	d := b.callbackFunc(name, pos, label, want)
	if d == nil {
		return nil
	}
	if b.callbacks == nil {
		b.callbacks = map[string]bool{}
	}
	b.callbacks[name] = true
	if d.Type.TypeParams != nil && len(d.Type.TypeParams.List) > 0 {
		b.errorf(pos, "%s: %s has type parameters; a callback must not be generic", label, name)
		return nil
	}
	form, own, ok := b.callbackForm(h, kind, d.Type)
	if !ok {
		if fix := b.byValue(h, kind, d.Type); fix != "" {
			b.errorf(pos, "%s: %s takes kw by pointer; callbacks take kwargs by value, as handlers: %s", label, name, fix)
		} else {
			b.errorf(pos, "%s: %s has the wrong signature %s; want %s", label, name, types.ExprString(d.Type), want)
		}
		return nil
	}
	return &Callback{Func: name, Form: form, Own: own}
}

// callbackWant says which signatures a callback of the kind may have, for
// the errors.
func (b *builder) callbackWant(h *Handler, kind callbackKind) string {
	switch kind {
	case whenCallback, delayCallback:
		result := "bool"
		if kind == delayCallback {
			result = "time.Duration"
		}
		kind := "kopf." + h.Kind.Name() + "Kwargs"
		if h.Typed != nil {
			typed := "kopf.Typed" + h.Kind.Name() + "Kwargs"
			return fmt.Sprintf("func(kw %s) %s, func(kw %s[%s]) %[2]s or func(kw %s) %[2]s",
				h.Kwargs, result, typed, types.TypeString(h.Typed.Object, b.qualifier), kind)
		}
		return fmt.Sprintf("func(kw %s) %s or func(kw %s) %[2]s", h.Kwargs, result, kind)
	case stringCallback:
		return "func(value string) bool, func(value *string) bool (nil: absent), or either with kw kopf.ResourceKwargs after the value"
	default:
		return "func(value any) bool or func(value any, kw kopf.ResourceKwargs) bool"
	}
}

// callbackFunc returns the declaration of the package's function name, or
// reports why there is none and returns nil.
func (b *builder) callbackFunc(name string, pos token.Position, label, want string) *ast.FuncDecl {
	if d := b.funcs[name]; d != nil {
		return d
	}
	if b.pkg.Types != nil {
		if obj := b.pkg.Types.Scope().Lookup(name); obj != nil {
			b.errorf(pos, "%s: %s is %s, not a function; want a function %s", label, name, objectKind(obj), want)
			return nil
		}
	}
	if s := markers.Suggest(name, b.funcNames()); s != "" {
		b.errorf(pos, "%s: no function %s in package %s; did you mean %s?", label, name, b.pkg.Name, s)
		return nil
	}
	b.errorf(pos, "%s: no function %s in package %s; want a function %s", label, name, b.pkg.Name, want)
	return nil
}

// callbackForm tells the form of a callback of the kind by its signature;
// own is set when a when= callback takes the handler's own kwargs type. ok
// is false when the signature fits no form.
func (b *builder) callbackForm(h *Handler, kind callbackKind, sig *ast.FuncType) (form CallbackForm, own, ok bool) {
	params, results := flatten(sig.Params), flatten(sig.Results)
	if len(results) != 1 {
		return 0, false, false
	}
	if kind == delayCallback {
		if !isNamed(b.typeOf(results[0]), "time", "Duration") {
			return 0, false, false
		}
	} else if !b.is(results[0], types.Typ[types.Bool]) {
		return 0, false, false
	}
	for _, p := range params {
		if _, variadic := p.(*ast.Ellipsis); variadic {
			return 0, false, false
		}
	}
	switch kind {
	case whenCallback, delayCallback:
		return b.whenForm(h, params)
	case stringCallback:
		form, ok := b.stringForm(params)
		return form, false, ok
	default:
		form, ok := b.anyForm(params)
		return form, false, ok
	}
}

// whenForm tells the form of a when= callback by its parameters.
func (b *builder) whenForm(h *Handler, params []ast.Expr) (form CallbackForm, own, ok bool) {
	if len(params) != 1 {
		return 0, false, false
	}
	runtime := h.Kind.Name()
	t := b.typeOf(params[0])
	switch {
	case isIdent(params[0], h.Kwargs):
		return WhenKwargs, true, true
	case isNamed(t, KwargsPath, runtime):
		if h.Typed != nil {
			return WhenBody, false, true
		}
		return WhenKwargs, false, true
	case h.Typed != nil && isTypedKwargs(t, "Typed"+runtime, h.Typed.Object):
		return WhenKwargs, false, true
	default:
		return 0, false, false
	}
}

// stringForm tells the form of a callback of a string value by its
// parameters.
func (b *builder) stringForm(params []ast.Expr) (CallbackForm, bool) {
	str := types.Typ[types.String]
	switch {
	case len(params) == 1 && b.is(params[0], str):
		return StringValue, true
	case len(params) == 2 && b.is(params[0], str) && b.isResourceKwargs(params[1]):
		return StringValueKwargs, true
	case len(params) == 1 && b.isPtr(params[0], str):
		return StringPtr, true
	case len(params) == 2 && b.isPtr(params[0], str) && b.isResourceKwargs(params[1]):
		return StringPtrKwargs, true
	default:
		return 0, false
	}
}

// anyForm tells the form of a callback of any value by its parameters.
func (b *builder) anyForm(params []ast.Expr) (CallbackForm, bool) {
	switch {
	case len(params) == 1 && b.isAny(params[0]):
		return AnyValue, true
	case len(params) == 2 && b.isAny(params[0]) && b.isResourceKwargs(params[1]):
		return AnyValueKwargs, true
	default:
		return 0, false
	}
}

// isResourceKwargs reports whether e is kopf.ResourceKwargs (the kwargs'
// Base), by value.
func (b *builder) isResourceKwargs(e ast.Expr) bool {
	return isNamed(b.typeOf(e), KwargsPath, "Base")
}

// byValue returns the signature sig would have with its kwargs taken by
// value, when sig takes them by pointer (its last parameter is a pointer
// to a kwargs type) and the by-value form is one the kind accepts; else
// "". Callbacks take kwargs by value, as handlers do: the pointer forms
// are refused with this fix rather than accepted as a second convention.
func (b *builder) byValue(h *Handler, kind callbackKind, sig *ast.FuncType) string {
	if sig.Params == nil || len(sig.Params.List) == 0 {
		return ""
	}
	fields := slices.Clone(sig.Params.List)
	last := *fields[len(fields)-1]
	star, ok := last.Type.(*ast.StarExpr)
	if !ok || !(isIdent(star.X, h.Kwargs) || isKwargsType(b.typeOf(star.X))) {
		return ""
	}
	last.Type = star.X
	fields[len(fields)-1] = &last
	fixed := &ast.FuncType{Params: &ast.FieldList{List: fields}, Results: sig.Results}
	if _, _, ok := b.callbackForm(h, kind, fixed); !ok {
		return ""
	}
	return types.ExprString(fixed)
}

// isKwargsType reports whether t is a type of package kwargs (an alias of
// it too, as the facade's kopf.ChangingKwargs).
func isKwargsType(t types.Type) bool {
	named, ok := types.Unalias(t).(*types.Named)
	return ok && named.Obj().Pkg() != nil && named.Obj().Pkg().Path() == KwargsPath
}

// funcNames returns the names of the package-level functions, sorted.
func (b *builder) funcNames() []string {
	names := make([]string, 0, len(b.funcs))
	for name := range b.funcs {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// isIdent reports whether e is the identifier name.
func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}

// isTypedKwargs reports whether t is the generic kwargs type name of
// package kwargs instantiated with obj.
func isTypedKwargs(t types.Type, name string, obj *types.Named) bool {
	if !isNamed(t, KwargsPath, name) {
		return false
	}
	args := types.Unalias(t).(*types.Named).TypeArgs()
	if args == nil || args.Len() != 1 {
		return false
	}
	// By path and name: built-in types are loaded apart from the package.
	arg, ok := types.Unalias(args.At(0)).(*types.Named)
	want := obj.Obj()
	return ok && arg.Obj().Pkg() != nil && want.Pkg() != nil &&
		arg.Obj().Pkg().Path() == want.Pkg().Path() && arg.Obj().Name() == want.Name()
}

// objectKind names what kind of declaration obj is, with an article.
func objectKind(obj types.Object) string {
	switch obj.(type) {
	case *types.Var:
		return "a variable"
	case *types.Const:
		return "a constant"
	case *types.TypeName:
		return "a type"
	case *types.Func:
		return "a method"
	default:
		return "not a function"
	}
}
