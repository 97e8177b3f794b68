package reactor

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/kopf-go/kopf/runtime/body"
	"github.com/kopf-go/kopf/runtime/causes"
	"github.com/kopf-go/kopf/runtime/execution"
	"github.com/kopf-go/kopf/runtime/kwargs"
	"github.com/kopf-go/kopf/runtime/patches"
	"github.com/kopf-go/kopf/runtime/queueing"
	"github.com/kopf-go/kopf/runtime/registry"
	"github.com/kopf-go/kopf/runtime/watching"
)

// The reconcile step runs the level-triggered handlers
// (registry.ReconcileHandler; docs/reconcile.md) as the last step of an
// object's processing, after Kopf's handlers, in the same worker: one
// cycle per object at a time, as for every other handler.
//
// What runs when. On an event of the object (a listing, ADDED or
// MODIFIED: batched as the queue batches them), every handler whose
// filters match runs. On a Wakeup event (the reactor's own), only the
// handlers that another object's change asked for (Reactor.Trigger) or
// whose timed run is due: a retry after an error (exponential backoff from
// the handler's Backoff, doubled per failure in a row, capped at
// registry.MaxReconcileBackoff, reset by a success), a RequeueAfter, or
// the Resync interval. The next timed run of the object is one requeue of
// the queue (queueing.Stream.Requeue), shared with the reactor's own (see
// Reactor.settle and reconcileWake): the earliest wins.
//
// What is kept. The state of the handlers (failures in a row, the next
// timed run) is in memory only, per object, forgotten when the object is
// deleted or the operator exits: nothing is written onto the object but
// the handlers' own Patch.
//
// Deletion. A handler is not called for an object being deleted, unless
// it holds the finalizer (Finalize): Kopf's finalizer is then added (by
// Kopf's finalizer step when the resource has changing handlers, else by
// this step), and the handler is called with Deleting until it succeeds;
// the finalizer is released once every such handler has succeeded and
// Kopf's side of the deletion (delete handlers, daemons) is done, by
// whichever of the two finishes last.

// ReasonReconcile is the reason of the observations of reconcile handlers
// (kopftest's cause "reconcile").
const ReasonReconcile causes.Reason = "reconcile"

// KindReconcile is the kind of the observations of reconcile handlers.
const KindReconcile Kind = "reconcile"

// reconcileMemory is what the reactor remembers of one object for its
// reconcile handlers.
type reconcileMemory struct {
	// mu guards body and triggers, which Trigger uses from the watches'
	// goroutines.
	mu       sync.Mutex
	body     body.Body         // the object as last processed: what a trigger reconciles
	triggers map[string]string // by handler id: why another object's change runs it

	// The rest is the object's worker's only.
	handlers map[string]*reconcileState // by handler id
	// finalized: every Finalize handler has succeeded on the deletion;
	// kopfDone: Kopf's side of the deletion is done, and the finalizer is
	// left to this step to release.
	finalized, kopfDone bool
}

// reconcileState is one handler's state for one object.
type reconcileState struct {
	retry   int       // failures in a row
	due     time.Time // the next timed run; zero: none
	trigger string    // the timed run's trigger
	deleted bool      // it succeeded with Deleting
}

// newReconcileMemory returns the reconcile memory of an object of a
// resource with reconcile handlers (made with the object's memory, so
// that Trigger reads it without racing the worker); nil for others.
func (r *Reactor) newReconcileMemory() *reconcileMemory {
	if r.Registry == nil || !r.hasReconcile() {
		return nil
	}
	return &reconcileMemory{handlers: map[string]*reconcileState{}}
}

func (rm *reconcileMemory) state(id string) *reconcileState {
	st, ok := rm.handlers[id]
	if !ok {
		st = &reconcileState{}
		rm.handlers[id] = st
	}
	return st
}

// take records b as the latest body and returns the pending triggers.
func (rm *reconcileMemory) take(b body.Body) map[string]string {
	rm.mu.Lock()
	defer rm.mu.Unlock()
	rm.body = b
	t := rm.triggers
	rm.triggers = nil
	return t
}

// hasReconcile reports whether the resource has reconcile handlers.
func (r *Reactor) hasReconcile() bool { return r.Registry.HasReconcile(r.Resource) }

