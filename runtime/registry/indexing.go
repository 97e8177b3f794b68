package registry

import (
	"context"
	"fmt"
	"time"

	"github.com/kopf-go/kopf/runtime/filters"
	"github.com/kopf-go/kopf/runtime/kwargs"
	"github.com/kopf-go/kopf/runtime/resources"
)

// IndexFn is the function behind an index together with the index it
// writes (package indexing's adapters make one of an index function and
// its index).
type IndexFn interface {
	// Index calls the index function with kw and makes its result the
	// whole contribution of the object obj (its "namespace/name") to the
	// index; if it returns nothing (Kopf's None), or fails, the index is
	// left as it is.
	Index(ctx context.Context, kw *kwargs.Index, obj string) error
	// Discard removes the object's contribution from the index.
	Discard(obj string)
}

// IndexHandler is one index (Kopf's @kopf.index): a function called on
// every watch event of every object of a resource that matches the
// filters, whose results make an in-memory index given to every handler.
type IndexHandler struct {
	// ID is the index's identity, unique per resource among indices.
	ID       string
	Selector resources.Selector
	Fn       IndexFn
	Param    any
	// Errors says what an arbitrary error does, as Kopf's errors= of
	// indices: ErrorsIgnored ("", the default of indices) logs it and
	// keeps the object's values (stale) until its next event;
	// ErrorsPermanent (and any PermanentError) removes the object's values
	// and excludes the object from the index while it exists;
	// ErrorsTemporary (and any TemporaryError) removes them and excludes
	// the object for Backoff (or the error's delay), after which its next
	// event indexes it again, until Retries or Timeout make the exclusion
	// permanent. Nothing is retried without an event.
	Errors  ErrorsMode
	Timeout time.Duration
	Retries int
	Backoff time.Duration
	// Field, Filter and When restrict the objects indexed, as for event
	// handlers: an object that stops matching leaves the index.
	Field  []string
	Filter filters.Filter
	When   func(kw *kwargs.Index) bool
}

// HasCallbacks reports whether selecting the index calls user code: a
// when= callback or a callback filter.
func (h *IndexHandler) HasCallbacks() bool {
	return h.When != nil || h.Filter.HasCallbacks()
}

// AddIndex registers an index.
func (r *Registry) AddIndex(h IndexHandler) error {
	if h.ID == "" {
		return fmt.Errorf("index has no id")
	}
	if h.Fn == nil {
		return fmt.Errorf("index %q has no function", h.ID)
	}
	for _, other := range r.indices {
		if other.ID == h.ID && other.Selector == h.Selector {
			return fmt.Errorf("index %q is registered twice for %s", h.ID, h.Selector)
		}
	}
	r.indices = append(r.indices, &h)
	return nil
}

// IndexHandlers returns the indices of a resource, in registration order.
func (r *Registry) IndexHandlers(res resources.Resource) []*IndexHandler {
	var out []*IndexHandler
	for _, h := range r.indices {
		if h.Selector.Matches(res) {
			out = append(out, h)
		}
	}
	return out
}

// HasIndices reports whether the registry has any index: then handlers
// wait until the first listing of every indexed resource is indexed.
func (r *Registry) HasIndices() bool { return len(r.indices) > 0 }

// HasHandlers reports whether any handler other than an index serves the
// resource: changing and event handlers, daemons, timers. A resource with
// indices only is watched for them, and its objects need no workers.
func (r *Registry) HasHandlers(res resources.Resource) bool {
	return r.HasChanging(res) || r.HasSpawning(res) || len(r.EventHandlers(res)) > 0
}

// IndexWhen adapts a when= callback of an index of the body-only kwargs.
func IndexWhen(fn func(kwargs.Index) bool) func(*kwargs.Index) bool {
	return func(kw *kwargs.Index) bool { return fn(*kw) }
}

// TypedIndexWhen adapts a when= callback of an index of a resource of Go
// type T.
func TypedIndexWhen[T any](fn func(kwargs.TypedIndex[T]) bool) func(*kwargs.Index) bool {
	return func(kw *kwargs.Index) bool {
		typed, err := kwargs.DecodeIndex[T](kw)
		if err != nil {
			return true // the index function runs and reports the decoding error
		}
		return fn(typed)
	}
}
