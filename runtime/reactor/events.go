package reactor

import (
	"context"
	"log/slog"
	"time"

	"github.com/kopf-go/kopf/runtime/body"
	"github.com/kopf-go/kopf/runtime/diffs"
	"github.com/kopf-go/kopf/runtime/execution"
	"github.com/kopf-go/kopf/runtime/kwargs"
	"github.com/kopf-go/kopf/runtime/patches"
	"github.com/kopf-go/kopf/runtime/queueing"
	"github.com/kopf-go/kopf/runtime/registry"
	"github.com/kopf-go/kopf/runtime/watching"
)

// runEventHandlers calls the on.event handlers with the raw event. They
// keep no state and cause no writes: whatever they put into their Patch is
// discarded, as in Kopf. They, and their when= and filter callbacks, get a
// deep copy of the object, made once per event and only when user code is
// to see it; each handler gets its own Patch.
func (r *Reactor) runEventHandlers(ctx context.Context, ev watching.Event, s *queueing.Stream, mem *memory, logger *slog.Logger) {
	handlers := r.Registry.EventHandlers(r.Resource)
	if len(handlers) == 0 {
		return
	}
	var typ any
	if ev.Type != watching.Listed {
		typ = string(ev.Type)
	}
	b := body.Body(ev.Object)
	kwFor := func(b body.Body) *kwargs.Event {
		kw := &kwargs.Event{
			Base:  kwargs.FromBody(r.Resource, b, patches.New(), logger, mem.memo),
			Type:  string(ev.Type),
			Event: map[string]any{"type": typ, "object": map[string]any(b)},
		}
		kw.Cluster = r.Cluster
		return kw
	}
	own := kwFor(b) // for filters without callbacks, which change nothing
	userKw := func() *kwargs.Event {
		kw := kwFor(b.DeepCopy())
		kw.ShareDecoded() // typed handlers decode it once per event
		return kw
	}
	var user *kwargs.Event
	for _, h := range handlers {
		kw := own
		if h.HasCallbacks() {
			if user == nil {
				user = userKw()
			}
			kw = user
		}
		ok, err := execution.Guard(func() (bool, error) { return matchesEvent(h, kw), nil })
		r.filterFailed(own.UID, h.ID, "event", err, logger)
		if !ok {
			continue
		}
		if user == nil {
			user = userKw()
		}
		hkw := *user // Param is the handler's own
		hkw.Patch = patches.New()
		var started time.Time
		if r.Observe != nil {
			started = time.Now()
		}
		err = execution.ExecuteEvent(ctx, h, &hkw, logger)
		if err != nil { // logged, never retried: a failure for good
			mem.tally.failed, mem.tally.terminal = true, true
		}
		if r.Observe != nil {
			res := execution.Outcome{Success: err == nil}
			if err != nil {
				res = execution.Outcome{Failure: true, Message: err.Error()}
			}
			obs := r.observation(b, h.ID, "", 0, res)
			obs.Kind, obs.Started, obs.Duration, obs.Arrived = KindEvent, started, time.Since(started), s.Arrived()
			r.Observe(obs)
		}
	}
}

// matchesEvent applies an event handler's filters: labels and annotations,
// the value at its field, then when=. They are user code: call it through
// execution.Guard.
func matchesEvent(h *registry.EventHandler, kw *kwargs.Event) bool {
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
