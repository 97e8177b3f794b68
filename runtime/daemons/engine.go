// Package daemons runs daemons and timers (Kopf's @kopf.daemon and
// @kopf.timer): per-object background work that starts when its object
// appears (or the operator starts) or starts matching its handler's
// filters, and stops when the object is deleted, stops matching, or the
// operator pauses or exits. It is Kopf's kopf/_core/engines/daemons.py,
// with its log lines, on goroutines and contexts.
//
// # One runner per object and handler
//
// The reactor gives each object that has daemons or timers an [Object]
// (NewObject) and, on every event, tells it the latest body (Update) and
// which handlers match (Match), or that it is deleted (Stop). An Object
// keeps one runner per handler id: never two of one handler at once (a
// stopping runner is replaced only once it is done). A daemon that returns
// (success, or a permanent failure) is not restarted for that object;
// errors are retried per the handler's errors=, backoff, retries and
// timeout, as changing handlers' are (execution.Run).
//
// # No goroutine while waiting
//
// A runner is a small state machine whose steps (an attempt of the daemon,
// a tick of the timer) run in a goroutine of their own, started when the
// step is due and ended with it. Between steps (a timer's interval or
// idle, a daemon's initial delay or retry backoff) the runner holds only a
// time.AfterFunc timer: no goroutine. The scheduler is thus the Go
// runtime's own timer heap (per P, serviced by the scheduler itself), with
// O(log n) Reset and Stop, which client-go's workqueue delaying queue
// would duplicate with a goroutine, a heap and consumers of its own, and
// without the ability to postpone an item (an idle timer postpones its
// tick on every change) or to cancel one (a stop). A waiting timer costs
// the runner struct and one runtime timer (a few hundred bytes).
//
// # Stopping
//
// Stopping is Kopf's escalation: kw.Stopped is done at once, with the
// reason as its cause; after the daemon's cancellation_backoff (at once
// without one) its ctx is cancelled ("... is signalled to exit by
// force."); after cancellation_timeout more, the runner gives up: "... did
// not exit in time. Leaving it orphaned.", and the object no longer waits
// for it (its finalizer is released). Without a cancellation timeout it
// waits for ever, logging "... is still exiting" every
// settings.Background.CancellationPolling. A runner waiting between steps
// stops at once. The exit of a step is noticed at once (no polling), so
// an object's finalizer is released as soon as its last daemon exits (the
// Object's Wake asks the reactor to process the object again).
//
// On the operator's exit (Engine.Shutdown) every runner is told at once
// and waited for at most settings.Background.ExitTimeout; the rest are
// left orphaned with Kopf's warning, and the operator exits anyway.
// Pausing (peering: runtime/operator's pause gate) is Engine.Pause and
// Engine.Resume.
//
// # Metrics
//
// Engine.OnStopped and Engine.OnTick, if set, are told each runner's stop
// latency and each timer tick's lag behind its schedule; runtime/operator
// sets them to runtime/metrics' DaemonStopped and TimerTicked when the
// operator serves metrics (kopf_daemon_stop_seconds,
// kopf_timer_lag_seconds). This package imports no metrics library.
package daemons

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/kopf-go/kopf/runtime/kwargs"
	"github.com/kopf-go/kopf/runtime/settings"
)

// Engine runs the daemons and timers of one operator. Its hooks are set
// before the first object is made and not changed afterwards.
type Engine struct {
	settings  *settings.Settings
	logger    *slog.Logger
	base      context.Context // the handlers' context: the operator's values, never cancelled
	apply     context.Context // for the patches of the outcomes; cancelled after Shutdown
	stopApply context.CancelFunc

	// OnStopped, if set, is told how long each runner took to stop, from
	// the request to its exit (or to being left orphaned). It is called
	// from the runners' goroutines: quick and safe for concurrent use.
	OnStopped func(Stopped)
	// OnTick, if set, is told of each timer tick how late it started
	// against its schedule (its interval, its grid with sharp, its idle).
	OnTick func(Tick)

	mu      sync.Mutex
	runners map[*runner]struct{} // those not done yet
	objects map[*Object]struct{} // those not forgotten
	drained chan struct{}        // closed when runners becomes empty during Shutdown
	exiting bool
	paused  bool
}

