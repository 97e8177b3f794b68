package emit

import (
	"github.com/dave/jennifer/jen"

	"github.com/kopf-go/kopf/generator/model"
)

// An admission webhook handler (//kopf:on.validate, //kopf:on.mutate) is
// registered with AddWebhook, behind kopf.AdmissionFunc (or
// kopf.TypedAdmissionFunc for a typed resource; kopf.WithIndicesEvent
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
	var items []jen.Code
	kv := func(name string, value jen.Code) { items = append(items, jen.Id(name).Op(":").Add(value)) }
	h := r.Handler

	kv("ID", jen.Lit(r.ID))
	kv("Selector", selectorLit(r))
	if r.Mutating {
		kv("Kind", kopf("WebhookMutating"))
	} else {
		kv("Kind", kopf("WebhookValidating"))
	}
	kv("Fn", e.fnLit(h))
	if r.Param != nil {
		kv("Param", jen.Lit(*r.Param))
	}
	if r.Operations != nil {
		kv("Operations", stringsLit(r.Operations))
	}
	if r.Subresource != "" {
		kv("Subresource", jen.Lit(r.Subresource))
	}
	if r.Persistent {
		kv("Persistent", jen.True())
	}
	if r.SideEffects {
		kv("SideEffects", jen.True())
	}
	if r.IgnoreFailures {
		kv("IgnoreFailures", jen.True())
	}
	if r.Field != nil {
		kv("Field", stringsLit(r.Field))
	}
	filter, err := filterLit(r)
	if err != nil {
		return nil, err
	}
	if filter != nil {
		kv("Filter", filter)
	}
	if r.When != nil {
		kv("When", e.whenLit(h, r.When))
	}
	return kopf("WebhookHandler").Custom(multiline(), items...), nil
}
