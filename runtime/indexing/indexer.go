package indexing

import (
	"context"
	"fmt"
	"log/slog"

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
// indexed objects than workers: Kopf #1243). An Indexer is used by one
// watch at a time.
type Indexer struct {
	Resource resources.Resource
	Handlers []*registry.IndexHandler
	// Logger is the operator's logger; messages about an object carry the
	// object's reference.
	Logger *slog.Logger
}

// Handle indexes one watch event: a deleted object leaves every index of
// the resource; any other event calls the index functions whose filters
// the object matches, and removes the object from the others. Index
// functions, their filters and when= callbacks are user code, called
// through execution.Guard: their errors and panics are logged (as Kopf
// logs an index's, "Handler 'id' failed with an exception and will ignore
// it: ...") and leave the index as it was. Successes are logged at DEBUG
// only: Kopf's terse logger of indices hides them unless verbose, as
// there can be thousands of them.
//
// Index functions get a deep copy of the object, made once per event and
// shared by the index functions (and their callbacks) of the event, as
// event handlers do: what they change in it is seen by no one else.
func (x *Indexer) Handle(ctx context.Context, ev watching.Event) {
	if len(x.Handlers) == 0 || ev.Wakeup {
		return
	}
	if ev.Type == watching.Deleted {
		for _, h := range x.Handlers {
			h.Fn.Discard(ev.Key)
		}
		return
	}
	b := body.Body(ev.Object)
	logger := posting.ForObject(x.Logger, b)
	kw := &kwargs.Index{Base: kwargs.FromBody(x.Resource, b.DeepCopy(), nil, logger, nil)}
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
			continue
		}
		if _, err := execution.Guard(func() (struct{}, error) { return struct{}{}, h.Fn.Index(ctx, &hkw, ev.Key) }); err != nil {
			logger.Error(fmt.Sprintf("%s failed with an exception and will ignore it: %s", name, err))
			execution.LogPanicStack(logger, err)
		} else if logger.Enabled(ctx, slog.LevelDebug) {
			logger.Debug(name + " succeeded.")
		}
	}
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
