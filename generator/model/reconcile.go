package model

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"time"

	"github.com/kopf-go/kopf/generator/markers"
	"github.com/kopf-go/kopf/runtime/resources"
)

// Reconcile handlers (on.reconcile) have one of the signatures
//
//	func F(ctx context.Context, kw FKwargs) (kopf.ReconcileResult, error)
//	func F(ctx context.Context, kw FKwargs) error
//
// with FKwargs an alias of kopf.ReconcileKwargs
// (kopf.TypedReconcileKwargs[T] for a typed resource T). Each marker is
// one registry.ReconcileHandler; ids are unique per resource among the
// reconcile handlers, and markers are never merged. The checks beyond
// the grammar's:
//
//   - owns= and watches= name resources, never * (a reconciler is re-run
//     for children of its own, not for everything); a name one edit away
//     from a resource that kopf-gen knows is an error with "did you mean",
//     as for handlers' resources;
//   - map= needs watches=, and names a package-level, non-generic
//     function func(ctx context.Context, obj kopf.Body)
//     []types.NamespacedName (k8s.io/apimachinery/pkg/types), the
//     runtime's registry.MapFn; watches= without map= finds the objects to
//     reconcile by the watched objects' ownerReferences, as owns= does;
//   - a package with index functions cannot have reconcile handlers yet
//     (their kwargs would carry the indices, which the runtime's adapters
//     of reconcile handlers do not take).

// ReconcileOptions are the options of a reconcile handler's registration.
type ReconcileOptions struct {
	// Owns are owns=, in source order.
	Owns []resources.Selector
	// Watches are watches=, in source order; Map is map= (nil: by
	// ownerReferences), which applies to all of them.
	Watches []resources.Selector
	Map     *Callback
	// Resync is resync= (0: none), Finalize finalize=.
	Resync   time.Duration
	Finalize bool
}

// setReconcileOption sets the option a if it is one of the reconcile
// options, and reports whether it was.
func (r *Registration) setReconcileOption(a markers.NamedArg) bool {
	switch a.Name {
	case "owns":
		r.Owns = a.Go.([]resources.Selector)
	case "watches":
		r.Watches = a.Go.([]resources.Selector)
	case "map":
		r.Map = &Callback{Func: a.Go.(string)}
	case "resync":
		r.Resync = a.Go.(time.Duration)
	case "finalize":
		r.Finalize = a.Go.(bool)
	default:
		return false
	}
	return true
}

// reconcileSignature checks a reconcile handler's signature and records
// its result form.
func (b *builder) reconcileSignature(d *ast.FuncDecl, h *Handler) bool {
	want := fmt.Sprintf("want func %s(ctx context.Context, kw %s) (kopf.ReconcileResult, error) or func %[1]s(ctx context.Context, kw %[2]s) error", h.Func, h.Kwargs)
	fail := func(p token.Pos, format string, args ...any) bool {
		b.errorf(b.pos(p), "handler %s has the wrong signature: %s; %s", h.Func, fmt.Sprintf(format, args...), want)
		return false
	}
	if !b.kwargsParams(d, h, fail) {
		return false
	}
	results := flatten(d.Type.Results)
	errType := types.Universe.Lookup("error").Type()
	switch {
	case len(results) == 1 && b.is(results[0], errType):
		h.ReturnsResult = false
	case len(results) == 2 && isNamed(b.typeOf(results[0]), RegistryPath, "ReconcileResult") && b.is(results[1], errType):
		h.ReturnsResult = true
	default:
		p := d.Type.Params.Closing
		if d.Type.Results != nil {
			p = d.Type.Results.Pos()
		}
		return fail(p, "it returns %s", b.resultsString(results))
	}
	return true
}

// RegistryPath is the runtime package of the registry's types, which the
// facade's aliases (kopf.ReconcileResult) name.
const RegistryPath = "github.com/kopf-go/kopf/runtime/registry"

// checkReconcile checks the options of an on.reconcile marker that the
// grammar cannot: the owned and watched resources and map=.
func (b *builder) checkReconcile(r *Registration, m *markers.Marker) bool {
	ok := true
	for _, name := range []string{"owns", "watches"} {
		if a, set := m.Arg(name); set {
			ok = b.checkRelated(a) && ok
		}
	}
	if a, set := m.Arg("map"); set {
		if r.Watches == nil {
			b.errorf(a.NamePos, "map= needs watches=: it maps the watched objects to the objects to reconcile (owned objects are found by their ownerReferences)")
			return false
		}
		ok = b.checkMap(r, a) && ok
	}
	return ok
}

// checkRelated checks the resources of owns= or watches=.
func (b *builder) checkRelated(a markers.NamedArg) bool {
	nodes := []markers.Node{a.Node}
	if a.Kind == markers.NodeList {
		nodes = a.Items
	}
	ok := true
	for i, sel := range a.Go.([]resources.Selector) {
		n := nodes[i]
		if sel.Name == markers.Everything {
			b.errorf(n.Pos, "%s: name a resource, not *: the runtime watches these resources to find the objects to reconcile", a.Name)
			ok = false
			continue
		}
		if s := nearResource(sel, b.typed); s != "" {
			b.errorf(n.Pos, "%s: %s is not a resource that kopf-gen knows; did you mean %s?", a.Name, sel.Name, s)
			ok = false
		}
	}
	return ok
}

// checkMap resolves map= to a function of the package with the signature
// of registry.MapFn.
func (b *builder) checkMap(r *Registration, a markers.NamedArg) bool {
	const want = "func(ctx context.Context, obj kopf.Body) []types.NamespacedName"
	name := r.Map.Func
	d := b.callbackFunc(name, a.Pos, "map", want)
	if d == nil {
		return false
	}
	if b.callbacks == nil {
		b.callbacks = map[string]bool{}
	}
	b.callbacks[name] = true
	if d.Type.TypeParams != nil && len(d.Type.TypeParams.List) > 0 {
		b.errorf(a.Pos, "map: %s has type parameters; a mapping function must not be generic", name)
		return false
	}
	params, results := flatten(d.Type.Params), flatten(d.Type.Results)
	if len(params) != 2 || !b.isContext(params[0]) || !isNamed(b.typeOf(params[1]), BodyPath, "Body") ||
		len(results) != 1 || !isNamedSlice(b.typeOf(results[0]), "k8s.io/apimachinery/pkg/types", "NamespacedName") {
		b.errorf(a.Pos, "map: %s has the wrong signature %s; want %s (k8s.io/apimachinery/pkg/types)", name, types.ExprString(d.Type), want)
		return false
	}
	return true
}

// BodyPath is the runtime package of kopf.Body.
const BodyPath = "github.com/kopf-go/kopf/runtime/body"

// isNamedSlice reports whether t is []path.name.
func isNamedSlice(t types.Type, path, name string) bool {
	if t == nil {
		return false
	}
	s, ok := t.Underlying().(*types.Slice)
	return ok && !isDefined(t) && isNamed(s.Elem(), path, name)
}

// reconcileWithIndices reports the reconcile handlers of a package with
// index functions, which are not supported yet.
func (b *builder) reconcileWithIndices() {
	if len(b.out.Indices) == 0 {
		return
	}
	for _, h := range b.out.Handlers {
		if h.Kind == Reconcile {
			b.errorf(h.Pos, "handler %s: %s%s handlers are not supported yet in a package with index functions (%s at %s); move the index functions or the reconciler to another package",
				h.Func, markers.Prefix, markers.OnReconcile, b.out.Indices[0].Func, where(b.out.Indices[0].Pos, h.Pos))
		}
	}
}
