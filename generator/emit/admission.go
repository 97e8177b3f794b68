package emit

import (
	"github.com/dave/jennifer/jen"

	"github.com/kopf-go/kopf/generator/model"
)

// An admission webhook handler (//kopf:on.validate, //kopf:on.mutate) is
// registered with AddWebhook, behind kopf.AdmissionFunc (or
// kopf.TypedAdmissionFunc for a typed resource; kopfkwargs.WithIndicesEvent
// inside it in a package with indices), with the options set in its
// marker only:
//
//	if err := r.AddWebhook(kopf.WebhookHandler{
//		ID:          "validate_subresources",
//		Selector:    kopf.Selector{Name: "kex"},
//		Kind:        kopf.WebhookValidating,
//		Fn:          kopf.AdmissionFunc(ValidateSubresources),
//		Subresource: "*",
//	}); err != nil {
//		return err
//	}

// webhookLit renders the kopf.WebhookHandler literal of a registration,
// listing its fields in the struct's declaration order.
func (e *emitter) webhookLit(r *model.Registration) (jen.Code, error) {
	var f fields
	h := r.Handler

	f.add("ID", jen.Lit(r.ID))
	f.add("Selector", selectorLit(r))
	if r.Mutating {
		f.add("Kind", kopf("WebhookMutating"))
	} else {
		f.add("Kind", kopf("WebhookValidating"))
	}
	f.add("Fn", e.fnLit(h))
	if r.Param != nil {
		f.add("Param", jen.Lit(*r.Param))
	}
	if r.Operations != nil {
		f.add("Operations", stringsLit(r.Operations))
	}
	if r.Subresource != "" {
		f.add("Subresource", jen.Lit(r.Subresource))
	}
	if r.Persistent {
		f.add("Persistent", jen.True())
	}
	if r.SideEffects {
		f.add("SideEffects", jen.True())
	}
	if r.IgnoreFailures {
		f.add("IgnoreFailures", jen.True())
	}
	if r.Field != nil {
		f.add("Field", stringsLit(r.Field))
	}
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
	return kopf("WebhookHandler").Custom(multiline(), f...), nil
}
