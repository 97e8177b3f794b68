package registry

import (
	"context"
	"fmt"
	"time"

	"github.com/kopf-go/kopf/runtime/filters"
	"github.com/kopf-go/kopf/runtime/kwargs"
	"github.com/kopf-go/kopf/runtime/resources"
)

// DaemonFn is the function behind a daemon. It runs for as long as it
// wants to: until its object is deleted, stops matching the filters, or
// the operator pauses or exits, it is told so through kw.Stopped and ctx.
// Its result, if not nil, is stored into status.<handler id>; a daemon
// that returns (with a nil error, or a permanent one) is not restarted.
type DaemonFn func(ctx context.Context, kw *kwargs.Daemon) (any, error)

// TimerFn is the function behind a timer, called every Interval (and/or
// after Idle) while the object exists and matches the filters. Its result,
// if not nil, is stored into status.<handler id>.
type TimerFn func(ctx context.Context, kw *kwargs.Timer) (any, error)

// DaemonHandler is one daemon (Kopf's @kopf.daemon): a function that runs
// in the background for every object of a resource that matches the
// filters, one per object, from when the object appears (or the operator
// starts) until it is deleted, stops matching, or the operator exits. The
// object keeps the operator's finalizer while the daemon runs.
type DaemonHandler struct {
	// ID is the handler's identity: the key of its result in status.
	// Unique per resource among daemons and timers.
	ID       string
	Selector resources.Selector
	Fn       DaemonFn
	Param    any
	// Errors, Timeout, Retries and Backoff say how errors are retried, as
	// for changing handlers (0 means unlimited, or the settings' default
	// backoff).
	Errors  ErrorsMode
	Timeout time.Duration
	Retries int
	Backoff time.Duration
	// Field and Filter restrict the objects served: labels=, annotations=,
	// and value= (the value at Field). When is the when= callback; nil
	// matches everything. They are checked on every change of the object:
	// a daemon stops when they stop matching and starts when they match.
	Field  []string
	Filter filters.Filter
	When   func(kw *kwargs.Daemon) bool

	// InitialDelay is how long to wait before the first call (0: none).
	InitialDelay time.Duration
	// InitialDelayFn, if set, computes the initial delay instead (Kopf's
	// initial_delay= as a function): called once per start of the daemon
	// for an object, with the object's kwargs; a negative result is 0.
	InitialDelayFn func(kw *kwargs.Daemon) time.Duration
	// CancellationBackoff is how long the daemon is given to exit on its
	// own after kw.Stopped is done and before its ctx is cancelled (0:
	// ctx is cancelled at once, with kw.Stopped).
	CancellationBackoff time.Duration
	// CancellationTimeout is how long the daemon is given to exit after
	// its ctx is cancelled before the operator gives up on it: the object
	// is released (its finalizer removed) and the daemon left orphaned,
	// with Kopf's warning. 0: the settings' default
	// (Background.CancellationTimeout); negative: wait forever for a
	// deleted object, as Kopf does with no cancellation_timeout.
	CancellationTimeout time.Duration
	// CancellationPolling is Kopf's cancellation_polling: how often a
	// stopping daemon is checked. The runtime learns of a daemon's exit at
	// once, so it only paces the log line "... is still exiting" (0: the
	// settings' default).
	CancellationPolling time.Duration
}

// TimerHandler is one timer (Kopf's @kopf.timer): a function called
// periodically for every object of a resource that matches the filters,
// one schedule per object.
type TimerHandler struct {
	// ID is the handler's identity: the key of its result in status.
	// Unique per resource among daemons and timers.
	ID       string
	Selector resources.Selector
	Fn       TimerFn
	Param    any
	// Errors, Timeout, Retries and Backoff say how errors are retried, as
	// for changing handlers. A failed tick is retried after its backoff
	// instead of the interval.
	Errors  ErrorsMode
	Timeout time.Duration
	Retries int
	Backoff time.Duration
	// Field, Filter and When restrict the objects served, as for daemons.
	Field  []string
	Filter filters.Filter
	When   func(kw *kwargs.Timer) bool

	// Interval is the time between calls: from the end of one to the start
	// of the next, or with Sharp from the start of one to the start of the
	// next (a grid: a slow call skips the ticks it overlaps). 0: no
	// interval (with Idle: once per quiet period after each change;
	// without: once per object, Kopf's one-shot timer).
	Interval time.Duration
	// Idle is how long the object must be unchanged (its essence: spec,
	// labels, annotations, ... but not status) before a call.
	Idle time.Duration
	// Sharp keeps the calls on a grid of Interval.
	Sharp bool
	// InitialDelay is how long to wait before the first call (0: none).
	InitialDelay time.Duration
	// InitialDelayFn, if set, computes the initial delay instead, as for
	// daemons.
	InitialDelayFn func(kw *kwargs.Timer) time.Duration
}

