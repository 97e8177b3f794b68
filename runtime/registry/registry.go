// Package registry holds the handlers an operator serves. Generated
// Register functions fill a Registry; the reactor reads it. A Registry is
// filled before the operator starts and is read-only afterwards.
package registry

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/kopf-go/kopf/runtime/causes"
	"github.com/kopf-go/kopf/runtime/filters"
	"github.com/kopf-go/kopf/runtime/kwargs"
	"github.com/kopf-go/kopf/runtime/resources"
)

// ChangingFn is the function behind a changing handler. Its result, if not
// nil, is stored into status.<handler id>.
type ChangingFn func(ctx context.Context, kw *kwargs.Changing) (any, error)

// ErrorsMode says how a handler's errors other than TemporaryError and
// PermanentError are treated.
type ErrorsMode string

// The errors modes of Kopf.
const (
	ErrorsTemporary ErrorsMode = "temporary" // retried with backoff (default)
	ErrorsPermanent ErrorsMode = "permanent" // fail the handler at once
	ErrorsIgnored   ErrorsMode = "ignored"   // log and treat as success
)

// ChangingHandler is one handler of object changes (create, update, delete,
// resume).
type ChangingHandler struct {
	// ID is the handler's identity: the key of its progress record and of
	// its result in status. Unique per resource, but for the registrations
	// of one Func (see Func).
	ID       string
	Selector resources.Selector
	// Reasons the handler is invoked for.
	Reasons []causes.Reason
	Fn      ChangingFn
	Param   any
	Errors  ErrorsMode
	// Timeout and Retries limit the attempts (0 means unlimited). Backoff
	// is the delay between attempts after an arbitrary error (0 means the
	// settings' default).
	Timeout time.Duration
	Retries int
	Backoff time.Duration
	// Optional (delete handlers only): the handler does not need a finalizer
	// and runs only if the object is deleted while a finalizer exists anyway.
	Optional bool
	// Deleted (resume handlers only): also resume objects being deleted.
	Deleted bool

	// Field narrows the handler to one field (a path such as
	// []string{"spec", "field"}): Old, New and Diff are reduced to it, the
	// field is added to the object's essence, and for update causes (and
	// field handlers, always) the handler runs only if the field changed.
	Field []string
	// FieldHandler marks an on.field handler: it runs on any cause in
	// Reasons in which the field changes, and value= matches either side.
	FieldHandler bool
	// Filter holds the labels, annotations, value, old and new filters.
	Filter filters.Filter
	// When is the when= callback; nil matches everything.
	When func(kw *kwargs.Changing) bool

	// Func names the function behind Fn (its package path and name), or
	// is empty. Registrations of one ID and Selector are Kopf's decorators
	// stacked on one function with one id and other options
	// (@kopf.on.create(..., id='x', retries=3) over @kopf.on.update(...,
	// id='x')): accepted only if they name the same Func and have no reason
	// in common. They share the progress record and status.<id>; in a cause
	// that mixes resuming in, the first one of the cause's reason is called,
	// as Kopf calls a function once per cause and id.
	Func string
}

// HasCallbacks reports whether selecting the handler calls user code: a
// when= callback or a callback filter.
func (h *ChangingHandler) HasCallbacks() bool {
	return h.When != nil || h.Filter.HasCallbacks()
}

// stacked reports whether two changing handlers of one id are stacked
// registrations of one function (see ChangingHandler.Func).
func stacked(a, b *ChangingHandler) bool {
	if a.Func == "" || a.Func != b.Func {
		return false
	}
	for _, reason := range a.Reasons {
		if slices.Contains(b.Reasons, reason) {
			return false
		}
	}
	return true
}

// EventFn is the function behind an event-watching handler. Its errors are
// logged and otherwise ignored, as in Kopf.
type EventFn func(ctx context.Context, kw *kwargs.Event) error

// EventHandler is one handler of raw watch events (on.event). It keeps no
// state in the object and never causes writes.
type EventHandler struct {
	ID       string
	Selector resources.Selector
	Fn       EventFn
	Param    any
	Field    []string
	Filter   filters.Filter
	When     func(kw *kwargs.Event) bool
}

// HasCallbacks reports whether selecting the handler calls user code: a
// when= callback or a callback filter.
func (h *EventHandler) HasCallbacks() bool {
	return h.When != nil || h.Filter.HasCallbacks()
}

