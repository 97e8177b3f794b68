package registry

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/kopf-go/kopf/runtime/body"
	"github.com/kopf-go/kopf/runtime/filters"
	"github.com/kopf-go/kopf/runtime/kwargs"
	"github.com/kopf-go/kopf/runtime/resources"
)

// ReconcileResult is what a reconcile handler asks for after a success.
// The zero value asks for nothing beyond the handler's Resync.
type ReconcileResult struct {
	// RequeueAfter runs the handler again after this long (0: not
	// requested). The earliest of RequeueAfter and Resync wins; any change
	// of the object runs it earlier.
	RequeueAfter time.Duration
}

// ReconcileFn is the function behind a reconcile handler. An error is
// retried with backoff (every error: there is no permanent failure of a
// level-triggered handler, the next change runs it again anyway).
type ReconcileFn func(ctx context.Context, kw *kwargs.Reconcile) (ReconcileResult, error)

// MapFn maps a watched object to the objects of the reconciled resource
// that must be reconciled because of it (controller-runtime's
// handler.MapFunc). An object of the reconciled resource that does not
// exist is skipped.
type MapFn func(ctx context.Context, obj body.Body) []types.NamespacedName

// Watch is another resource whose objects' changes run a reconcile
// handler (controller-runtime's Watches).
type Watch struct {
	Selector resources.Selector
	// Map finds the objects to reconcile. Nil: the watched object's
	// controller ownerReference, as for Owns.
	Map MapFn
}

// The defaults of a reconcile handler's backoff after errors: the first
// retry after DefaultReconcileBackoff, doubling up to
// MaxReconcileBackoff (controller-runtime's default rate limiter starts at
// 5ms and caps at 1000s; a Kubernetes operator gains nothing from retries
// faster than a second, and waits no longer than 5 minutes).
const (
	DefaultReconcileBackoff = time.Second
	MaxReconcileBackoff     = 5 * time.Minute
)

// ReconcileHandler is one level-triggered handler (on.reconcile): a
// function called with the current object whenever it changes, at the
// operator's start, every Resync, after a requested RequeueAfter, after an
// error (with backoff), and when an owned child or a watched object
// changes. It gets no cause and no diff, and nothing of its progress is
// stored on the object. It runs in the object's processing cycle, after
// Kopf's handlers (see docs/reconcile.md).
type ReconcileHandler struct {
	// ID names the handler in logs and metrics. Unique per resource among
	// reconcile handlers.
	ID       string
	Selector resources.Selector
	Fn       ReconcileFn
	// Filter holds the labels= and annotations= filters (Value, Old and
	// New do not apply: a reconcile handler has no field).
	Filter filters.Filter
	// When is the when= callback; nil matches everything.
	When  func(kw *kwargs.Reconcile) bool
	Param any
	// Resync runs the handler again this long after its last run (0:
	// never, only on changes).
	Resync time.Duration
	// Finalize holds Kopf's finalizer on the objects served, so that
	// deletion waits: Fn is called with Deleting=true until it returns nil,
	// then the finalizer is released (unless an on.delete handler still
	// needs it). Without Finalize, a deleted object is not reconciled.
	Finalize bool
	// Backoff is the first retry's delay after an error, doubled on every
	// further error up to MaxReconcileBackoff (0: DefaultReconcileBackoff);
	// a success resets it.
	Backoff time.Duration
	// Owns are the children's resources: a change of a child (its status
	// included, and its deletion) runs the handler for the owner named by
	// the child's controller ownerReference.
	Owns []resources.Selector
	// Watches are other resources whose changes run the handler for the
	// objects their Map returns.
	Watches []Watch
}

// HasCallbacks reports whether selecting the handler calls user code: a
// when= callback or a callback filter.
func (h *ReconcileHandler) HasCallbacks() bool {
	return h.When != nil || h.Filter.HasCallbacks()
}

