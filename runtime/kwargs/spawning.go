package kwargs

import (
	"context"
	"time"

	"github.com/kopf-go/kopf/runtime/body"
)

// StopReason says why a daemon or timer is asked to stop: it is the cause
// (context.Cause) of Daemon.Stopped and of the context a daemon or timer
// runs with. It is an error so that it can be a context's cause; compare
// with errors.Is or ==.
type StopReason struct{ reason string }

// Error returns the reason in words.
func (r *StopReason) Error() string { return r.reason }

// The reasons a daemon or timer is stopped for, as Kopf's
// DaemonStoppingReason.
var (
	// StopDeleted: the object is being deleted (or is gone).
	StopDeleted = &StopReason{"the object is deleted"}
	// StopFiltersMismatch: the object no longer matches the handler's
	// filters (labels=, annotations=, value=, when=); the handler starts
	// again when it matches again.
	StopFiltersMismatch = &StopReason{"the object no longer matches the filters"}
	// StopOperatorPausing: the operator pauses (peering); the handler
	// starts again when the operator resumes.
	StopOperatorPausing = &StopReason{"the operator is pausing"}
	// StopOperatorExiting: the operator exits.
	StopOperatorExiting = &StopReason{"the operator is exiting"}
)

// Daemon are the arguments of a daemon (Kopf's @kopf.daemon), in the
// body-only form: the resource kwargs, the handler's param, Kopf's retry,
// started and runtime, and the stopped flag.
//
// Body (and Spec, Meta, Status, Labels, ...) is the object as last seen
// when the invocation started (a retry gets a fresh one). A daemon that
// runs for long reads the latest state with Latest.
type Daemon struct {
	Base
	// Param is the handler's param= option, as registered.
	Param any
	// Retry counts the previous failed attempts.
	Retry int
	// Started is when the first attempt began.
	Started time.Time
	// Runtime is how long the attempts have run so far.
	Runtime time.Duration
	// Stopped is done when the daemon must stop; context.Cause(Stopped) is
	// a *StopReason saying why (StopDeleted, StopFiltersMismatch,
	// StopOperatorPausing, StopOperatorExiting). It is done at the same
	// time as the daemon's ctx or earlier (when cancellation_backoff gives
	// the daemon time to exit on its own before its ctx is cancelled). Nil
	// in kwargs built by hand.
	Stopped context.Context
	// Latest returns the object as last seen by the operator, a copy of
	// the caller's own; nil in kwargs built by hand.
	Latest func() body.Body
}

// Timer are the arguments of a timer (Kopf's @kopf.timer), in the
// body-only form: the resource kwargs, the handler's param, Kopf's retry,
// started and runtime, and the stopped flag. Body is the object as last
// seen when the tick began.
type Timer struct {
	Base
	// Param is the handler's param= option, as registered.
	Param any
	// Retry counts the previous failed attempts since the last success
	// (every tick after a success starts from 0).
	Retry int
	// Started is when the first attempt of this series began.
	Started time.Time
	// Runtime is how long the attempts of this series have run so far.
	Runtime time.Duration
	// Stopped is done when the timer must stop, with a *StopReason as its
	// cause, as Daemon.Stopped. Nil in kwargs built by hand.
	Stopped context.Context
}

// TypedDaemon are the arguments of a daemon of a resource whose objects
// are of the Go type T: every kwarg of Daemon, and the object decoded as
// T.
type TypedDaemon[T any] struct {
	Daemon
	// Object is the body decoded as a T.
	Object *T
}

// TypedTimer are the arguments of a timer of a resource whose objects are
// of the Go type T: every kwarg of Timer, and the object decoded as T.
type TypedTimer[T any] struct {
	Timer
	// Object is the body decoded as a T.
	Object *T
}

// DecodeDaemon returns kw in the typed form for T. Daemons' kwargs are
// built once per invocation, so the body is decoded on every call; an
// error means that it does not decode as T.
func DecodeDaemon[T any](kw *Daemon) (TypedDaemon[T], error) {
	out := TypedDaemon[T]{Daemon: *kw}
	var err error
	out.Object, err = decode[T](kw.decoded, 0, kw.Body)
	return out, err
}

// DecodeTimer returns kw in the typed form for T, as DecodeDaemon.
func DecodeTimer[T any](kw *Timer) (TypedTimer[T], error) {
	out := TypedTimer[T]{Timer: *kw}
	var err error
	out.Object, err = decode[T](kw.decoded, 0, kw.Body)
	return out, err
}
