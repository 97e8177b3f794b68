package kopf

import (
	"context"

	"github.com/kopf-go/kopf/runtime/registry"
)

// The adapters of handlers and when= callbacks to the registry's functions
// (see runtime/registry): generated Register functions use them, and so
// may code written by hand and sub-handlers registered with options:
//
//	kopf.Subhandler(ctx, kopf.ChangingHandler{
//		ID:      item,
//		Fn:      kopf.TypedChangingFunc(kopf.NoResult(fn)),
//		Retries: 3,
//	})

// SubhandlerFunc registers fn as a sub-handler of the changing handler
// running with ctx (Kopf's @kopf.subhandler(id=...)), under the id
// "<parent id>/<id>", with the body-only kwargs, ChangingKwargs: a
// handler's CreateFnKwargs is an alias of it unless the handler is typed
// or its package has indices (then a sub-handler takes ChangingKwargs;
// for typed kwargs, use Subhandler with TypedChangingFunc).
//
//	for _, item := range items {
//		err := kopf.SubhandlerFunc(ctx, item, func(ctx context.Context, kw CreateFnKwargs) error {
//			kw.Logger.Info("handling " + item)
//			return nil
//		})
//	}
//
// For a result to store in status.<parent id>/<id>, or for options
// (retries, timeout, ...), use Subhandler with ChangingFunc.
func SubhandlerFunc(ctx context.Context, id string, fn func(context.Context, ChangingKwargs) error) error {
	return registry.Subhandler(ctx, registry.ChangingHandler{ID: id, Fn: registry.ChangingFunc(registry.NoResult(fn))})
}

// TypedSubhandlerFunc registers fn as a sub-handler of the changing handler
// of a resource of Go type T running with ctx, as SubhandlerFunc does: it
// gets the parent's typed kwargs, with the object decoded once per cycle
// for the parent and all its sub-handlers.
func TypedSubhandlerFunc[T any](ctx context.Context, id string, fn func(context.Context, TypedChangingKwargs[T]) error) error {
	return registry.Subhandler(ctx, registry.ChangingHandler{ID: id, Fn: registry.TypedChangingFunc(registry.NoResult(fn))})
}

// NoResult adapts a handler that returns only an error to the form that
// returns a result too (nil: nothing is stored in status).
func NoResult[K any](fn func(context.Context, K) error) func(context.Context, K) (any, error) {
	return registry.NoResult(fn)
}

// AnyResult adapts a handler that returns a result of its own type, (T,
// error), to the form that returns any; a nil pointer, map or slice is no
// result.
func AnyResult[K, T any](fn func(context.Context, K) (T, error)) func(context.Context, K) (any, error) {
	return registry.AnyResult(fn)
}

// ChangingFunc adapts a changing handler of ChangingKwargs.
func ChangingFunc(fn func(context.Context, ChangingKwargs) (any, error)) ChangingFn {
	return registry.ChangingFunc(fn)
}

// TypedChangingFunc adapts a changing handler of a resource of Go type T:
// the object is decoded once per cycle; one that does not decode as T is
// the handler's error.
func TypedChangingFunc[T any](fn func(context.Context, TypedChangingKwargs[T]) (any, error)) ChangingFn {
	return registry.TypedChangingFunc(fn)
}

// EventFunc adapts an event-watching handler of EventKwargs.
func EventFunc(fn func(context.Context, EventKwargs) error) EventFn {
	return registry.EventFunc(fn)
}

// TypedEventFunc adapts an event-watching handler of a resource of Go type
// T.
func TypedEventFunc[T any](fn func(context.Context, TypedEventKwargs[T]) error) EventFn {
	return registry.TypedEventFunc(fn)
}

// DaemonFunc adapts a daemon of DaemonKwargs.
func DaemonFunc(fn func(context.Context, DaemonKwargs) (any, error)) DaemonFn {
	return registry.DaemonFunc(fn)
}

// TypedDaemonFunc adapts a daemon of a resource of Go type T: the object is
// decoded on every call; one that does not decode as T is the daemon's
// error.
func TypedDaemonFunc[T any](fn func(context.Context, TypedDaemonKwargs[T]) (any, error)) DaemonFn {
	return registry.TypedDaemonFunc(fn)
}

// TimerFunc adapts a timer of TimerKwargs.
func TimerFunc(fn func(context.Context, TimerKwargs) (any, error)) TimerFn {
	return registry.TimerFunc(fn)
}

// TypedTimerFunc adapts a timer of a resource of Go type T.
func TypedTimerFunc[T any](fn func(context.Context, TypedTimerKwargs[T]) (any, error)) TimerFn {
	return registry.TypedTimerFunc(fn)
}
