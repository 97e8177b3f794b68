package reactor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/kopf-go/kopf/runtime/body"
	"github.com/kopf-go/kopf/runtime/causes"
	"github.com/kopf-go/kopf/runtime/diffs"
	"github.com/kopf-go/kopf/runtime/execution"
	"github.com/kopf-go/kopf/runtime/kwargs"
	"github.com/kopf-go/kopf/runtime/patches"
	"github.com/kopf-go/kopf/runtime/progress"
	"github.com/kopf-go/kopf/runtime/queueing"
	"github.com/kopf-go/kopf/runtime/registry"
)

// cycleState is what the steps of one processing cycle share: the object
// version being processed, its memory, and what the earlier steps found.
type cycleState struct {
	b      body.Body
	mem    *memory
	s      *queueing.Stream
	logger *slog.Logger

	deleting     bool // the object has a deletionTimestamp
	hasFinalizer bool // our finalizer is on the object

	detected causes.Detected
	base     kwargs.Changing             // the reactor's own kwargs, never given to user code
	userKw   *kwargs.Changing            // user code's copy of base, made on first use
	handlers []*registry.ChangingHandler // the matching handlers of the cause, in order
}

// cycle is one processing cycle of one object version. It returns an error
// only when the cycle should be repeated (e.g. a failed patch).
//
// The steps, each a method of its own: skip a released object (free),
// detect the cause, select the handlers, add or remove the finalizer in a
// cycle of its own (finalizerStep), skip a change of no interest (idle),
// run the handlers, store their outcome and the diff-base into the patch,
// apply it, release the finalizer once a deletion is handled, and, when
// only delayed handlers are left, requeue the object to touch it once the
// earliest delay is over.
func (r *Reactor) cycle(ctx context.Context, b body.Body, mem *memory, s *queueing.Stream, logger *slog.Logger) error {
	c := r.newCycle(b, mem, s, logger)
	if c.free() {
		return nil
	}
	if !r.Registry.HasChanging(r.Resource) || (c.deleting && c.mem.deletionHandled) {
		return r.spawningCycle(ctx, c) // the finalizer only
	}
	if !r.detect(c) {
		return nil
	}
	r.selectHandlers(c)
	if done, err := r.finalizerStep(ctx, c); done {
		return err
	}
	if c.idle(ctx) {
		return nil
	}
	c.logProgress(ctx)

	p := patches.New()
	kw := c.handlersKwargs(r)
	kw.Patch = p
	outcome := r.runHandlers(ctx, c.b, p, kw, "", c.handlers, c.logger, c.mem.observed[:0])
	c.note(outcome)
	defer func() { c.mem.observed = outcome.observed[:0] }() // reused by the next cycle, once reported
	if outcome.cancelled {
		r.report(outcome.observed)
		return nil // the operator is exiting: nothing of this cycle is stored
	}
	r.storeOutcome(c, p, outcome)

	rv, err := r.applyOutcome(ctx, c, p)
	r.report(outcome.observed)
	if err != nil {
		return err
	}
	if outcome.done {
		if len(c.handlers) > 0 {
			c.logger.Info(fmt.Sprintf("%s is processed: %d succeeded; %d failed.", c.detected.Reason.Title(), outcome.succeeded, outcome.failed))
		}
		c.mem.resumed = true // fully handled once: nothing left to resume
		if c.detected.Reason == causes.Delete && c.hasFinalizer {
			if r.hasSpawning() && !c.mem.spawnDone {
				c.logger.Debug(fmt.Sprintf("Waiting for the daemons and timers to exit before releasing the object: %v.", c.mem.daemons.Running()))
				c.mem.deletionHandled = true
				return nil // woken when they are done
			}
			if r.reconcileHolds(c.mem) {
				c.logger.Debug("Waiting for the reconcile handlers to finish the deletion before releasing the object.")
				return nil // the reconcile step releases it
			}
			return r.releaseFinalizer(ctx, c, rv)
		}
		c.logger.Debug("Handling cycle is finished, waiting for new changes.")
		return nil
	}
	if rv != "" || outcome.delay <= 0 {
		return nil // the patch's own event starts the next cycle
	}
	r.sleepAndTouch(c, outcome.delay)
	return nil
}

