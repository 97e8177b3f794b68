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

// cycle is one processing cycle of one object version. It returns an error
// only when the cycle should be repeated (e.g. a failed patch).
func (r *Reactor) cycle(ctx context.Context, b body.Body, mem *memory, s *queueing.Stream, logger *slog.Logger) error {
	ps := r.Settings.Persistence
	meta := b.Meta()
	finalizer := ps.Finalizer
	deleting := meta.DeletionTimestamp() != ""
	hasFinalizer := slices.Contains(meta.Finalizers(), finalizer)

	// FREE: being deleted, and nothing of ours holds it.
	if deleting && (!hasFinalizer || mem.released) {
		logger.Debug("Deletion, but we are done with it, and we do not care.")
		return nil
	}

	detected := causes.Detect(causes.Input{
		Body:             b,
		DiffBase:         ps.DiffBaseStorage,
		ExtraFields:      r.Registry.ExtraFields(r.Resource),
		Deleting:         deleting,
		NoticedByListing: mem.noticedByListing,
		Resumed:          mem.resumed,
	}, func(err error) {
		logger.Error(fmt.Sprintf("The diff-base is malformed and is treated as absent: %v", err))
	})
	reason, diff := detected.Reason, detected.Diff
	if mem.rejected != "" && !deleting {
		if encoded, _ := progress.EncodeEssence(detected.Essence); encoded == mem.rejected {
			logger.Debug("The object could not be patched for this essence before; waiting for it to change.")
			return nil
		}
		mem.rejected = ""
	}

	base := kwargs.Changing{
		Resource: kwargs.FromBody(r.Resource, b, nil, logger, mem.memo),
		Reason:   reason,
		Old:      detected.Old,
		New:      detected.New,
		Diff:     diff,
	}
	candidates := r.Registry.ChangingHandlers(r.Resource, reason)
	if detected.Resuming && reason != causes.Resume {
		for _, h := range r.Registry.ChangingHandlers(r.Resource, causes.Resume) {
			if (!deleting || h.Deleted) && !slices.Contains(candidates, h) {
				candidates = append(candidates, h)
			}
		}
	}
	handlers := selectHandlers(candidates, &base)

	// The finalizer: added in a cycle of its own before anything else.
	requiresFinalizer := r.requiresFinalizer(&base)
	if !deleting && requiresFinalizer && !hasFinalizer {
		logger.Debug("Adding the finalizer, thus preventing the actual deletion.")
		rv, err := r.addFinalizer(ctx, b, finalizer)
		s.Expect(rv)
		return err
	}
	if !deleting && !requiresFinalizer && hasFinalizer {
		logger.Debug("Removing the finalizer, as there are no handlers requiring it.")
		rv, err := r.removeFinalizer(ctx, b, finalizer)
		s.Expect(rv)
		return err
	}

	p := patches.New()
	if (reason == causes.Noop || reason == causes.Resume) && len(handlers) == 0 {
		mem.resumed = true
		logger.Debug("Something has changed, but we are not interested (the essence is the same).")
		logger.Debug("Handling cycle is finished, waiting for new changes.")
		return nil
	}
	// The body dump costs a JSON encoding of the whole object: only when
	// debug logging is on.
	if len(handlers) > 0 && logger.Enabled(ctx, slog.LevelDebug) {
		logger.Debug(fmt.Sprintf("%s is in progress: %s", reason.Title(), compact(b)))
		if len(diff) > 0 && detected.Old != nil { // as Kopf: no diff is logged on creation
			logger.Debug(fmt.Sprintf("%s diff: %s", reason.Title(), diff))
		}
	}

	base.Patch = p
	outcome := r.runHandlers(ctx, b, p, &base, "", handlers, logger)

	if outcome.done {
		for _, id := range outcome.ids {
			ps.ProgressStorage.Purge(b, p, id)
		}
		if reason != causes.Delete && (detected.Old == nil || len(detected.Diff) > 0) {
			ps.DiffBaseStorage.Store(b, p, detected.Essence)
		}
	}
	if outcome.cancelled {
		return nil // the operator is exiting: nothing of this cycle is stored
	}
	if !p.IsEmpty() {
		ps.ProgressStorage.Touch(b, p, nil) // a real change makes the touch obsolete
	}

	rv, err := r.apply(ctx, b, p)
	if err != nil {
		var invalid *invalidPatchError
		if errors.As(err, &invalid) {
			mem.rejected, _ = progress.EncodeEssence(detected.Essence)
		}
		return err
	}
	s.Expect(rv)
	if outcome.done {
		if len(handlers) > 0 {
			logger.Info(fmt.Sprintf("%s is processed: %d succeeded; %d failed.", reason.Title(), outcome.succeeded, outcome.failed))
		}
		mem.resumed = true // fully handled once: nothing left to resume
	}

	if outcome.done && reason == causes.Delete && hasFinalizer {
		logger.Debug("Removing the finalizer, thus allowing the actual deletion.")
		fresh := b
		if rv != "" {
			fresh = withResourceVersion(b, rv)
		}
		rv, err := r.removeFinalizer(ctx, fresh, finalizer)
		if rv != "" {
			// The API server answers this removal with the previous
			// resourceVersion, so versions that still show our finalizer
			// may follow: they are stale, the deletion is handled for good.
			mem.released = true
		}
		s.Expect(rv)
		return err
	}
	if outcome.done {
		logger.Debug("Handling cycle is finished, waiting for new changes.")
		return nil
	}
	if rv != "" || outcome.delay <= 0 {
		return nil // the patch's own event starts the next cycle
	}
	// Nothing was written, but some handlers are delayed: sleep, then touch
	// the object so that a new event wakes the next cycle.
	logger.Debug(fmt.Sprintf("Sleeping for %s seconds for the delayed handlers.", seconds(outcome.delay)))
	if left := s.Sleep(ctx, outcome.delay); left > 0 {
		logger.Debug(fmt.Sprintf("Sleeping was interrupted by new changes, %s seconds left.", seconds(left)))
		return nil
	}
	if ctx.Err() != nil {
		return nil
	}
	touch := patches.New()
	now := progress.FormatTime(time.Now())
	ps.ProgressStorage.Touch(b, touch, &now)
	rv, err = r.apply(ctx, b, touch)
	s.Expect(rv)
	return err
}

