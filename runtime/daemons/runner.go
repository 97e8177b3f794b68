package daemons

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/kopf-go/kopf/runtime/execution"
	"github.com/kopf-go/kopf/runtime/kwargs"
	"github.com/kopf-go/kopf/runtime/patches"
	"github.com/kopf-go/kopf/runtime/registry"
)

// runner runs one daemon or timer of one object (see the package doc).
// Between steps it holds only its wait timer; a step runs in a goroutine
// of its own.
type runner struct {
	o      *Object
	daemon *registry.DaemonHandler // one of daemon and timer is set
	timer  *registry.TimerHandler
	id     string

	// stopped is kw.Stopped, done when the runner is asked to stop; ctx
	// is the handler's, cancelled when it is forced to.
	stopped context.Context
	signal  context.CancelCauseFunc
	ctx     context.Context
	cancel  context.CancelCauseFunc

	mu         sync.Mutex
	wait       *time.Timer // the next step, while waiting for it
	due        time.Time   // when the next step is due
	parked     bool        // an idle-only timer waits for a change of the object
	busy       bool        // a step is running
	stopAt     time.Time   // when asked to stop; zero: not asked
	reason     *kwargs.StopReason
	escalation *time.Timer // the next escalation of a stop
	done       bool        // exited or left orphaned: nobody waits for it
	abandoned  bool        // left orphaned: what it does is ignored

	retry   int       // failed attempts of the current series
	started time.Time // the current series' first attempt; zero: none yet
}

func (r *runner) init(o *Object) {
	r.o = o
	if r.daemon != nil {
		r.id = r.daemon.ID
	} else {
		r.id = r.timer.ID
	}
}

// kind is "daemon" or "timer".
func (r *runner) kind() string {
	if r.daemon != nil {
		return "daemon"
	}
	return "timer"
}

// name is the handler as Kopf names it in the log: "Daemon 'x'", "Timer
// 'x'" (kept by the Host, once per handler: not by the runner).
func (r *runner) name() string {
	return r.o.host.handlerName(r.daemon != nil, r.id)
}

// prepare makes the runner's contexts, before it can be stopped: one for
// both kw.Stopped and ctx when they are done together (no cancellation
// backoff).
func (r *runner) prepare() {
	r.stopped, r.signal = context.WithCancelCause(r.o.e.base)
	if r.daemon != nil && r.daemon.CancellationBackoff > 0 {
		r.ctx, r.cancel = context.WithCancelCause(r.o.e.base)
	} else {
		r.ctx, r.cancel = r.stopped, r.signal
	}
}

// start schedules the first step, after the initial delay.
func (r *runner) start() {
	delay := r.initialDelay()
	r.mu.Lock()
	r.scheduleLocked(delay)
	r.mu.Unlock()
}

// initialDelay is the handler's initial delay, or what its InitialDelayFn
// computes from the object's kwargs (Kopf's initial_delay= function).
func (r *runner) initialDelay() time.Duration {
	o := r.o
	base := func() kwargs.Base {
		b := kwargs.FromBody(o.host.Resource, o.latestOwn().DeepCopy(), patches.New(), o.logger(), o.memo)
		b.Cluster = o.host.Cluster
		return b
	}
	switch {
	case r.daemon != nil && r.daemon.InitialDelayFn != nil:
		return r.daemon.InitialDelayFn(&kwargs.Daemon{Base: base(), Param: r.daemon.Param})
	case r.daemon != nil:
		return r.daemon.InitialDelay
	case r.timer.InitialDelayFn != nil:
		return r.timer.InitialDelayFn(&kwargs.Timer{Base: base(), Param: r.timer.Param})
	}
	return r.timer.InitialDelay
}

// scheduleLocked runs the next step after d (at once if d <= 0), in a
// goroutine of its own, with no goroutine until then.
func (r *runner) scheduleLocked(d time.Duration) {
	if r.done || !r.stopAt.IsZero() {
		return
	}
	r.due = time.Now().Add(d)
	if r.wait == nil {
		r.wait = time.AfterFunc(d, r.step)
	} else {
		r.wait.Reset(d)
	}
}