// note adds the handlers' attempts to the object's tally, marks the
// object in progress while handlers are unfinished, and dates the
// observations with the arrival of the event processed.
func (c *cycleState) note(outcome handlersOutcome) {
	t := &c.mem.tally
	t.failed = t.failed || outcome.tally.failed
	t.terminal = t.terminal || outcome.tally.terminal
	t.retries += outcome.tally.retries
	switch {
	case outcome.done, outcome.cancelled:
		t.requeue = ""
	case outcome.due:
		t.requeue = ResultRequeue
	default:
		t.requeue = ResultRequeueAfter
	}
	c.mem.inProgress.Store(!outcome.done && !outcome.cancelled)
	if len(outcome.observed) > 0 {
		arrived := c.s.Arrived()
		for i := range outcome.observed {
			outcome.observed[i].Arrived = arrived
		}
	}
}

// newCycle starts the state of a cycle of the object version b.
func (r *Reactor) newCycle(b body.Body, mem *memory, s *queueing.Stream, logger *slog.Logger) *cycleState {
	meta := b.Meta()
	return &cycleState{
		b:            b,
		mem:          mem,
		s:            s,
		logger:       logger,
		deleting:     meta.DeletionTimestamp() != "",
		hasFinalizer: slices.Contains(meta.Finalizers(), r.Settings.Persistence.Finalizer),
	}
}

// free reports whether the object is being deleted and nothing of ours
// holds it any more (Kopf's FREE cause): the cycle has nothing to do.
func (c *cycleState) free() bool {
	if c.deleting && (!c.hasFinalizer || c.mem.released) {
		c.logger.Debug("Deletion, but we are done with it, and we do not care.")
		return true
	}
	return false
}

// detect finds the cause of the cycle and its diff into c.detected. It
// returns false when the cycle is to be skipped: the essence is the one
// whose handling the API server refused to store before.
func (r *Reactor) detect(c *cycleState) bool {
	ps := r.Settings.Persistence
	c.detected = causes.Detect(causes.Input{
		Body:             c.b,
		DiffBase:         ps.DiffBaseStorage,
		ExtraFields:      r.Registry.ExtraFields(r.Resource),
		Deleting:         c.deleting,
		NoticedByListing: c.mem.noticedByListing,
		Resumed:          c.mem.resumed,
	}, func(err error) {
		c.logger.Error(fmt.Sprintf("The diff-base is malformed and is treated as absent: %v", err))
	})
	if c.mem.rejected != "" && !c.deleting {
		if encoded, _ := progress.EncodeEssence(c.detected.Essence); encoded == c.mem.rejected {
			c.logger.Debug("The object could not be patched for this essence before; waiting for it to change.")
			return false
		}
		c.mem.rejected = ""
	}
	return true
}

// selectHandlers fills c.base with the cycle's kwargs and c.handlers with
// the handlers of the cause (and of resuming, when it mixes in) whose
// filters match.
func (r *Reactor) selectHandlers(c *cycleState) {
	d := &c.detected
	c.base = kwargs.Changing{
		Base:   kwargs.FromBody(r.Resource, c.b, nil, c.logger, c.mem.memo),
		Reason: d.Reason,
		Old:    d.Old,
		New:    d.New,
		Diff:   d.Diff,
	}
	c.base.Cluster = r.Cluster
	candidates := r.Registry.ChangingHandlers(r.Resource, d.Reason)
	if d.Resuming && d.Reason != causes.Resume {
		for _, h := range r.Registry.ChangingHandlers(r.Resource, causes.Resume) {
			// One call per id and cause, as Kopf's: a registration merged
			// for both reasons, or one stacked under the same id.
			sameID := func(o *registry.ChangingHandler) bool { return o.ID == h.ID }
			if (!c.deleting || h.Deleted) && !slices.ContainsFunc(candidates, sameID) {
				candidates = append(candidates, h)
			}
		}
	}
	c.handlers = r.matching(candidates, c, c.logger)
}