type handlersOutcome struct {
	done              bool // every handler is finished (succeeded or failed)
	succeeded, failed int
	delay             time.Duration // the shortest wait for a delayed handler
	ids               []string      // every progress id involved, to purge when done
	failedIDs         []string
	cancelled         bool // the operator is exiting: the outcome is not to be stored
}

// runHandlers runs one handler that is due (Kopf's default "asap"
// lifecycle: the one with the fewest retries), records its progress in p,
// and reports whether all are finished. One handler per cycle means each
// outcome is stored before the next handler starts, so a crash never makes
// a succeeded handler run again. The ids of the handlers are prefixed (for
// sub-handlers: "parent/").
func (r *Reactor) runHandlers(ctx context.Context, b body.Body, p patches.Patch, base *kwargs.Changing, prefix string, handlers []*registry.ChangingHandler, logger *slog.Logger) handlersOutcome {
	ps := r.Settings.Persistence.ProgressStorage
	out := handlersOutcome{done: true}
	now := time.Now()
	purpose := string(base.Reason)
	chosen := pick(ps, b, prefix, purpose, handlers, now)
	for _, h := range handlers {
		id := prefix + h.ID
		out.ids = append(out.ids, id)
		rec, err := ps.Fetch(b, id)
		if err != nil {
			logger.Error(fmt.Sprintf("The progress of Handler '%s' is malformed and is treated as absent: %v", id, err))
			rec = nil
		}
		if rec != nil && rec.Purpose != nil && *rec.Purpose != purpose {
			rec = nil // left from another cause: superseded
		}
		if rec != nil {
			for _, sub := range rec.Subrefs {
				out.ids = append(out.ids, sub)
			}
		}
		switch {
		case rec != nil && rec.Success:
			out.succeeded++
			continue
		case rec != nil && rec.Failure:
			out.failed++
			out.failedIDs = append(out.failedIDs, id)
			continue
		case rec != nil && rec.Delayed != nil && rec.Delayed.After(now):
			out.done = false
			out.delay = minDelay(out.delay, rec.Delayed.Sub(now))
			continue
		}
		if h != chosen {
			out.done = false // due, but runs in a later cycle, after this one's patch
			continue
		}
		att := execution.Attempt{Started: now}
		if rec != nil {
			att.Retry = rec.Retries
			if rec.Started != nil {
				att.Started = *rec.Started
			}
		}
		kw := narrow(base, h.Field)
		hctx, subs := registry.WithSubhandlers(ctx)
		named := *h
		named.ID = id
		started := att.Started
		next := &progress.Record{Started: &started, Purpose: &purpose, Retries: att.Retry + 1}
		att.Finish = func(result any) execution.Outcome {
			children := subs.List()
			if len(children) == 0 {
				return execution.Outcome{Success: true, Result: result}
			}
			sub := r.runHandlers(ctx, b, p, base, id+"/", selectHandlers(children, base), logger)
			out.ids = append(out.ids, sub.ids...)
			next.Subrefs = sub.ids
			switch {
			case !sub.done:
				logger.Debug(fmt.Sprintf("Handler '%s' has unfinished sub-handlers. Will retry soon.", id))
				return execution.Outcome{Delay: sub.delay} // 0: the next cycle, at once
			case sub.failed > 0:
				msg := fmt.Sprintf("Some sub-handlers failed: %s", strings.Join(sub.failedIDs, ", "))
				logger.Error(fmt.Sprintf("Handler '%s' failed permanently: %s", id, msg))
				return execution.Outcome{Failure: true, Message: msg}
			}
			return execution.Outcome{Success: true, Result: result}
		}
		res := execution.Execute(hctx, &named, kw, att, r.Settings.Execution.DefaultBackoff, logger)
		if ctx.Err() != nil && !res.Final() {
			// Interrupted by the operator's exit, not failed: the next
			// operator run retries it without counting this attempt.
			out.done, out.cancelled = false, true
			return out
		}
		if res.Success {
			if err := mergeResult(p, id, res.Result); err != nil {
				logger.Error(fmt.Sprintf("Handler '%s' returned a result that cannot be stored: %v", id, err))
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
		ps.Store(b, p, id, next)
	}
	return out
}

// selectHandlers keeps the handlers whose filters match the object and the
// change, in order.
func selectHandlers(handlers []*registry.ChangingHandler, base *kwargs.Changing) []*registry.ChangingHandler {
	var out []*registry.ChangingHandler
	for _, h := range handlers {
		if matches(h, base) {
			out = append(out, h)
		}
	}
	return out
}

// matches applies a changing handler's filters, as Kopf does: labels and
// annotations on the object; for a field, that it changed (update causes
// and field handlers) and its old/new values; then when=.
func matches(h *registry.ChangingHandler, base *kwargs.Changing) bool {
	if !h.Filter.MatchMeta(&base.Resource) {
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
		if !h.Filter.MatchValues(oldV, oldOK, newV, newOK, updating, &kw.Resource) {
			return false
		}
	} else if !h.Filter.MatchValues(nil, false, nil, false, false, &base.Resource) {
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

// mergeResult stores a handler's result into status.<id>: maps merged,
// anything else replacing. Typed results are converted to JSON values.
func mergeResult(p patches.Patch, id string, result any) error {
	if result == nil {
		return nil
	}
	if _, ok := result.(map[string]any); !ok {
		data, err := json.Marshal(result)
		if err != nil {
			return err
		}
		var generic any
		if err := json.Unmarshal(data, &generic); err != nil {
			return err
		}
		result = generic
	}
	p.MergeResult(id, result)
	return nil
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
