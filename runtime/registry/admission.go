package registry

import (
	"context"
	"fmt"
	"slices"

	"github.com/kopf-go/kopf/runtime/filters"
	"github.com/kopf-go/kopf/runtime/kwargs"
	"github.com/kopf-go/kopf/runtime/resources"
)

// WebhookFn is the function behind an admission webhook handler. A
// validating handler rejects the request by returning an error (an
// admission.Error for a message and code of its choice); a mutating
// handler changes kw.Patch, and may reject the request too.
type WebhookFn func(ctx context.Context, kw *kwargs.Admission) error

// WebhookKind says whether a webhook handler validates or mutates.
type WebhookKind string

// The kinds of webhook handlers (Kopf's WebhookType).
const (
	WebhookValidating WebhookKind = "validating" // @kopf.on.validate
	WebhookMutating   WebhookKind = "mutating"   // @kopf.on.mutate
)

// WebhookHandler is one admission webhook handler (Kopf's @kopf.on.validate
// and @kopf.on.mutate). The admission server (package runtime/admission)
// serves it at the path /<ID> and, with managed configurations, declares
// it as one webhook of the ValidatingWebhookConfiguration or the
// MutatingWebhookConfiguration.
type WebhookHandler struct {
	// ID is the handler's identity: the last element of its URL path and
	// the first part of its webhook's name. Unique per kind.
	ID       string
	Selector resources.Selector
	Kind     WebhookKind
	Fn       WebhookFn
	Param    any
	// Operations are the operations the handler admits (CREATE, UPDATE,
	// DELETE, CONNECT); none means all of them. A mutating handler is not
	// called for DELETE unless DELETE is its only operation (as in Kopf).
	Operations []string
	// Subresource is the subresource the handler admits ("status",
	// "scale", ...): "" means the object itself only (Kopf's None), "*"
	// the object and all its subresources.
	Subresource string
	// Persistent keeps the handler's webhook in the managed
	// configuration when the operator exits (Kopf's persistent=): the
	// API server keeps calling it, and with IgnoreFailures false refuses
	// the requests while no operator answers.
	Persistent bool
	// SideEffects declares that the handler has side effects outside the
	// object, which it skips for dry-run requests (Kopf's side_effects=):
	// sideEffects NoneOnDryRun instead of None.
	SideEffects bool
	// IgnoreFailures lets the API server admit requests when the webhook
	// cannot be reached or fails (Kopf's ignore_failures=): failurePolicy
	// Ignore instead of Fail.
	IgnoreFailures bool

	// Field, Filter and When restrict the objects admitted, as for event
	// handlers: the value filters check the field of the request's body.
	// Label filters without callbacks also become the webhook's
	// objectSelector in managed configurations.
	Field  []string
	Filter filters.Filter
	When   func(kw *kwargs.Admission) bool
}

// HasCallbacks reports whether selecting the handler calls user code: a
// when= callback or a callback filter.
func (h *WebhookHandler) HasCallbacks() bool {
	return h.When != nil || h.Filter.HasCallbacks()
}

// Admits reports whether the handler is for the operation and the
// subresource of a request (before its filters): Kopf's rules of
// operations, subresources and mutations of deletions.
func (h *WebhookHandler) Admits(operation, subresource string) bool {
	if h.Subresource != "*" && h.Subresource != subresource {
		return false
	}
	if len(h.Operations) > 0 && !slices.Contains(h.Operations, operation) {
		return false
	}
	if h.Kind == WebhookMutating && operation == "DELETE" {
		for _, op := range h.Operations {
			if op != "DELETE" {
				return false
			}
		}
		return len(h.Operations) > 0
	}
	return true
}

// AddWebhook registers an admission webhook handler. Its id must be unique
// among the handlers of its kind: it names the handler's URL path and
// webhook.
func (r *Registry) AddWebhook(h WebhookHandler) error {
	if h.ID == "" {
		return fmt.Errorf("webhook handler has no id")
	}
	if h.Fn == nil {
		return fmt.Errorf("webhook handler %q has no function", h.ID)
	}
	switch h.Kind {
	case WebhookValidating, WebhookMutating:
	default:
		return fmt.Errorf("webhook handler %q has an unknown kind %q (validating or mutating)", h.ID, h.Kind)
	}
	for _, op := range h.Operations {
		switch op {
		case "CREATE", "UPDATE", "DELETE", "CONNECT":
		default:
			return fmt.Errorf("webhook handler %q has an unknown operation %q (CREATE, UPDATE, DELETE or CONNECT)", h.ID, op)
		}
	}
	for _, other := range r.webhooks {
		if other.ID == h.ID && other.Kind == h.Kind {
			return fmt.Errorf("%s webhook handler %q is registered twice", h.Kind, h.ID)
		}
	}
	r.webhooks = append(r.webhooks, &h)
	return nil
}

// WebhookHandlers returns the webhook handlers of a kind ("" for both), in
// registration order.
func (r *Registry) WebhookHandlers(kind WebhookKind) []*WebhookHandler {
	var out []*WebhookHandler
	for _, h := range r.webhooks {
		if kind == "" || h.Kind == kind {
			out = append(out, h)
		}
	}
	return out
}

// HasWebhooks reports whether any webhook handler is registered.
func (r *Registry) HasWebhooks() bool { return len(r.webhooks) > 0 }

// WebhookSelectors returns every distinct resource selector that has
// webhook handlers, in registration order. They are not among Selectors:
// admission needs no watch.
func (r *Registry) WebhookSelectors() []resources.Selector {
	var out []resources.Selector
	for _, h := range r.webhooks {
		if !slices.Contains(out, h.Selector) {
			out = append(out, h.Selector)
		}
	}
	return out
}

// AdmissionFunc adapts a webhook handler of the body-only kwargs.
func AdmissionFunc(fn func(context.Context, kwargs.Admission) error) WebhookFn {
	return func(ctx context.Context, kw *kwargs.Admission) error { return fn(ctx, *kw) }
}

// TypedAdmissionFunc adapts a webhook handler of a resource of Go type T:
// the objects are decoded once per request and T; one that does not
// decode as T is the handler's error (the request is refused).
func TypedAdmissionFunc[T any](fn func(context.Context, kwargs.TypedAdmission[T]) error) WebhookFn {
	return func(ctx context.Context, kw *kwargs.Admission) error {
		typed, err := kwargs.DecodeAdmission[T](kw)
		if err != nil {
			return err
		}
		return fn(ctx, typed)
	}
}

// AdmissionWhen adapts a when= callback of a webhook handler of the
// body-only kwargs.
func AdmissionWhen(fn func(kwargs.Admission) bool) func(*kwargs.Admission) bool {
	return func(kw *kwargs.Admission) bool { return fn(*kw) }
}

// TypedAdmissionWhen adapts a when= callback of a webhook handler of a
// resource of Go type T.
func TypedAdmissionWhen[T any](fn func(kwargs.TypedAdmission[T]) bool) func(*kwargs.Admission) bool {
	return func(kw *kwargs.Admission) bool {
		typed, err := kwargs.DecodeAdmission[T](kw)
		if err != nil {
			return true // the handler runs and reports the decoding error
		}
		return fn(typed)
	}
}
