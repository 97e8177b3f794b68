package indexing

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/kopf-go/kopf/runtime/body"
	"github.com/kopf-go/kopf/runtime/diffs"
	"github.com/kopf-go/kopf/runtime/execution"
	"github.com/kopf-go/kopf/runtime/kwargs"
	"github.com/kopf-go/kopf/runtime/posting"
	"github.com/kopf-go/kopf/runtime/registry"
	"github.com/kopf-go/kopf/runtime/resources"
	"github.com/kopf-go/kopf/runtime/watching"
)

// Indexer keeps the indices of one resource up to date. The operator calls
// Handle from the watch's callback, for every event, before the event goes
// to the object's worker: indexing needs no worker, so it never waits for
// one (Kopf indexes in the workers, which deadlocks a start-up with more
// indexed objects than workers: Kopf #1243). The watches of several
// namespaces may share an Indexer.
type Indexer struct {
	Resource resources.Resource
	// Cluster is the name of the resource's cluster in a fleet operator,
	// which the index functions' kwargs carry; "" in a single-cluster
	// operator.
	Cluster  string
	Handlers []*registry.IndexHandler
	// Logger is the operator's logger; messages about an object carry the
	// object's reference.
	Logger *slog.Logger
	// Backoff is the delay of errors=temporary without backoff= (the
	// settings' Execution.DefaultBackoff; 0: 60 s, Kopf's).
	Backoff time.Duration

	mu sync.Mutex
	// failures are the objects whose index function failed with a
	// temporary or permanent outcome, by index and object: only those.
	failures map[failureKey]*failure
}

type failureKey struct {
	h   *registry.IndexHandler
	obj string
}

// failure is an object excluded from an index: for good (permanent) or
// until a time.
type failure struct {
	retries   int
	started   time.Time
	until     time.Time
	permanent bool
}

// Handle indexes one watch event: a deleted object leaves every index of
// the resource; any other event calls the index functions whose filters
// the object matches, and removes the object from the others. Index
// functions, their filters and when= callbacks are user code, called
// through execution.Guard: their errors and panics are logged (as Kopf
// logs an index's, "Handler 'id' failed with an exception and will ignore
// it: ..."); a failing filter leaves the index as it was. Successes are logged at DEBUG
// only: Kopf's terse logger of indices hides them unless verbose, as
// there can be thousands of them.
//
// Index functions get a deep copy of the object, made once per event and
// shared by the index functions (and their callbacks) of the event, as
// event handlers do: what they change in it is seen by no one else.
//
// How errors are judged and logged is execution.Classify's, in Kopf's
// words, with the index's errors=, timeout=, retries= and backoff=
// (registry.IndexHandler): by default, errors are ignored and the
// object's values stay, stale, until its next event.
func (x *Indexer) Handle(ctx context.Context, ev watching.Event) {
	if len(x.Handlers) == 0 || ev.Wakeup {
		return
	}
	if ev.Type == watching.Deleted {
		for _, h := range x.Handlers {
			h.Fn.Discard(ev.Key)
			x.forget(h, ev.Key)
		}
		return
	}
	b := body.Body(ev.Object)
	logger := posting.ForObject(x.Logger, b)
	kw := &kwargs.Index{Base: kwargs.FromBody(x.Resource, b.DeepCopy(), nil, logger, nil)}
	kw.Cluster = x.Cluster
	kw.ShareDecoded()
	for _, h := range x.Handlers {
		name := fmt.Sprintf("Handler '%s'", h.ID)
		hkw := *kw
		hkw.Param = h.Param
		ok, err := execution.Guard(func() (bool, error) { return matches(h, &hkw), nil })
		if err != nil {
			logger.Error(fmt.Sprintf("%s's filters failed with an exception and will ignore it: %s", name, err))
			execution.LogPanicStack(logger, err)
			continue
		}
		if !ok {
			h.Fn.Discard(ev.Key)
			x.forget(h, ev.Key)
			continue
		}
		now := time.Now()
		att := execution.Attempt{Started: now}
		if f := x.failure(h, ev.Key); f != nil {
			if f.permanent || now.Before(f.until) {
				continue // excluded from the index, for now or for good
			}
			att = execution.Attempt{Retry: f.retries, Started: f.started}
		}
		hkw.Retry, hkw.Started, hkw.Runtime = att.Retry, att.Started, now.Sub(att.Started)
		_, err = execution.Guard(func() (struct{}, error) { return struct{}{}, h.Fn.Index(ctx, &hkw, ev.Key) })
		if err == nil {
			x.forget(h, ev.Key)
			if logger.Enabled(ctx, slog.LevelDebug) {
				logger.Debug(name + " succeeded.")
			}
			continue
		}
		errs := h.Errors
		if errs == "" {
			errs = registry.ErrorsIgnored // Kopf's default for indices
		}
		spec := execution.Spec{Name: name, Errors: errs, Timeout: h.Timeout, Retries: h.Retries, Backoff: h.Backoff}
		backoff := x.Backoff
		if backoff <= 0 {
			backoff = execution.DefaultTemporaryDelay
		}
		switch out := execution.Classify(ctx, spec, att, hkw.Runtime, nil, err, backoff, logger); {
		case out.Success: // ignored: the stale values stay until the next event
			x.forget(h, ev.Key)
		case out.Failure:
			h.Fn.Discard(ev.Key)
			x.exclude(h, ev.Key, &failure{permanent: true})
		case out.Delay > 0:
			h.Fn.Discard(ev.Key)
			x.exclude(h, ev.Key, &failure{retries: att.Retry + 1, started: att.Started, until: now.Add(out.Delay)})
		}
	}
}

func (x *Indexer) failure(h *registry.IndexHandler, obj string) *failure {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.failures[failureKey{h, obj}]
}

func (x *Indexer) exclude(h *registry.IndexHandler, obj string, f *failure) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.failures == nil {
		x.failures = map[failureKey]*failure{}
	}
	x.failures[failureKey{h, obj}] = f
}

func (x *Indexer) forget(h *registry.IndexHandler, obj string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	delete(x.failures, failureKey{h, obj})
}

// matches applies an index's filters: labels and annotations, the value
// at its field, then when=.
func matches(h *registry.IndexHandler, kw *kwargs.Index) bool {
	if !h.Filter.MatchMeta(&kw.Base) {
		return false
	}
	if h.Field != nil {
		v, ok := diffs.Resolve(map[string]any(kw.Body), h.Field)
		if !h.Filter.MatchValues(nil, false, v, ok, false, &kw.Base) {
			return false
		}
	} else if !h.Filter.MatchValues(nil, false, nil, false, false, &kw.Base) {
		return false
	}
	return h.When == nil || h.When(kw)
}