// Stopped is the stop of one runner, for metrics.
type Stopped struct {
	Resource string // the resource's kopf-style name, e.g. "kopfexamples.v1.kopf.dev"
	Kind     string // "daemon" or "timer"
	Handler  string
	Reason   *kwargs.StopReason
	// Latency is from the request to stop to the runner's exit, or to it
	// being left orphaned (Abandoned).
	Latency   time.Duration
	Abandoned bool
}

// Tick is one timer tick, for metrics.
type Tick struct {
	Resource string // as Stopped.Resource
	Handler  string
	// Lag is how much later than scheduled the tick started.
	Lag time.Duration
}

// NewEngine returns an engine whose handlers run with ctx's values (the
// operator's clients, poster, ...), never with its cancellation: stopping
// is the engine's own (Object.Stop, Shutdown).
func NewEngine(ctx context.Context, s *settings.Settings, logger *slog.Logger) *Engine {
	base := context.WithoutCancel(ctx)
	apply, stop := context.WithCancel(base)
	return &Engine{settings: s, logger: logger, base: base, apply: apply, stopApply: stop, runners: map[*runner]struct{}{}, objects: map[*Object]struct{}{}}
}

// register records a new runner; false if the engine is exiting or paused
// (no new runners then).
func (e *Engine) register(r *runner) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.exiting || e.paused {
		return false
	}
	e.runners[r] = struct{}{}
	return true
}

func (e *Engine) unregister(r *runner) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.runners, r)
	if len(e.runners) == 0 && e.drained != nil {
		close(e.drained)
		e.drained = nil
	}
}

// all returns the runners not done yet.
func (e *Engine) all() []*runner {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]*runner, 0, len(e.runners))
	for r := range e.runners {
		out = append(out, r)
	}
	return out
}

// Running counts the daemons and timers not done yet (a timer waiting for
// its next tick counts).
func (e *Engine) Running() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.runners)
}

// Shutdown stops every daemon and timer at once, as the operator exits
// (the reason is kwargs.StopOperatorExiting), and waits for them: each
// escalates per its own cancellation backoff and timeout, and all are
// waited for at most settings.Background.ExitTimeout, after which those
// still running are left orphaned (logged). No runner starts afterwards.
// It returns when none is left to wait for.
func (e *Engine) Shutdown() {
	e.mu.Lock()
	e.exiting = true
	var drained chan struct{}
	if len(e.runners) > 0 {
		drained = make(chan struct{})
		e.drained = drained
	}
	e.mu.Unlock()
	defer e.stopApply()
	if drained == nil {
		return
	}
	for _, r := range e.all() {
		r.stop(kwargs.StopOperatorExiting)
	}
	limit := e.settings.Background.ExitTimeout
	if limit <= 0 {
		limit = time.Nanosecond
	}
	t := time.NewTimer(limit)
	defer t.Stop()
	select {
	case <-drained:
		return
	case <-t.C:
	}
	for _, r := range e.all() {
		r.abandon()
	}
}

// Pause stops every daemon and timer for the operator's pause (peering:
// another operator takes over), with the reason
// kwargs.StopOperatorPausing, and starts none until Resume. It does not
// wait for them.
func (e *Engine) Pause() {
	e.mu.Lock()
	e.paused = true
	e.mu.Unlock()
	for _, r := range e.all() {
		r.stop(kwargs.StopOperatorPausing)
	}
}

// Resume ends a Pause: every object is woken (see NewObject) to start its
// daemons and timers again.
func (e *Engine) Resume() {
	e.mu.Lock()
	e.paused = false
	objects := make([]*Object, 0, len(e.objects))
	for o := range e.objects {
		objects = append(objects, o)
	}
	e.mu.Unlock()
	for _, o := range objects {
		if o.wake != nil {
			o.wake()
		}
	}
}

func seconds(d time.Duration) string {
	return fmt.Sprintf("%g", d.Seconds())
}