func checkSpawning(kind, id string, hasFn bool, errs ErrorsMode, timeout time.Duration, retries int, backoff time.Duration, others []string) error {
	if id == "" {
		return fmt.Errorf("%s has no id", kind)
	}
	if !hasFn {
		return fmt.Errorf("%s %q has no function", kind, id)
	}
	switch errs {
	case "", ErrorsTemporary, ErrorsPermanent, ErrorsIgnored:
	default:
		return fmt.Errorf("%s %q: errors=%q is none of temporary, permanent, ignored", kind, id, errs)
	}
	if timeout < 0 || retries < 0 || backoff < 0 {
		return fmt.Errorf("%s %q: timeout, retries and backoff must not be negative", kind, id)
	}
	for _, other := range others {
		if other == id {
			return fmt.Errorf("%s %q: the id is taken by another daemon or timer of the resource", kind, id)
		}
	}
	return nil
}

// spawningIDs returns the ids of the daemons and timers of a selector.
func (r *Registry) spawningIDs(sel resources.Selector) []string {
	var out []string
	for _, h := range r.daemons {
		if h.Selector == sel {
			out = append(out, h.ID)
		}
	}
	for _, h := range r.timers {
		if h.Selector == sel {
			out = append(out, h.ID)
		}
	}
	return out
}

// AddDaemon registers a daemon. An id must be unique per resource among
// its daemons and timers (both store their results in status.<id>).
func (r *Registry) AddDaemon(h DaemonHandler) error {
	if err := checkSpawning("daemon", h.ID, h.Fn != nil, h.Errors, h.Timeout, h.Retries, h.Backoff, r.spawningIDs(h.Selector)); err != nil {
		return err
	}
	if h.InitialDelay < 0 || h.CancellationBackoff < 0 || h.CancellationPolling < 0 {
		return fmt.Errorf("daemon %q: initial_delay, cancellation_backoff and cancellation_polling must not be negative", h.ID)
	}
	r.daemons = append(r.daemons, &h)
	return nil
}

// AddTimer registers a timer. An id must be unique per resource among its
// daemons and timers. A timer with neither an Interval nor an Idle is
// Kopf's one-shot timer: it is called once per object (retried until it
// succeeds or fails for good) and never again, as a daemon that returns.
func (r *Registry) AddTimer(h TimerHandler) error {
	if err := checkSpawning("timer", h.ID, h.Fn != nil, h.Errors, h.Timeout, h.Retries, h.Backoff, r.spawningIDs(h.Selector)); err != nil {
		return err
	}
	if h.Interval < 0 || h.Idle < 0 || h.InitialDelay < 0 {
		return fmt.Errorf("timer %q: interval, idle and initial_delay must not be negative", h.ID)
	}
	if h.Sharp && h.Interval == 0 {
		return fmt.Errorf("timer %q is sharp without an interval: give it interval= or drop sharp", h.ID)
	}
	r.timers = append(r.timers, &h)
	return nil
}

// DaemonHandlers returns the daemons of a resource, in registration order.
func (r *Registry) DaemonHandlers(res resources.Resource) []*DaemonHandler {
	var out []*DaemonHandler
	for _, h := range r.daemons {
		if h.Selector.Matches(res) {
			out = append(out, h)
		}
	}
	return out
}

// TimerHandlers returns the timers of a resource, in registration order.
func (r *Registry) TimerHandlers(res resources.Resource) []*TimerHandler {
	var out []*TimerHandler
	for _, h := range r.timers {
		if h.Selector.Matches(res) {
			out = append(out, h)
		}
	}
	return out
}

// HasSpawning reports whether any daemon or timer serves the resource.
func (r *Registry) HasSpawning(res resources.Resource) bool {
	return len(r.DaemonHandlers(res)) > 0 || len(r.TimerHandlers(res)) > 0
}