// Trigger asks for the reconcile handler id of the object key ("namespace/name",
// or "name") to run, because of another object's change (why: the
// trigger the handler sees, e.g. "owned v1/configmaps ns/name"). An object
// not seen yet is left alone: its listing runs its handlers anyway. It is
// safe for concurrent use (the watches of owned and watched resources
// call it).
func (r *Reactor) Trigger(key, id, why string) {
	r.mu.Lock()
	mem := r.memories[key]
	r.mu.Unlock()
	if mem == nil || r.Requeue == nil {
		return
	}
	rm := mem.rec // set when the memory is made: no race with the worker
	if rm == nil {
		return
	}
	rm.mu.Lock()
	b := rm.body
	if b != nil {
		if rm.triggers == nil {
			rm.triggers = map[string]string{}
		}
		rm.triggers[id] = why
	}
	rm.mu.Unlock()
	if b != nil {
		r.Requeue(watching.Event{Type: watching.Modified, Key: key, Object: b, Wakeup: true})
	}
}

// reconcileWake handles the elapsed requeue of the reconcile step (a timed
// run): it runs the step alone, without Kopf's cycle, and keeps the
// reactor's own wait (memory.wait) if it is not over yet. It reports
// whether the event is such a wake (and so is processed).
func (r *Reactor) reconcileWake(ctx context.Context, ev watching.Event, s *queueing.Stream, mem *memory, logger *slog.Logger) bool {
	if !ev.Wakeup || mem.rec == nil {
		return false
	}
	if woke, _ := s.Woke(); woke != queueing.Elapsed {
		return false
	}
	if mem.wait != waitNone {
		if !time.Now().Before(mem.waitDue) {
			return false // the reactor's own wait is over: resume's
		}
		mem.delay = time.Until(mem.waitDue)
	}
	r.reconcile(ctx, ev, s, mem, logger)
	r.settle(ctx, ev, s, mem, logger, mem.attempt, nil)
	return true
}

// reconcile is the reconcile step of the cycle of the event ev (see above).
func (r *Reactor) reconcile(ctx context.Context, ev watching.Event, s *queueing.Stream, mem *memory, logger *slog.Logger) {
	handlers := r.Registry.ReconcileHandlers(r.Resource)
	if len(handlers) == 0 {
		return
	}
	b := body.Body(ev.Object)
	rm := mem.rec
	triggers := rm.take(b)
	meta := b.Meta()
	deleting := meta.DeletionTimestamp() != ""
	hasFinalizer := slices.Contains(meta.Finalizers(), r.Settings.Persistence.Finalizer)
	if deleting && (!hasFinalizer || mem.released) {
		return // nothing of ours holds it: handlers see no deleted objects
	}
	p := patches.New()
	kw := r.reconcileKwargs(b, p, deleting, mem, logger)
	if !deleting && !hasFinalizer {
		if added, err := r.addReconcileFinalizer(ctx, b, s, kw, handlers, logger); added {
			if err != nil {
				logger.Error(fmt.Sprintf("The finalizer cannot be added; retrying: %v", err))
				rm.retryAll(handlers, time.Now())
			}
			return // the finalizer's own event runs the handlers
		}
	}
	now := time.Now()
	for _, h := range handlers {
		st := rm.state(h.ID)
		trigger, ok := st.pick(h, ev.Wakeup, deleting, triggers[h.ID], now)
		if !ok {
			continue
		}
		if !r.matchesReconcile(h, kw, logger) {
			st.due, st.deleted = time.Time{}, deleting // a handler that does not match holds nothing
			continue
		}
		r.runReconcile(ctx, h, st, kw, trigger, b, s, mem, logger)
	}
	if rv, err := r.apply(ctx, b, p); err != nil {
		logger.Error(fmt.Sprintf("The patch of the reconcile handlers failed; retrying them: %v", err))
		rm.retryAll(handlers, now)
	} else {
		s.Expect(rv)
	}
	if deleting {
		r.releaseForReconcile(ctx, b, s, mem, handlers, logger)
	}
}

// pick says whether a handler runs in this cycle, and why: on the
// object's own event, always; on a wakeup, if another object's change
// asked for it or its timed run is due. Deleted objects are for the
// Finalize handlers that have not succeeded on them yet.
func (st *reconcileState) pick(h *registry.ReconcileHandler, wakeup, deleting bool, triggered string, now time.Time) (string, bool) {
	switch {
	case deleting && (!h.Finalize || st.deleted):
		return "", false
	case !wakeup:
		return kwargs.TriggerObject, true
	case triggered != "":
		return triggered, true
	case !st.due.IsZero() && !now.Before(st.due):
		return st.trigger, true
	}
	return "", false
}

