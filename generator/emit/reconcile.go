package emit

import (
	"github.com/dave/jennifer/jen"

	"github.com/kopf-go/kopf/generator/model"
)

// A reconcile handler (//kopf:on.reconcile) is registered with
// AddReconcile, behind kopf.ReconcileFunc (kopf.TypedReconcileFunc for a
// typed resource; kopf.ReconcileOnlyError inside it for a function
// returning only an error), with the options set in its marker only:
//
//	if err := r.AddReconcile(kopf.ReconcileHandler{
//		ID:       "reconcile_memcached",
//		Selector: kopf.Selector{Group: "cache.example.com", Version: "v1alpha1", Name: "memcacheds"},
//		Fn:       kopf.TypedReconcileFunc(ReconcileMemcached),
//		Finalize: true,
//		Owns:     []kopf.Selector{{Group: "apps", Name: "deployments"}},
//	}); err != nil {
//		return err
//	}
//
// watches= becomes Watches, one kopf.Watch per resource, each with map=
// as its Map (the function itself: it has registry.MapFn's signature).

// reconcileLit renders the kopf.ReconcileHandler literal of a
// registration, listing its fields in the struct's declaration order.
func (e *emitter) reconcileLit(r *model.Registration) (jen.Code, error) {
	var f fields
	h := r.Handler
	f.add("ID", jen.Lit(r.ID))
	f.add("Selector", selectorLit(r))
	f.add("Fn", e.fnLit(h))
	filter, err := filterLit(r)
	if err != nil {
		return nil, err
	}
	if filter != nil {
		f.add("Filter", filter)
	}
	if r.When != nil {
		f.add("When", e.whenLit(h, r.When))
	}
	if r.Param != nil {
		f.add("Param", jen.Lit(*r.Param))
	}
	if r.Resync != 0 {
		f.add("Resync", durationLit(r.Resync))
	}
	if r.Finalize {
		f.add("Finalize", jen.True())
	}
	if r.Backoff != 0 {
		f.add("Backoff", durationLit(r.Backoff))
	}
	if len(r.Owns) > 0 {
		owns := make([]jen.Code, len(r.Owns))
		for i, sel := range r.Owns {
			owns[i] = jen.Values(selectorItems(sel)...)
		}
		f.add("Owns", jen.Index().Qual(KopfPath, "Selector").Custom(listOptions(len(owns)), owns...))
	}
	if len(r.Watches) > 0 {
		watches := make([]jen.Code, len(r.Watches))
		for i, sel := range r.Watches {
			items := []jen.Code{jen.Id("Selector").Op(":").Qual(KopfPath, "Selector").Values(selectorItems(sel)...)}
			if r.Map != nil {
				items = append(items, jen.Id("Map").Op(":").Id(r.Map.Func))
			}
			watches[i] = jen.Values(items...)
		}
		f.add("Watches", jen.Index().Qual(KopfPath, "Watch").Custom(listOptions(len(watches)), watches...))
	}
	return kopf("ReconcileHandler").Custom(multiline(), f...), nil
}

// listOptions renders a slice literal on one line for one element, one
// element per line for more.
func listOptions(n int) jen.Options {
	if n == 1 {
		return jen.Options{Open: "{", Close: "}", Separator: ","}
	}
	return multiline()
}

// noResultAdapter is the facade's adapter of a handler of the kind that
// returns only an error: kopf.ReconcileOnlyError for reconcile handlers,
// kopf.NoResult for the others.
func noResultAdapter(k model.Kind) string {
	if k == model.Reconcile {
		return "ReconcileOnlyError"
	}
	return "NoResult"
}