// changed is told that the object's essence changed: an idle-only timer
// that waits for a change is due again (step then waits for the idle
// time).
func (r *runner) changed() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.parked {
		r.parked = false
		r.scheduleLocked(0)
	}
}

// step is one attempt of the daemon, or one tick of the timer (unless the
// object has not been idle for long enough yet), and the scheduling of the
// next one.
//
// A daemon is called on a goroutine of its own, started from here with a
// shallow stack: the preparation (the copy of the body, the log) grows
// the stack of the goroutine that does it, and a daemon keeps the stack it
// starts with for as long as it runs (the runtime halves a stack only when
// a quarter of it is in use).
func (r *runner) step() {
	r.mu.Lock()
	if r.done || !r.stopAt.IsZero() || r.busy {
		r.mu.Unlock()
		return
	}
	now := time.Now()
	if t := r.timer; t != nil && t.Idle > 0 {
		if since := r.o.idleSince(); now.Sub(since) < t.Idle {
			r.scheduleLocked(since.Add(t.Idle).Sub(now))
			r.mu.Unlock()
			return
		}
	}
	due := r.due
	r.busy = true
	if r.started.IsZero() {
		r.started = now
	}
	a := r.newAttempt()
	a.due, a.at, a.att, a.logger = due, now, execution.Attempt{Retry: r.retry, Started: r.started}, r.o.logger()
	r.mu.Unlock()

	if r.timer != nil && r.o.e.OnTick != nil {
		r.o.e.OnTick(Tick{Resource: r.o.host.resourceName(), Handler: r.id, Lag: now.Sub(due)})
	}
	if !a.begin() {
		r.after(a)
		return
	}
	if r.daemon != nil {
		go a.invoke()
	} else {
		a.invoke()
	}
}

// attempt is one call of the handler: what is prepared for it, and its
// outcome.
type attempt struct {
	r       *runner
	due     time.Time // when it was scheduled
	at      time.Time // when it began
	att     execution.Attempt
	spec    execution.Spec
	runtime time.Duration
	patch   patches.Patch
	daemon  *kwargs.Daemon
	timer   *kwargs.Timer
	out     execution.Outcome
	logger  *slog.Logger
}

// timerAttempt is a timer's attempt and its kwargs in one allocation: a
// tick makes one object less. (A daemon's attempt lives as long as the
// daemon runs: it does not carry a timer's kwargs.)
type timerAttempt struct {
	attempt
	kw kwargs.Timer
}

// newAttempt returns an empty attempt of the runner; a timer's has room
// for its kwargs (attempt.timer, set by begin).
func (r *runner) newAttempt() *attempt {
	if r.timer != nil {
		ta := &timerAttempt{}
		ta.r, ta.timer = r, &ta.kw
		return &ta.attempt
	}
	return &attempt{r: r}
}

// begin prepares the kwargs and logs the call (execution.Begin); false if
// the handler's retries or timeout are exhausted (the outcome is set).
func (a *attempt) begin() bool {
	r, o := a.r, a.r.o
	a.patch = patches.New()
	base := kwargs.FromBody(o.host.Resource, o.latestOwn().DeepCopy(), a.patch, a.logger, o.memo)
	base.Cluster = o.host.Cluster
	if d := r.daemon; d != nil {
		a.spec = execution.Spec{Name: r.name(), Errors: d.Errors, Timeout: d.Timeout, Retries: d.Retries, Backoff: d.Backoff, Cancellable: true}
	} else {
		t := r.timer
		a.spec = execution.Spec{Name: r.name(), Errors: t.Errors, Timeout: t.Timeout, Retries: t.Retries, Backoff: t.Backoff, Cancellable: true}
	}
	runtime, out, ok := execution.Begin(a.spec, a.att, a.logger)
	if !ok {
		a.out = out
		return false
	}
	a.runtime = runtime
	if d := r.daemon; d != nil {
		a.daemon = &kwargs.Daemon{Base: base, Param: d.Param, Retry: a.att.Retry, Started: a.att.Started, Runtime: runtime, Stopped: r.stopped, Latest: o.latestCopy}
	} else {
		*a.timer = kwargs.Timer{Base: base, Param: r.timer.Param, Retry: a.att.Retry, Started: a.att.Started, Runtime: runtime, Stopped: r.stopped}
	}
	return true
}

