// Package registry holds the handlers an operator serves. Generated
// Register functions fill a Registry; the reactor reads it. A Registry is
// filled before the operator starts and is read-only afterwards.
package registry

import (
	"context"
	"fmt"
	"time"

	"github.com/kopf-go/kopf/runtime/causes"
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
	// its result in status. Unique per resource.
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
}

// Registry is the set of handlers of one operator.
type Registry struct {
	changing []*ChangingHandler
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
		if other.ID == h.ID && other.Selector == h.Selector {
			return fmt.Errorf("handler %q is registered twice for %s", h.ID, h.Selector)
		}
	}
	r.changing = append(r.changing, &h)
	return nil
}

// Selectors returns every distinct resource selector that has handlers, in
// registration order.
func (r *Registry) Selectors() []resources.Selector {
	var out []resources.Selector
	seen := map[resources.Selector]bool{}
	for _, h := range r.changing {
		if !seen[h.Selector] {
			seen[h.Selector] = true
			out = append(out, h.Selector)
		}
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