// finalizerStep adds the finalizer when a handler requires it and it is
// absent, or removes it when none does and it is present, in a cycle of
// its own before anything else (as Kopf does). done reports that it
// patched (or tried to), and so the cycle ends here.
//
// While the object is being deleted, the finalizer is left to
// releaseFinalizer, and the delete handlers' filters are not evaluated
// for it (their callbacks are user code, called only when it matters).
func (r *Reactor) finalizerStep(ctx context.Context, c *cycleState) (done bool, err error) {
	if c.deleting {
		return false, nil
	}
	finalizer := r.Settings.Persistence.Finalizer
	requires := r.requiresFinalizer(c, c.logger) || (r.hasSpawning() && (c.mem.spawnMatched || !c.mem.spawnDone)) ||
		r.reconcileFinalizerNeeded(c.b, c.mem, c.logger)
	var rv string
	switch {
	case requires && !c.hasFinalizer:
		c.logger.Debug("Adding the finalizer, thus preventing the actual deletion.")
		rv, err = r.addFinalizer(ctx, c.b, finalizer)
	case !requires && c.hasFinalizer:
		c.logger.Debug("Removing the finalizer, as there are no handlers requiring it.")
		rv, err = r.removeFinalizer(ctx, c.b, finalizer)
	default:
		return false, nil
	}
	c.s.Expect(rv)
	return true, err
}

// idle reports whether nothing of interest has changed (a noop or resume
// cause with no matching handlers); resuming is then over for the object.
// It logs at debug level what Kopf logs for these causes: for an object
// found unchanged at the operator's start with no resume handlers to run,
// "Resuming is in progress: <body>" (Kopf logs every handler cause, even
// without handlers); for a change outside the essence, "Something has
// changed, but we are not interested (the essence is the same).".
func (c *cycleState) idle(ctx context.Context) bool {
	r := c.detected.Reason
	if (r == causes.Noop || r == causes.Resume) && len(c.handlers) == 0 {
		c.mem.resumed = true
		if r == causes.Resume {
			c.logProgress(ctx)
		} else {
			c.logger.Debug("Something has changed, but we are not interested (the essence is the same).")
		}
		c.logger.Debug("Handling cycle is finished, waiting for new changes.")
		return true
	}
	return false
}

// logProgress logs the cause with the object and its diff, as Kopf does on
// every cycle of a handler cause (create, update, delete, resume), even
// with no handlers to run, "to show what has happened and why the
// diff-base is patched": "<Title> is in progress: <body>", then, unless
// creating, "<Title> diff: <diff>". The body dump costs a JSON encoding of
// the whole object: only when debug logging is on.
func (c *cycleState) logProgress(ctx context.Context) {
	d := &c.detected
	if d.Reason == causes.Noop || !c.logger.Enabled(ctx, slog.LevelDebug) {
		return
	}
	c.logger.Debug(fmt.Sprintf("%s is in progress: %s", d.Reason.Title(), compact(c.b)))
	if len(d.Diff) > 0 && d.Old != nil { // as Kopf: no diff is logged on creation
		c.logger.Debug(fmt.Sprintf("%s diff: %s", d.Reason.Title(), d.Diff))
	}
}

// storeOutcome puts into p what is to be persisted of the handlers'
// outcome: when all are finished, their progress is purged and the new
// diff-base stored (unless deleting, or nothing changed); any change also
// makes the object's touch-dummy obsolete.
func (r *Reactor) storeOutcome(c *cycleState, p patches.Patch, outcome handlersOutcome) {
	ps := r.Settings.Persistence
	d := &c.detected
	if outcome.done {
		for _, id := range outcome.ids {
			ps.ProgressStorage.Purge(c.b, p, id)
		}
		if d.Reason != causes.Delete && (d.Old == nil || len(d.Diff) > 0) {
			ps.DiffBaseStorage.Store(c.b, p, d.Essence)
		}
	}
	if !p.IsEmpty() {
		ps.ProgressStorage.Touch(c.b, p, nil) // a real change makes the touch obsolete
	}
}

