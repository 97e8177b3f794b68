package reactor

import (
	"time"

	"github.com/kopf-go/kopf/runtime/body"
	"github.com/kopf-go/kopf/runtime/causes"
	"github.com/kopf-go/kopf/runtime/execution"
	"github.com/kopf-go/kopf/runtime/resources"
)

// Observation is how one attempt of one handler on one object ended, as
// the reactor concluded it. It is reported to Reactor.Observe so that
// tests (package kopftest) can assert which handlers ran and how, per
// object, without parsing the log, and metrics (package metrics) can count
// them. It carries what the reactor knows and stores, not a new judgement:
// Outcome is what execution.Execute returned (Success, Failure, or neither
// with a Delay: a retry), so an attempt refused before the call (retries
// or timeout exhausted: Outcome.Limit says which) is reported as a failure
// too.
type Observation struct {
	Resource  resources.Resource
	Namespace string // "" for a cluster-scoped object
	Name      string
	UID       string
	// Handler is the handler's id; a sub-handler's is "<parent>/<child>".
	Handler string
	// Reason is the cause the handler ran for (create, update, delete,
	// resume); "" for an on.event handler.
	Reason causes.Reason
	// Retry counts this handler's earlier attempts for the cause.
	Retry   int
	Outcome execution.Outcome
	// Interrupted: the operator's exit cancelled the attempt, and nothing
	// of it is stored (the next run of the operator retries it).
	Interrupted bool
	// Kind is the kind of the handler: KindChanging, KindEvent, KindDaemon
	// or KindTimer.
	Kind Kind
	// Started is when the attempt began and Duration how long it took
	// (a parent's includes its sub-handlers'); both zero for daemons and
	// timers, whose attempts the daemons engine times on its own.
	Started  time.Time
	Duration time.Duration
	// Arrived is when the watch event that led to the attempt arrived
	// (the oldest of the events batched into the one processed: see
	// queueing.Stream.Arrived); zero for daemons and timers.
	Arrived time.Time
}

// Kind is a kind of handler, as Observation names it.
type Kind string

// The kinds of handlers.
const (
	KindChanging Kind = "changing" // on.create, on.update, on.delete, on.resume, on.field and their sub-handlers
	KindEvent    Kind = "event"
	KindDaemon   Kind = "daemon"
	KindTimer    Kind = "timer"
)

// Processed is how one call of Reactor.Process ended: one event of one
// object processed (or one requeue of it resumed). It is reported to
// Reactor.ObserveProcessed, for metrics.
type Processed struct {
	// Arrived is when the event arrived (the oldest of the events batched
	// into it); Started when its processing began.
	Arrived time.Time
	Started time.Time
	// Elapsed is how long the processing took (the retries of failed
	// requests included; a delayed handler or a throttled retry ends the
	// processing with a requeue: the time waited is no part of it).
	Elapsed time.Duration
	// Result sums the attempts of the handlers and the cycles up.
	Result Result
	// Terminal: a handler failed for good (a permanent failure, its
	// retries or timeout exhausted, an on.event handler's error).
	Terminal bool
	// Retries counts the retries scheduled: handlers' attempts to be
	// repeated after a delay, and cycles repeated after an error (e.g. a
	// failed patch).
	Retries int
}

// Result sums up the processing of one event.
type Result string

// The results of processing an event.
const (
	// ResultSuccess: no handler's attempt failed, no cycle failed, and no
	// handler is left delayed.
	ResultSuccess Result = "success"
	// ResultError: a handler's attempt failed (whether to be retried or
	// for good), or a cycle failed (and was retried).
	ResultError Result = "error"
	// ResultRequeue: nothing failed, and handlers are due, left to the
	// next cycle (Kopf runs one handler per cycle; the patch's own event
	// starts the next).
	ResultRequeue Result = "requeue"
	// ResultRequeueAfter: nothing failed, but handlers are left delayed
	// (e.g. a parent waits for its sub-handlers' delay): a later cycle
	// runs them.
	ResultRequeueAfter Result = "requeue_after"
)

// tally is what the processing of one event has seen so far, for
// Processed; it lives in the object's memory (one event of an object is
// processed at a time), so keeping it allocates nothing.
type tally struct {
	failed, terminal bool
	retries          int
	requeue          Result // "" or the handlers left for later, as the last cycle left them
}

func (t tally) result() Result {
	switch {
	case t.failed:
		return ResultError
	case t.requeue != "":
		return t.requeue
	}
	return ResultSuccess
}

// note adds one attempt's outcome to the tally.
func (t *tally) note(out execution.Outcome, interrupted bool) {
	switch {
	case interrupted, out.Success:
	case out.Failure:
		t.failed, t.terminal = true, true
	default:
		t.failed = true
		t.retries++
	}
}

// observation describes an attempt on the object b.
func (r *Reactor) observation(b body.Body, handler string, reason causes.Reason, retry int, out execution.Outcome) Observation {
	meta := b.Meta()
	return Observation{
		Resource:  r.Resource,
		Namespace: meta.Namespace(),
		Name:      meta.Name(),
		UID:       meta.UID(),
		Handler:   handler,
		Reason:    reason,
		Retry:     retry,
		Outcome:   out,
		Kind:      KindChanging,
	}
}

// report calls r.Observe with each observation, in order.
func (r *Reactor) report(observed []Observation) {
	if r.Observe == nil {
		return
	}
	for _, o := range observed {
		r.Observe(o)
	}
}