// invoke calls the handler through execution.Guard and judges the outcome
// by kw.Stopped (an error returned once the handler is asked to stop is
// its exit, not a failure to retry), then ends the step.
func (a *attempt) invoke() {
	r := a.r
	var result any
	var err error
	if a.daemon != nil {
		result, err = execution.Guard(func() (any, error) { return r.daemon.Fn(r.ctx, a.daemon) })
	} else {
		result, err = execution.Guard(func() (any, error) { return r.timer.Fn(r.ctx, a.timer) })
	}
	a.daemon, a.timer = nil, nil
	a.out = execution.Classify(r.stopped, a.spec, a.att, a.runtime, result, err, r.o.e.settings.Execution.DefaultBackoff, a.logger)
	r.after(a)
}

// after reports the attempt, applies its patch (the result into
// status.<id>, the handler's own changes), and schedules what comes next.
func (r *runner) after(a *attempt) {
	o, out := r.o, a.out
	if o.host.Observe != nil {
		o.host.Observe(o.latestOwn(), r.id, r.kind(), a.att.Retry, out, !out.Final() && out.Delay == 0)
	}
	if out.Success {
		if err := execution.MergeResult(a.patch, r.id, out.Result); err != nil {
			a.logger.Error(fmt.Sprintf("%s returned a result that cannot be stored: %v", r.name(), err))
		}
	}
	r.mu.Lock()
	abandoned := r.abandoned
	r.mu.Unlock()
	if !a.patch.IsEmpty() && !abandoned && o.host.Apply != nil {
		if err := o.host.Apply(o.e.apply, o.latestOwn(), a.patch); err != nil {
			a.logger.Error(fmt.Sprintf("The outcome of %s could not be stored: %v", r.name(), err))
		}
	}

	r.mu.Lock()
	r.busy = false
	if r.done { // left orphaned meanwhile: nothing more of it
		r.mu.Unlock()
		return
	}
	if !r.stopAt.IsZero() {
		r.exitLocked() // unlocks
		return
	}
	if r.daemon != nil || r.timer.Interval == 0 && r.timer.Idle == 0 {
		// A daemon that returned, and a one-shot timer (neither interval
		// nor idle) that succeeded or failed for good, are done for the
		// object and never restarted, as Kopf's.
		if out.Final() {
			r.done = true
			r.mu.Unlock()
			if r.daemon != nil {
				a.logger.Debug(r.name() + " has exited on its own and will not be retried or restarted.")
			}
			r.cancel(nil)
			r.signal(nil)
			o.finished(r, true, nil)
			return
		}
		r.retry++
		r.scheduleLocked(out.Delay)
		r.mu.Unlock()
		return
	}
	t := r.timer
	switch {
	case !out.Final():
		r.retry++
		r.scheduleLocked(out.Delay)
	case t.Interval > 0 && t.Sharp:
		// The grid of the interval, from this tick's schedule: a slow
		// tick skips the slots it overlaps, a late one does not shift
		// the grid.
		r.retry, r.started = 0, time.Time{}
		now := time.Now()
		next := a.due.Add(t.Interval)
		if !next.After(now) {
			next = next.Add(now.Sub(next).Truncate(t.Interval) + t.Interval)
		}
		r.scheduleLocked(next.Sub(now))
	case t.Interval > 0:
		r.retry, r.started = 0, time.Time{}
		r.scheduleLocked(t.Interval)
	default:
		// Idle only: the next tick comes after the next change, idle
		// for Idle again.
		r.retry, r.started = 0, time.Time{}
		if o.idleSince().After(a.at) {
			r.scheduleLocked(0)
		} else {
			r.parked = true
		}
	}
	r.mu.Unlock()
}