// applyOutcome sends the cycle's patch and expects its resourceVersion on
// the stream. A patch the API server rejects as invalid marks the essence
// as rejected, so that it is not handled again until it changes.
func (r *Reactor) applyOutcome(ctx context.Context, c *cycleState, p patches.Patch) (string, error) {
	rv, err := r.apply(ctx, c.b, p)
	if err != nil {
		var invalid *invalidPatchError
		if errors.As(err, &invalid) {
			c.mem.rejected, _ = progress.EncodeEssence(c.detected.Essence)
		}
		return "", err
	}
	c.s.Expect(rv)
	return rv, nil
}

// releaseFinalizer removes our finalizer once the deletion is handled, from
// the version rv that the cycle's own patch produced (if any).
func (r *Reactor) releaseFinalizer(ctx context.Context, c *cycleState, rv string) error {
	c.logger.Debug("Removing the finalizer, thus allowing the actual deletion.")
	fresh := c.b
	if rv != "" {
		fresh = withResourceVersion(c.b, rv)
	}
	rv, err := r.removeFinalizer(ctx, fresh, r.Settings.Persistence.Finalizer)
	if rv != "" {
		// The API server answers this removal with the previous
		// resourceVersion, so versions that still show our finalizer
		// may follow: they are stale, the deletion is handled for good.
		c.mem.released = true
	}
	c.s.Expect(rv)
	return err
}

// sleepAndTouch ends the cycle, when nothing was written, with a requeue
// after the earliest delayed handler's delay (see Reactor.resume): the
// object is then touched, so that a new event wakes the next cycle. New
// changes of the object interrupt the wait.
func (r *Reactor) sleepAndTouch(c *cycleState, delay time.Duration) {
	c.logger.Debug(fmt.Sprintf("Sleeping for %s seconds for the delayed handlers.", seconds(delay)))
	c.mem.wait, c.mem.delay = waitDelayed, delay
}

// touch patches the object b with the progress storage's touch (the
// current time), so that its event starts the next cycle.
func (r *Reactor) touch(ctx context.Context, b body.Body, s *queueing.Stream) error {
	if ctx.Err() != nil {
		return nil
	}
	touch := patches.New()
	now := progress.FormatTime(time.Now())
	r.Settings.Persistence.ProgressStorage.Touch(b, touch, &now)
	rv, err := r.apply(ctx, b, touch)
	s.Expect(rv)
	return err
}

type handlersOutcome struct {
	done              bool // every handler is finished (succeeded or failed)
	succeeded, failed int
	delay             time.Duration // the shortest wait for a delayed handler
	due               bool          // a handler is due now but left to a later cycle
	ids               []string      // every progress id involved, to purge when done
	failedIDs         []string
	cancelled         bool          // the operator is exiting: the outcome is not to be stored
	observed          []Observation // the attempts made, for Reactor.Observe
	tally             tally         // the attempts made, for Reactor.ObserveProcessed
}

