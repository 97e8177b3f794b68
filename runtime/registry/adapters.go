package registry

import (
	"context"

	"github.com/kopf-go/kopf/runtime/kwargs"
)

// The adapters below turn a handler or a when= callback written against a
// kwargs type of package kwargs into the registry's functions, which take
// the reactor's body-only kwargs by pointer. Generated Register functions
// use them (one call per handler, no code per handler); code written by
// hand and sub-handlers may too. The typed ones decode the object once per
// cycle (kwargs.DecodeChanging): a body that does not decode as T is the
// handler's error, and makes a when= callback match, so that the handler
// runs and reports it.

// NoResult adapts a handler that returns only an error to the form that
// returns a result too (always nil: nothing is stored in status).
func NoResult[K any](fn func(context.Context, K) error) func(context.Context, K) (any, error) {
	return func(ctx context.Context, kw K) (any, error) { return nil, fn(ctx, kw) }
}

// ChangingFunc adapts a changing handler of the body-only kwargs.
func ChangingFunc(fn func(context.Context, kwargs.Changing) (any, error)) ChangingFn {
	return func(ctx context.Context, kw *kwargs.Changing) (any, error) { return fn(ctx, *kw) }
}

// TypedChangingFunc adapts a changing handler of a resource of Go type T.
func TypedChangingFunc[T any](fn func(context.Context, kwargs.TypedChanging[T]) (any, error)) ChangingFn {
	return func(ctx context.Context, kw *kwargs.Changing) (any, error) {
		typed, err := kwargs.DecodeChanging[T](kw)
		if err != nil {
			return nil, err
		}
		return fn(ctx, typed)
	}
}

// EventFunc adapts an event-watching handler of the body-only kwargs.
func EventFunc(fn func(context.Context, kwargs.Event) error) EventFn {
	return func(ctx context.Context, kw *kwargs.Event) error { return fn(ctx, *kw) }
}

// TypedEventFunc adapts an event-watching handler of a resource of Go type
// T.
func TypedEventFunc[T any](fn func(context.Context, kwargs.TypedEvent[T]) error) EventFn {
	return func(ctx context.Context, kw *kwargs.Event) error {
		typed, err := kwargs.DecodeEvent[T](kw)
		if err != nil {
			return err
		}
		return fn(ctx, typed)
	}
}

// ChangingWhen adapts a when= callback of the body-only kwargs.
func ChangingWhen(fn func(kwargs.Changing) bool) func(*kwargs.Changing) bool {
	return func(kw *kwargs.Changing) bool { return fn(*kw) }
}

// TypedChangingWhen adapts a when= callback of a resource of Go type T.
func TypedChangingWhen[T any](fn func(kwargs.TypedChanging[T]) bool) func(*kwargs.Changing) bool {
	return func(kw *kwargs.Changing) bool {
		typed, err := kwargs.DecodeChanging[T](kw)
		if err != nil {
			return true // the handler runs and reports the decoding error
		}
		return fn(typed)
	}
}

// EventWhen adapts a when= callback of the body-only event kwargs.
func EventWhen(fn func(kwargs.Event) bool) func(*kwargs.Event) bool {
	return func(kw *kwargs.Event) bool { return fn(*kw) }
}

// TypedEventWhen adapts a when= callback of an event handler of a resource
// of Go type T.
func TypedEventWhen[T any](fn func(kwargs.TypedEvent[T]) bool) func(*kwargs.Event) bool {
	return func(kw *kwargs.Event) bool {
		typed, err := kwargs.DecodeEvent[T](kw)
		if err != nil {
			return true // the handler runs and reports the decoding error
		}
		return fn(typed)
	}
}
