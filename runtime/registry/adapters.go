package registry

import (
	"context"
	"reflect"
	"time"

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

// AnyResult adapts a handler that returns a result of a type of its own
// (an int of a probe, a *Greeting of a changing handler) to the form that
// returns any. A nil pointer, map, slice or interface is no result (Kopf's
// None: nothing is stored), not a typed nil.
func AnyResult[K, T any](fn func(context.Context, K) (T, error)) func(context.Context, K) (any, error) {
	return func(ctx context.Context, kw K) (any, error) {
		v, err := fn(ctx, kw)
		if rv := reflect.ValueOf(&v).Elem(); !rv.IsValid() || isNil(rv) {
			return nil, err
		}
		return v, err
	}
}

// isNil reports whether v is a nil of a kind that can be.
func isNil(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Interface, reflect.Func, reflect.Chan:
		return v.IsNil()
	}
	return false
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

// DaemonFunc adapts a daemon of the body-only kwargs.
func DaemonFunc(fn func(context.Context, kwargs.Daemon) (any, error)) DaemonFn {
	return func(ctx context.Context, kw *kwargs.Daemon) (any, error) { return fn(ctx, *kw) }
}

// TypedDaemonFunc adapts a daemon of a resource of Go type T: the object
// is decoded on every call; one that does not decode as T is the daemon's
// error.
func TypedDaemonFunc[T any](fn func(context.Context, kwargs.TypedDaemon[T]) (any, error)) DaemonFn {
	return func(ctx context.Context, kw *kwargs.Daemon) (any, error) {
		typed, err := kwargs.DecodeDaemon[T](kw)
		if err != nil {
			return nil, err
		}
		return fn(ctx, typed)
	}
}

// TimerFunc adapts a timer of the body-only kwargs.
func TimerFunc(fn func(context.Context, kwargs.Timer) (any, error)) TimerFn {
	return func(ctx context.Context, kw *kwargs.Timer) (any, error) { return fn(ctx, *kw) }
}

// TypedTimerFunc adapts a timer of a resource of Go type T.
func TypedTimerFunc[T any](fn func(context.Context, kwargs.TypedTimer[T]) (any, error)) TimerFn {
	return func(ctx context.Context, kw *kwargs.Timer) (any, error) {
		typed, err := kwargs.DecodeTimer[T](kw)
		if err != nil {
			return nil, err
		}
		return fn(ctx, typed)
	}
}

// DaemonWhen adapts a when= callback of a daemon of the body-only kwargs.
func DaemonWhen(fn func(kwargs.Daemon) bool) func(*kwargs.Daemon) bool {
	return func(kw *kwargs.Daemon) bool { return fn(*kw) }
}

// TypedDaemonWhen adapts a when= callback of a daemon of a resource of Go
// type T.
func TypedDaemonWhen[T any](fn func(kwargs.TypedDaemon[T]) bool) func(*kwargs.Daemon) bool {
	return func(kw *kwargs.Daemon) bool {
		typed, err := kwargs.DecodeDaemon[T](kw)
		if err != nil {
			return true // the daemon runs and reports the decoding error
		}
		return fn(typed)
	}
}

// DaemonDelay adapts an initial_delay=fn:F callback of a daemon of the
// body-only kwargs.
func DaemonDelay(fn func(kwargs.Daemon) time.Duration) func(*kwargs.Daemon) time.Duration {
	return func(kw *kwargs.Daemon) time.Duration { return fn(*kw) }
}

// TypedDaemonDelay adapts an initial_delay=fn:F callback of a daemon of a
// resource of Go type T.
func TypedDaemonDelay[T any](fn func(kwargs.TypedDaemon[T]) time.Duration) func(*kwargs.Daemon) time.Duration {
	return func(kw *kwargs.Daemon) time.Duration {
		typed, err := kwargs.DecodeDaemon[T](kw)
		if err != nil {
			return 0 // the daemon runs at once and reports the decoding error
		}
		return fn(typed)
	}
}

// TimerDelay adapts an initial_delay=fn:F callback of a timer of the
// body-only kwargs.
func TimerDelay(fn func(kwargs.Timer) time.Duration) func(*kwargs.Timer) time.Duration {
	return func(kw *kwargs.Timer) time.Duration { return fn(*kw) }
}

// TypedTimerDelay adapts an initial_delay=fn:F callback of a timer of a
// resource of Go type T.
func TypedTimerDelay[T any](fn func(kwargs.TypedTimer[T]) time.Duration) func(*kwargs.Timer) time.Duration {
	return func(kw *kwargs.Timer) time.Duration {
		typed, err := kwargs.DecodeTimer[T](kw)
		if err != nil {
			return 0 // the timer runs at once and reports the decoding error
		}
		return fn(typed)
	}
}

// TimerWhen adapts a when= callback of a timer of the body-only kwargs.
func TimerWhen(fn func(kwargs.Timer) bool) func(*kwargs.Timer) bool {
	return func(kw *kwargs.Timer) bool { return fn(*kw) }
}

// TypedTimerWhen adapts a when= callback of a timer of a resource of Go
// type T.
func TypedTimerWhen[T any](fn func(kwargs.TypedTimer[T]) bool) func(*kwargs.Timer) bool {
	return func(kw *kwargs.Timer) bool {
		typed, err := kwargs.DecodeTimer[T](kw)
		if err != nil {
			return true // the timer runs and reports the decoding error
		}
		return fn(typed)
	}
}