// runHandlers runs one handler that is due (Kopf's default "asap"
// lifecycle: the one with the fewest retries), records its progress in p,
// and reports whether all are finished. One handler per cycle means each
// outcome is stored before the next handler starts, so a crash never makes
// a succeeded handler run again. The ids of the handlers are prefixed (for
// sub-handlers: "parent/").
//
// The records are Kopf's (progression.State): every handler that has no
// record for the cause yet gets one in the first patch, run or not,
// {"started":<now>,"purpose":<cause>,"retries":0,"success":false,
// "failure":false}, so that started, runtime and timeout= of the handlers
// that run later count from the cause's first cycle; the same holds for
// sub-handlers from their parent's first run that declares them. A record
// carries subrefs sorted and without duplicates: the ids of its sub-handlers
// of every depth, those of its previous record included. A parent with
// unfinished sub-handlers is recorded as Kopf records its
// HandlerChildrenRetry: delayed until now plus the sub-handlers' delay (0
// when one is due), retries+1, and the message "None" (Python's str() of
// that exception, which has no message).
//
// The attempts made are appended to observed (a buffer reused between
// cycles; nil: a new one) for Reactor.Observe, if set.
func (r *Reactor) runHandlers(ctx context.Context, b body.Body, p patches.Patch, base *kwargs.Changing, prefix string, handlers []*registry.ChangingHandler, logger *slog.Logger, observed []Observation) handlersOutcome {
	run := &handlersRun{
		r: r, b: b, p: p, base: base, prefix: prefix, logger: logger,
		ps:      r.Settings.Persistence.ProgressStorage,
		now:     time.Now(),
		purpose: string(base.Reason),
		out:     handlersOutcome{done: true, observed: observed},
	}
	chosen := pick(run.ps, b, prefix, run.purpose, handlers, run.now)
	for _, h := range handlers {
		id := prefix + h.ID
		rec := run.record(id)
		switch {
		case run.settled(id, rec):
		case h != chosen:
			run.postpone(id, rec)
		case run.execute(ctx, h, id, rec):
			return run.out // interrupted by the operator's exit
		}
	}
	return run.out
}

// handlersRun is one walk of runHandlers through the handlers of one level
// (a cause's handlers, or a parent's sub-handlers): what its steps share.
type handlersRun struct {
	r       *Reactor
	b       body.Body
	p       patches.Patch
	base    *kwargs.Changing
	prefix  string
	logger  *slog.Logger
	ps      progress.ProgressStorage
	now     time.Time // the cycle's start: the records' "started" and what is due
	purpose string    // the cause, as the records name it
	out     handlersOutcome
}

// record returns the progress record of the handler id for this cause:
// nil when it has none, when it is malformed (logged), or when it is left
// from another cause (superseded). The handler's id and those of its
// recorded sub-handlers join the ids to purge when all are done.
func (run *handlersRun) record(id string) *progress.Record {
	run.out.ids = append(run.out.ids, id)
	rec, err := run.ps.Fetch(run.b, id)
	if err != nil {
		run.logger.Error(fmt.Sprintf("The progress of Handler '%s' is malformed and is treated as absent: %v", id, err))
		return nil
	}
	if rec != nil && rec.Purpose != nil && *rec.Purpose != run.purpose {
		return nil // left from another cause: superseded
	}
	if rec != nil {
		run.out.ids = append(run.out.ids, rec.Subrefs...)
	}
	return rec
}

// settled counts a handler whose record says it is finished (succeeded or
// failed) or delayed past now, and reports that it does not run now.
func (run *handlersRun) settled(id string, rec *progress.Record) bool {
	out := &run.out
	switch {
	case rec == nil:
		return false
	case rec.Success:
		out.succeeded++
	case rec.Failure:
		out.failed++
		out.failedIDs = append(out.failedIDs, id)
	case rec.Delayed != nil && rec.Delayed.After(run.now):
		out.done = false
		out.delay = minDelay(out.delay, rec.Delayed.Sub(run.now))
	default:
		return false
	}
	return true
}

// postpone leaves a handler that is due, but not chosen, to a later cycle
// (after this one's patch); one with no record yet gets its first record,
// so that its started, runtime and timeout= count from this cycle.
func (run *handlersRun) postpone(id string, rec *progress.Record) {
	run.out.done = false
	run.out.due = true
	if rec == nil {
		fresh, purpose := run.now, run.purpose
		run.ps.Store(run.b, run.p, id, &progress.Record{Started: &fresh, Purpose: &purpose})
	}
}