// reconcileKwargs returns the user kwargs of the step: a deep copy of the
// object, decoded once for every handler and when= callback.
func (r *Reactor) reconcileKwargs(b body.Body, p patches.Patch, deleting bool, mem *memory, logger *slog.Logger) *kwargs.Reconcile {
	kw := &kwargs.Reconcile{
		Base:     kwargs.FromBody(r.Resource, b.DeepCopy(), p, logger, mem.memo),
		Deleting: deleting,
	}
	kw.Cluster = r.Cluster
	kw.ShareDecoded()
	return kw
}

// matchesReconcile applies a reconcile handler's labels and annotations
// filters and when= through execution.Guard: a panic makes it not match.
func (r *Reactor) matchesReconcile(h *registry.ReconcileHandler, kw *kwargs.Reconcile, logger *slog.Logger) bool {
	ok, err := execution.Guard(func() (bool, error) {
		hkw := *kw
		hkw.Param = h.Param
		return h.Filter.MatchMeta(&hkw.Base) && (h.When == nil || h.When(&hkw)), nil
	})
	r.filterFailed(kw.UID, h.ID, string(ReasonReconcile), err, logger)
	return ok
}

// runReconcile calls one handler through execution.Guard and schedules
// its next run from the outcome (see settleReconcile).
func (r *Reactor) runReconcile(ctx context.Context, h *registry.ReconcileHandler, st *reconcileState, base *kwargs.Reconcile, trigger string, b body.Body, s *queueing.Stream, mem *memory, logger *slog.Logger) {
	kw := *base
	kw.Param, kw.Retry, kw.Trigger = h.Param, st.retry, trigger
	logger.Debug(fmt.Sprintf("Reconcile handler '%s' is invoked (trigger: %s).", h.ID, trigger))
	started := time.Now()
	res, err := execution.Guard(func() (registry.ReconcileResult, error) { return h.Fn(ctx, &kw) })
	retry := st.retry
	interrupted := err != nil && ctx.Err() != nil
	var out execution.Outcome
	if !interrupted {
		out = r.settleReconcile(h, st, res, err, base.Deleting, mem, logger)
	}
	if r.Observe != nil {
		obs := r.observation(b, h.ID, ReasonReconcile, retry, out)
		obs.Kind, obs.Interrupted = KindReconcile, interrupted
		obs.Started, obs.Duration, obs.Arrived = started, time.Since(started), s.Arrived()
		r.Observe(obs)
	}
}

// settleReconcile records a handler's outcome: an error is retried after
// the backoff; a success resets it and schedules the next run after
// RequeueAfter or Resync, the earlier (none after a deletion's success).
func (r *Reactor) settleReconcile(h *registry.ReconcileHandler, st *reconcileState, res registry.ReconcileResult, err error, deleting bool, mem *memory, logger *slog.Logger) execution.Outcome {
	now := time.Now()
	if err != nil {
		st.retry++
		delay := reconcileBackoff(h.Backoff, st.retry)
		st.due, st.trigger = now.Add(delay), kwargs.TriggerRetry
		logger.Error(fmt.Sprintf("Reconcile handler '%s' failed: %v; retrying in %s seconds.", h.ID, err, seconds(delay)))
		execution.LogPanicStack(logger, err)
		mem.tally.failed = true
		mem.tally.retries++
		return execution.Outcome{Delay: delay, Message: err.Error()}
	}
	st.retry, st.due, st.trigger = 0, time.Time{}, ""
	logger.Info(fmt.Sprintf("Reconcile handler '%s' succeeded.", h.ID))
	if deleting {
		st.deleted = true
		return execution.Outcome{Success: true}
	}
	if res.RequeueAfter > 0 {
		st.due, st.trigger = now.Add(res.RequeueAfter), kwargs.TriggerRequeue
	}
	if h.Resync > 0 && (st.due.IsZero() || h.Resync < res.RequeueAfter) {
		st.due, st.trigger = now.Add(h.Resync), kwargs.TriggerResync
	}
	if !st.due.IsZero() {
		logger.Debug(fmt.Sprintf("Reconcile handler '%s' runs again in %s seconds (%s).", h.ID, seconds(st.due.Sub(now)), st.trigger))
	}
	return execution.Outcome{Success: true}
}

// reconcileBackoff is the delay before the retry-th retry (1: the first):
// first, doubled per failure, capped at registry.MaxReconcileBackoff.
func reconcileBackoff(first time.Duration, retry int) time.Duration {
	d := first
	if d <= 0 {
		d = registry.DefaultReconcileBackoff
	}
	for i := 1; i < retry && d < registry.MaxReconcileBackoff; i++ {
		d *= 2
	}
	return min(d, registry.MaxReconcileBackoff)
}