// stop asks the runner to stop for the reason: kw.Stopped is done at
// once; a runner between steps is done at once; a running step escalates
// (see the package doc). A second request changes nothing.
func (r *runner) stop(reason *kwargs.StopReason) {
	r.mu.Lock()
	if r.done || !r.stopAt.IsZero() {
		r.mu.Unlock()
		return
	}
	r.stopAt = time.Now()
	r.reason = reason
	r.parked = false
	r.signal(reason)
	if !r.busy {
		if r.wait != nil {
			r.wait.Stop()
		}
		r.exitLocked()
		return
	}
	var backoff time.Duration
	if r.daemon != nil {
		backoff = r.daemon.CancellationBackoff
	}
	if backoff > 0 {
		r.o.logger().Debug(r.name() + " is signalled to exit gracefully.")
		r.escalation = time.AfterFunc(backoff, r.force)
	} else {
		r.forceLocked()
	}
	r.mu.Unlock()
}

// force cancels the handler's context, after the cancellation backoff.
func (r *runner) force() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.forceLocked()
}

func (r *runner) forceLocked() {
	if r.done {
		return
	}
	r.o.logger().Debug(r.name() + " is signalled to exit by force.")
	r.cancel(r.reason)
	if timeout := r.cancellationTimeout(); timeout > 0 {
		r.escalation = time.AfterFunc(timeout, r.abandon)
	} else {
		r.escalation = time.AfterFunc(r.polling(), r.poll)
	}
}

// poll logs, every cancellation_polling, that a runner with no
// cancellation timeout is still exiting.
func (r *runner) poll() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done {
		return
	}
	polling := r.polling()
	r.o.logger().Debug(fmt.Sprintf("%s is still exiting. The next check is in %s seconds.", r.name(), seconds(polling)))
	r.escalation = time.AfterFunc(polling, r.poll)
}

// abandon gives up on a runner that does not exit: the object no longer
// waits for it, and what it returns is ignored.
func (r *runner) abandon() {
	r.mu.Lock()
	if r.done {
		r.mu.Unlock()
		return
	}
	r.done, r.abandoned = true, true
	if r.escalation != nil {
		r.escalation.Stop()
	}
	if r.wait != nil {
		r.wait.Stop()
	}
	latency := time.Since(r.stopAt)
	reason := r.reason
	r.mu.Unlock()
	r.o.logger().Warn(r.name() + " did not exit in time. Leaving it orphaned.")
	r.cancel(reason)
	r.report(reason, latency, true)
	r.o.finished(r, false, reason)
}

// exitLocked ends a runner that was asked to stop and has no step
// running; it unlocks r.mu.
func (r *runner) exitLocked() {
	r.done = true
	if r.escalation != nil {
		r.escalation.Stop()
	}
	latency := time.Since(r.stopAt)
	reason := r.reason
	r.mu.Unlock()
	if r.daemon != nil {
		r.o.logger().Debug(r.name() + " has exited on request and will not be retried or restarted.")
	}
	if reason == kwargs.StopOperatorExiting {
		r.o.logger().Debug(r.name() + " has exited gracefully.")
	}
	r.cancel(reason)
	r.report(reason, latency, false)
	r.o.finished(r, false, reason)
}

func (r *runner) report(reason *kwargs.StopReason, latency time.Duration, abandoned bool) {
	if fn := r.o.e.OnStopped; fn != nil {
		fn(Stopped{Resource: r.o.host.resourceName(), Kind: r.kind(), Handler: r.id, Reason: reason, Latency: latency, Abandoned: abandoned})
	}
}

// cancellationTimeout is the daemon's cancellation_timeout, or the
// settings' default (0: none); timers have none of their own.
func (r *runner) cancellationTimeout() time.Duration {
	if r.daemon != nil && r.daemon.CancellationTimeout != 0 {
		if r.daemon.CancellationTimeout < 0 {
			return 0
		}
		return r.daemon.CancellationTimeout
	}
	return r.o.e.settings.Background.CancellationTimeout
}

func (r *runner) polling() time.Duration {
	if r.daemon != nil && r.daemon.CancellationPolling > 0 {
		return r.daemon.CancellationPolling
	}
	if p := r.o.e.settings.Background.CancellationPolling; p > 0 {
		return p
	}
	return time.Minute
}