// execute makes one attempt of the chosen handler h (and of its
// sub-handlers, through finish), observes it, and stores its new record
// into the patch. It reports whether the attempt was interrupted by the
// operator's exit: the walk then ends, and nothing of it is to be stored.
func (run *handlersRun) execute(ctx context.Context, h *registry.ChangingHandler, id string, rec *progress.Record) (cancelled bool) {
	r, out := run.r, &run.out
	att := execution.Attempt{Started: run.now}
	if rec != nil {
		att.Retry = rec.Retries
		if rec.Started != nil {
			att.Started = *rec.Started
		}
	}
	hctx, subs := registry.WithSubhandlers(ctx)
	named := *h
	named.ID = id
	started, purpose := att.Started, run.purpose
	next := &progress.Record{Started: &started, Purpose: &purpose, Retries: att.Retry + 1}
	if rec != nil {
		next.Subrefs = subrefs(rec.Subrefs, nil)
	}
	att.Finish = func(result any) execution.Outcome {
		return run.finish(ctx, id, next, subs.List(), result)
	}
	var began time.Time
	if r.Observe != nil {
		began = time.Now()
	}
	res := execution.Execute(hctx, &named, narrow(run.base, h.Field), att, r.Settings.Execution.DefaultBackoff, run.logger)
	// Interrupted by the operator's exit, not failed: the next operator
	// run retries it without counting this attempt.
	interrupted := ctx.Err() != nil && !res.Final()
	out.tally.note(res, interrupted)
	if r.Observe != nil {
		obs := r.observation(run.b, id, run.base.Reason, att.Retry, res)
		obs.Started, obs.Duration = began, time.Since(began)
		obs.Interrupted = interrupted
		out.observed = append(out.observed, obs)
	}
	if interrupted {
		out.done, out.cancelled = false, true
		return true
	}
	run.store(id, next, res)
	return false
}

// finish completes an attempt whose handler function returned without an
// error: with no sub-handlers declared, the handler succeeded; otherwise
// its sub-handlers run (one per cycle, as handlers do, under the parent's
// id) and decide its outcome: unfinished ones retry the parent (Kopf's
// HandlerChildrenRetry), failed ones fail it for good.
func (run *handlersRun) finish(ctx context.Context, id string, next *progress.Record, children []*registry.ChangingHandler, result any) execution.Outcome {
	if len(children) == 0 {
		return execution.Outcome{Success: true, Result: result}
	}
	r, out := run.r, &run.out
	sub := r.runHandlers(ctx, run.b, run.p, run.base, id+"/", r.matching(children, fixedSource{run.base}, run.logger), run.logger, nil)
	out.ids = append(out.ids, sub.ids...)
	out.observed = append(out.observed, sub.observed...)
	out.tally.failed = out.tally.failed || sub.tally.failed
	out.tally.terminal = out.tally.terminal || sub.tally.terminal
	out.tally.retries += sub.tally.retries
	next.Subrefs = subrefs(next.Subrefs, sub.ids)
	switch {
	case !sub.done:
		run.logger.Debug(fmt.Sprintf("Handler '%s' has unfinished sub-handlers. Will retry soon.", id))
		delay := sub.delay // 0: the next cycle, at once
		if sub.due {
			delay = 0
		}
		return execution.Outcome{Delay: delay, Message: "None"}
	case sub.failed > 0:
		msg := fmt.Sprintf("Some sub-handlers failed: %s", strings.Join(sub.failedIDs, ", "))
		run.logger.Error(fmt.Sprintf("Handler '%s' failed permanently: %s", id, msg))
		return execution.Outcome{Failure: true, Message: msg}
	}
	return execution.Outcome{Success: true, Result: result}
}

// store completes the handler's next record with the attempt's outcome
// (succeeded, failed for good, or delayed), counts it, and puts it into
// the patch, with the handler's result when it succeeded.
func (run *handlersRun) store(id string, next *progress.Record, res execution.Outcome) {
	out := &run.out
	if res.Success {
		if err := execution.MergeResult(run.p, id, res.Result); err != nil {
			run.logger.Error(fmt.Sprintf("Handler '%s' returned a result that cannot be stored: %v", id, err))
		}
	}
	if res.Message != "" {
		msg := res.Message
		next.Message = &msg
	}
	stopped := time.Now()
	switch {
	case res.Success:
		next.Success, next.Stopped = true, &stopped
		out.succeeded++
	case res.Failure:
		next.Failure, next.Stopped = true, &stopped
		out.failed++
		out.failedIDs = append(out.failedIDs, id)
	default:
		delayed := stopped.Add(res.Delay)
		next.Delayed = &delayed
		out.done = false
		out.delay = minDelay(out.delay, res.Delay)
	}
	run.ps.Store(run.b, run.p, id, next)
}