// Registry is the set of handlers of one operator.
type Registry struct {
	changing []*ChangingHandler
	events   []*EventHandler
	daemons  []*DaemonHandler
	timers   []*TimerHandler
	// activities serve no resource: Selectors does not list them.
	activities []*ActivityHandler
	indices    []*IndexHandler
	// webhooks serve admission requests, not watches: Selectors does not
	// list them (see WebhookSelectors).
	webhooks []*WebhookHandler
	// conversions serve ConversionReviews on the admission server.
	conversions []*Conversion
	// reconcile are the level-triggered handlers (reconcile.go).
	reconcile []*ReconcileHandler
	// selectable are the declared selectable fields (selectable.go).
	selectable []*SelectableFields
}

// New returns an empty registry.
func New() *Registry { return &Registry{} }

// AddChanging registers a changing handler. Registration order is the order
// of execution within one cause.
func (r *Registry) AddChanging(h ChangingHandler) error {
	if h.ID == "" {
		return fmt.Errorf("handler has no id")
	}
	if h.Fn == nil {
		return fmt.Errorf("handler %q has no function", h.ID)
	}
	if len(h.Reasons) == 0 {
		return fmt.Errorf("handler %q has no reasons", h.ID)
	}
	for _, other := range r.changing {
		if other.ID != h.ID || other.Selector != h.Selector || stacked(other, &h) {
			continue
		}
		if other.Func != h.Func {
			return fmt.Errorf("handler %q is registered twice for %s, by %s and by %s: one id is one function's", h.ID, h.Selector, funcName(other.Func), funcName(h.Func))
		}
		return fmt.Errorf("handler %q is registered twice for %s", h.ID, h.Selector)
	}
	r.changing = append(r.changing, &h)
	return nil
}

func funcName(f string) string {
	if f == "" {
		return "an unnamed function"
	}
	return f
}

// AddEvent registers an event-watching handler.
func (r *Registry) AddEvent(h EventHandler) error {
	if h.ID == "" {
		return fmt.Errorf("handler has no id")
	}
	if h.Fn == nil {
		return fmt.Errorf("handler %q has no function", h.ID)
	}
	for _, other := range r.events {
		if other.ID == h.ID && other.Selector == h.Selector {
			return fmt.Errorf("handler %q is registered twice for %s", h.ID, h.Selector)
		}
	}
	r.events = append(r.events, &h)
	return nil
}

// EventHandlers returns the event-watching handlers of a resource, in
// registration order.
func (r *Registry) EventHandlers(res resources.Resource) []*EventHandler {
	var out []*EventHandler
	for _, h := range r.events {
		if h.Selector.Matches(res) {
			out = append(out, h)
		}
	}
	return out
}

// ExtraFields returns the fields that the changing handlers of a resource
// watch, to be kept in the object's essence (Kopf's "extra fields").
func (r *Registry) ExtraFields(res resources.Resource) [][]string {
	var out [][]string
	for _, h := range r.changing {
		if h.Field != nil && h.Selector.Matches(res) {
			out = append(out, h.Field)
		}
	}
	return out
}

// Selectors returns every distinct resource selector that has handlers, in
// registration order.
func (r *Registry) Selectors() []resources.Selector {
	var out []resources.Selector
	seen := map[resources.Selector]bool{}
	add := func(s resources.Selector) {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	for _, h := range r.changing {
		add(h.Selector)
	}
	for _, h := range r.events {
		add(h.Selector)
	}
	for _, h := range r.daemons {
		add(h.Selector)
	}
	for _, h := range r.timers {
		add(h.Selector)
	}
	for _, h := range r.indices {
		add(h.Selector)
	}
	for _, h := range r.reconcile {
		add(h.Selector)
	}
	return out
}

// ChangingHandlers returns the handlers of a resource for a reason, in
// registration order.
func (r *Registry) ChangingHandlers(res resources.Resource, reason causes.Reason) []*ChangingHandler {
	var out []*ChangingHandler
	for _, h := range r.changing {
		if !h.Selector.Matches(res) {
			continue
		}
		for _, rs := range h.Reasons {
			if rs == reason {
				out = append(out, h)
				break
			}
		}
	}
	return out
}

// HasChanging reports whether any changing handler serves the resource.
func (r *Registry) HasChanging(res resources.Resource) bool {
	for _, h := range r.changing {
		if h.Selector.Matches(res) {
			return true
		}
	}
	return false
}
