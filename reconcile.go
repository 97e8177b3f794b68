package kopf

import (
	"context"

	"github.com/kopf-go/kopf/runtime/kwargs"
	"github.com/kopf-go/kopf/runtime/registry"
)

// Level-triggered handlers (on.reconcile; see docs/reconcile.md).
type (
	// ReconcileHandler is a reconcile handler's registration.
	ReconcileHandler = registry.ReconcileHandler
	// ReconcileFn is the function behind a reconcile handler.
	ReconcileFn = registry.ReconcileFn
	// ReconcileResult is what a reconcile handler asks for after a
	// success: RequeueAfter, or nothing (the zero value).
	ReconcileResult = registry.ReconcileResult
	// ReconcileKwargs are the arguments of a reconcile handler of a
	// resource without a Go type (the body-only form).
	ReconcileKwargs = kwargs.Reconcile
	// Watch is another resource whose changes run a reconcile handler for
	// the objects its Map returns (controller-runtime's Watches).
	Watch = registry.Watch
	// MapFn maps a watched object to the objects to reconcile.
	MapFn = registry.MapFn
)

// TypedReconcileKwargs are the arguments of a reconcile handler of a
// resource whose objects are of the Go type T: every kwarg of
// ReconcileKwargs, with Object decoded as T.
type TypedReconcileKwargs[T any] = kwargs.TypedReconcile[T]

// ReconcileFunc adapts a reconcile handler of ReconcileKwargs.
func ReconcileFunc(fn func(context.Context, ReconcileKwargs) (ReconcileResult, error)) ReconcileFn {
	return registry.ReconcileFunc(fn)
}

// TypedReconcileFunc adapts a reconcile handler of a resource of Go type
// T: the object is decoded once per run; one that does not decode as T is
// the handler's error (retried with backoff).
func TypedReconcileFunc[T any](fn func(context.Context, TypedReconcileKwargs[T]) (ReconcileResult, error)) ReconcileFn {
	return registry.TypedReconcileFunc(fn)
}

// ReconcileOnlyError adapts a reconcile handler that returns only an error
// to the form that returns a ReconcileResult too (the zero one).
func ReconcileOnlyError[K any](fn func(context.Context, K) error) func(context.Context, K) (ReconcileResult, error) {
	return registry.ReconcileOnlyError(fn)
}