// matches applies a changing handler's filters, as Kopf does: labels and
// annotations on the object; for a field, that it changed (update causes
// and field handlers) and its old/new values; then when=.
func matches(h *registry.ChangingHandler, base *kwargs.Changing) bool {
	if !h.Filter.MatchMeta(&base.Base) {
		return false
	}
	kw := base
	if h.Field != nil {
		kw = narrow(base, h.Field)
		updating := h.FieldHandler || base.Reason == causes.Update
		if updating && len(kw.Diff) == 0 {
			return false
		}
		oldV, oldOK := diffs.Resolve(base.Old, h.Field)
		newV, newOK := diffs.Resolve(base.New, h.Field)
		if !updating {
			newV, newOK = diffs.Resolve(map[string]any(base.Body), h.Field)
		}
		if !h.Filter.MatchValues(oldV, oldOK, newV, newOK, updating, &kw.Base) {
			return false
		}
	} else if !h.Filter.MatchValues(nil, false, nil, false, false, &base.Base) {
		return false
	}
	return h.When == nil || h.When(kw)
}

// narrow returns the kwargs for a handler: a copy, with Old, New and Diff
// reduced to the handler's field if it has one.
func narrow(base *kwargs.Changing, field []string) *kwargs.Changing {
	kw := *base
	if field != nil {
		kw.Old, _ = diffs.Resolve(base.Old, field)
		kw.New, _ = diffs.Resolve(base.New, field)
		kw.Diff = diffs.Reduce(base.Diff, field)
	}
	return &kw
}

// subrefs returns the union of two lists of sub-handler ids, sorted and
// without duplicates (Kopf's sorted(set(old) | set(new))); nil if empty.
func subrefs(old, added []string) []string {
	if len(old)+len(added) == 0 {
		return nil
	}
	out := slices.Concat(old, added)
	slices.Sort(out)
	return slices.Compact(out)
}

func minDelay(cur, d time.Duration) time.Duration {
	if cur <= 0 || d < cur {
		return d
	}
	return cur
}

func compact(b body.Body) string {
	data, err := json.Marshal(b)
	if err != nil {
		return fmt.Sprintf("%v", map[string]any(b))
	}
	return string(data)
}

func withResourceVersion(b body.Body, rv string) body.Body {
	c := make(body.Body, len(b))
	for k, v := range b {
		c[k] = v
	}
	meta := map[string]any{}
	for k, v := range b.Meta() {
		meta[k] = v
	}
	meta["resourceVersion"] = rv
	c["metadata"] = meta
	return c
}

// pick chooses the one handler to run in this cycle, as Kopf's default
// lifecycle (asap) does: of the handlers that are due, the one with the
// fewest retries so far, the first registered on a tie. Running one per
// cycle persists every outcome before the next handler starts, so a crash
// never repeats a handler that has succeeded; the fewest retries first
// keeps a failing handler from holding the others up.
func pick(ps progress.ProgressStorage, b body.Body, prefix, purpose string, handlers []*registry.ChangingHandler, now time.Time) *registry.ChangingHandler {
	var best *registry.ChangingHandler
	fewest := 0
	for _, h := range handlers {
		rec, err := ps.Fetch(b, prefix+h.ID)
		if err != nil || (rec != nil && rec.Purpose != nil && *rec.Purpose != purpose) {
			rec = nil
		}
		retries := 0
		if rec != nil {
			if rec.Success || rec.Failure || (rec.Delayed != nil && rec.Delayed.After(now)) {
				continue
			}
			retries = rec.Retries
		}
		if best == nil || retries < fewest {
			best, fewest = h, retries
		}
	}
	return best
}