// AddReconcile registers a reconcile handler.
func (r *Registry) AddReconcile(h ReconcileHandler) error {
	if h.ID == "" {
		return fmt.Errorf("reconcile handler has no id")
	}
	if h.Fn == nil {
		return fmt.Errorf("reconcile handler %q has no function", h.ID)
	}
	if h.Resync < 0 || h.Backoff < 0 {
		return fmt.Errorf("reconcile handler %q: resync and backoff must not be negative", h.ID)
	}
	if h.Filter.Value != nil || h.Filter.Old != nil || h.Filter.New != nil {
		return fmt.Errorf("reconcile handler %q: value=, old= and new= filters need a field, which reconcile handlers have not", h.ID)
	}
	for _, w := range h.Watches {
		if w.Selector == (resources.Selector{}) {
			return fmt.Errorf("reconcile handler %q watches a resource without a selector", h.ID)
		}
	}
	for _, other := range r.reconcile {
		if other.ID == h.ID && other.Selector == h.Selector {
			return fmt.Errorf("reconcile handler %q is registered twice for %s", h.ID, h.Selector)
		}
	}
	r.reconcile = append(r.reconcile, &h)
	return nil
}

// ReconcileHandlers returns the reconcile handlers of a resource, in
// registration order.
func (r *Registry) ReconcileHandlers(res resources.Resource) []*ReconcileHandler {
	var out []*ReconcileHandler
	for _, h := range r.reconcile {
		if h.Selector.Matches(res) {
			out = append(out, h)
		}
	}
	return out
}

// HasReconcile reports whether any reconcile handler serves the resource.
func (r *Registry) HasReconcile(res resources.Resource) bool {
	return len(r.ReconcileHandlers(res)) > 0
}

// ReconcileFinalizes reports whether a reconcile handler of the resource holds the
// finalizer (Finalize).
func (r *Registry) ReconcileFinalizes(res resources.Resource) bool {
	for _, h := range r.ReconcileHandlers(res) {
		if h.Finalize {
			return true
		}
	}
	return false
}

// ReconcileAll returns every reconcile handler, in registration order:
// the operator starts the watches of their Owns and Watches.
func (r *Registry) ReconcileAll() []*ReconcileHandler {
	return append([]*ReconcileHandler(nil), r.reconcile...)
}

// ReconcileFunc adapts a reconcile handler of the body-only kwargs.
func ReconcileFunc(fn func(context.Context, kwargs.Reconcile) (ReconcileResult, error)) ReconcileFn {
	return func(ctx context.Context, kw *kwargs.Reconcile) (ReconcileResult, error) { return fn(ctx, *kw) }
}

// TypedReconcileFunc adapts a reconcile handler of a resource of Go type
// T: the object is decoded once per run; one that does not decode as T is
// the handler's error.
func TypedReconcileFunc[T any](fn func(context.Context, kwargs.TypedReconcile[T]) (ReconcileResult, error)) ReconcileFn {
	return func(ctx context.Context, kw *kwargs.Reconcile) (ReconcileResult, error) {
		typed, err := kwargs.DecodeReconcile[T](kw)
		if err != nil {
			return ReconcileResult{}, err
		}
		return fn(ctx, typed)
	}
}

// ReconcileOnlyError adapts a reconcile handler that returns only an
// error to the form that returns a result too (the zero result: no
// requeue beyond the resync).
func ReconcileOnlyError[K any](fn func(context.Context, K) error) func(context.Context, K) (ReconcileResult, error) {
	return func(ctx context.Context, kw K) (ReconcileResult, error) { return ReconcileResult{}, fn(ctx, kw) }
}

// ReconcileWhen adapts a when= callback of the body-only kwargs.
func ReconcileWhen(fn func(kwargs.Reconcile) bool) func(*kwargs.Reconcile) bool {
	return func(kw *kwargs.Reconcile) bool { return fn(*kw) }
}

// TypedReconcileWhen adapts a when= callback of a reconcile handler of a
// resource of Go type T.
func TypedReconcileWhen[T any](fn func(kwargs.TypedReconcile[T]) bool) func(*kwargs.Reconcile) bool {
	return func(kw *kwargs.Reconcile) bool {
		typed, err := kwargs.DecodeReconcile[T](kw)
		if err != nil {
			return true // the handler runs and reports the decoding error
		}
		return fn(typed)
	}
}
