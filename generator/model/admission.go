package model

import (
	"slices"

	"github.com/kopf-go/kopf/generator/markers"
)

// Admission webhook handlers (on.validate, on.mutate) have the signature
//
//	func F(ctx context.Context, kw FKwargs) error
//
// with FKwargs an alias of kopf.AdmissionKwargs (kopf.TypedAdmissionKwargs[T]
// for a typed resource T). Each marker is one registry.WebhookHandler: the
// API server calls it at the path /<id>, where the runtime serves every
// admission handler of that id, so an id is unique among the admission
// handlers, validating and mutating, whatever their resources (a shared
// id would run a mutating handler for a validating webhook, whose patch
// the API server refuses), and markers are never merged. The checks beyond the grammar's (which
// rejects unknown and repeated operations):
//
//   - on.mutate with DELETE among other operations: Kopf calls a mutating
//     handler for a deletion only when DELETE is its only operation, so
//     DELETE there would silently never be mutated;
//   - subresource= must be a subresource's name (lower-case letters and
//     digits) or *.

// WebhookOptions are the options of an admission webhook handler's
// registration, as Kopf's @kopf.on.validate and @kopf.on.mutate take them.
type WebhookOptions struct {
	// Mutating is set for on.mutate, unset for on.validate.
	Mutating bool
	// Operations are operations= in source order; nil means all.
	Operations []string
	// Subresource is subresource=: "" for the object itself only (Kopf's
	// None), "*" for the object and every subresource.
	Subresource    string
	Persistent     bool
	SideEffects    bool
	IgnoreFailures bool
}

// setWebhookOption sets the option a if it is one of the webhook options,
// and reports whether it was.
func (r *Registration) setWebhookOption(a markers.NamedArg) bool {
	switch a.Name {
	case "operations":
		r.Operations = a.Go.([]string)
	case "subresource":
		r.Subresource = a.Go.(string)
	case "persistent":
		r.Persistent = a.Go.(bool)
	case "side_effects":
		r.SideEffects = a.Go.(bool)
	case "ignore_failures":
		r.IgnoreFailures = a.Go.(bool)
	default:
		return false
	}
	return true
}

// checkWebhook checks the options of a webhook marker that the grammar
// cannot.
func (b *builder) checkWebhook(r *Registration, m *markers.Marker) bool {
	ok := true
	if r.Mutating && len(r.Operations) > 1 && slices.Contains(r.Operations, "DELETE") {
		a, _ := m.Arg("operations")
		at := a.Pos
		for _, item := range a.Node.Items {
			if item.Text == "DELETE" {
				at = item.Pos
			}
		}
		b.errorf(at, "%s%s is called for DELETE only when DELETE is its only operation (as in Kopf): here DELETE would never be mutated; use a marker of its own with operations=[DELETE]",
			markers.Prefix, markers.OnMutate)
		ok = false
	}
	if a, set := m.Arg("subresource"); set && !isSubresource(r.Subresource) {
		b.errorf(a.Pos, "subresource=%s is not a subresource: want its name (status, scale, ...) or * for the object and every subresource", a.Node.Raw)
		ok = false
	}
	return ok
}

// isSubresource reports whether s is * or a subresource's name as the API
// server spells them: lower-case letters and digits.
func isSubresource(s string) bool {
	if s == "*" {
		return true
	}
	if s == "" {
		return false
	}
	for _, c := range s {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// webhookDuplicate reports a webhook id used twice.
func (b *builder) webhookDuplicate(prev, r *Registration, m *markers.Marker) {
	kind := markers.OnValidate
	if prev.Mutating {
		kind = markers.OnMutate
	}
	by := prev.Handler.Func
	if prev.Handler == r.Handler {
		by = "this function"
	}
	b.errorf(m.Pos, "handler id %q is already used by the %s%s handler of %s (%s) at %s: the id is the webhook's path, unique among the admission handlers; set a distinct id=",
		r.ID, markers.Prefix, kind, selectorString(prev.Selector), by, where(prev.Pos, m.Pos))
}