// retryAll schedules a retry of every handler, as after an error, when
// the step's own write failed (the handlers' patch, the finalizer's): the
// API server's failures are rare, and the handlers are idempotent.
func (rm *reconcileMemory) retryAll(handlers []*registry.ReconcileHandler, now time.Time) {
	rm.finalized = false
	for _, h := range handlers {
		st := rm.state(h.ID)
		st.retry++
		st.due, st.trigger, st.deleted = now.Add(reconcileBackoff(h.Backoff, st.retry)), kwargs.TriggerRetry, false
	}
}

// reconcileDelay is when the object's earliest timed run of a reconcile
// handler is due, from now (ok: there is one).
func (mem *memory) reconcileDelay() (d time.Duration, ok bool) {
	if mem.rec == nil {
		return 0, false
	}
	var due time.Time
	for _, st := range mem.rec.handlers {
		if !st.due.IsZero() && (due.IsZero() || st.due.Before(due)) {
			due = st.due
		}
	}
	if due.IsZero() {
		return 0, false
	}
	return max(time.Until(due), 0), true
}

// reconcileHolds reports whether a reconcile handler holds the finalizer
// of an object being deleted: one has Finalize and they have not all
// succeeded on the deletion yet. Kopf's steps leave the finalizer to the
// reconcile step then (marking their side done).
func (r *Reactor) reconcileHolds(mem *memory) bool {
	if !r.Registry.ReconcileFinalizes(r.Resource) || (mem.rec != nil && mem.rec.finalized) {
		return false
	}
	mem.rec.kopfDone = true
	return true
}

// needsReconcileFinalizer reports whether a Finalize handler matches the
// object (kw: the step's kwargs), so that the finalizer is needed.
func (r *Reactor) needsReconcileFinalizer(kw *kwargs.Reconcile, handlers []*registry.ReconcileHandler, logger *slog.Logger) bool {
	for _, h := range handlers {
		if h.Finalize && r.matchesReconcile(h, kw, logger) {
			return true
		}
	}
	return false
}

// addReconcileFinalizer adds the finalizer to an object whose resource
// has neither changing handlers nor daemons (else Kopf's steps add it, see
// finalizerStep) when a Finalize handler matches it; it reports whether it
// patched.
func (r *Reactor) addReconcileFinalizer(ctx context.Context, b body.Body, s *queueing.Stream, kw *kwargs.Reconcile, handlers []*registry.ReconcileHandler, logger *slog.Logger) (bool, error) {
	if r.Registry.HasChanging(r.Resource) || r.hasSpawning() || !r.needsReconcileFinalizer(kw, handlers, logger) {
		return false, nil
	}
	logger.Debug("Adding the finalizer, thus preventing the actual deletion.")
	rv, err := r.addFinalizer(ctx, b, r.Settings.Persistence.Finalizer)
	s.Expect(rv)
	return true, err
}

// reconcileFinalizerNeeded reports, for Kopf's finalizer steps of an
// object not being deleted, whether a Finalize handler needs the
// finalizer (so that they neither remove it nor fail to add it).
func (r *Reactor) reconcileFinalizerNeeded(b body.Body, mem *memory, logger *slog.Logger) bool {
	handlers := r.Registry.ReconcileHandlers(r.Resource)
	if !r.Registry.ReconcileFinalizes(r.Resource) {
		return false
	}
	return r.needsReconcileFinalizer(r.reconcileKwargs(b, nil, false, mem, logger), handlers, logger)
}

// releaseForReconcile releases the finalizer of a deleted object once
// every Finalize handler has succeeded on it and Kopf's side is done (or
// there is none).
func (r *Reactor) releaseForReconcile(ctx context.Context, b body.Body, s *queueing.Stream, mem *memory, handlers []*registry.ReconcileHandler, logger *slog.Logger) {
	rm := mem.rec
	for _, h := range handlers {
		if h.Finalize && !rm.state(h.ID).deleted {
			return
		}
	}
	rm.finalized = true
	if (r.Registry.HasChanging(r.Resource) || r.hasSpawning()) && !rm.kopfDone {
		return // Kopf's steps release it when they are done
	}
	if err := r.releaseFinalizer(ctx, &cycleState{b: b, mem: mem, s: s, logger: logger}, ""); err != nil {
		logger.Error(fmt.Sprintf("The finalizer cannot be released; retrying: %v", err))
		rm.retryAll(handlers, time.Now())
	}
}
