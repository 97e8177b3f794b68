package reactor

import (
	"fmt"
	"log/slog"
	"sync/atomic"

	"github.com/kopf-go/kopf/runtime/execution"
	"github.com/kopf-go/kopf/runtime/registry"
)

// matching returns the handlers whose filters match the object and the
// change, in order. A handler whose filters panic does not match.
func (r *Reactor) matching(handlers []*registry.ChangingHandler, src kwSource, logger *slog.Logger) []*registry.ChangingHandler {
	var out []*registry.ChangingHandler
	for _, h := range handlers {
		if r.matches(h, src, logger) {
			out = append(out, h)
		}
	}
	return out
}

// matches applies a changing handler's filters through execution.Guard:
// labels, annotations, value/old/new and when= callbacks are user code. A
// panic in any of them makes the handler not match (see filterFailed).
// Callbacks get user code's kwargs from src; filters without them look at
// the reactor's own.
func (r *Reactor) matches(h *registry.ChangingHandler, src kwSource, logger *slog.Logger) bool {
	base := src.own()
	if h.HasCallbacks() {
		base = src.user()
	}
	ok, err := execution.Guard(func() (bool, error) { return matches(h, base), nil })
	r.filterFailed(base.UID, h.ID, string(base.Reason), err, logger)
	return ok
}

// filterFailed reports a panic of a handler's filters (err, a
// *execution.PanicError) at ERROR with the panic's value, and its stack at
// DEBUG, once per object, handler and cause: filters are evaluated on
// every event, and one broken callback must not flood the log. A nil err
// (the filters worked) re-arms the report, so a later failure is logged
// again. The reports are forgotten with the object.
func (r *Reactor) filterFailed(uid, id, cause string, err error, logger *slog.Logger) {
	if err == nil && r.failingObjects.Load() == 0 {
		return // the common case, without the lock
	}
	key := id + "\x00" + cause
	r.mu.Lock()
	defer r.mu.Unlock()
	seen := r.failedFilters[uid]
	if err == nil {
		if seen != nil {
			delete(seen, key)
			if len(seen) == 0 {
				delete(r.failedFilters, uid)
				r.failingObjects.Add(-1)
			}
		}
		return
	}
	if seen[key] {
		return
	}
	if seen == nil {
		if r.failedFilters == nil {
			r.failedFilters = map[string]map[string]bool{}
		}
		seen = map[string]bool{}
		r.failedFilters[uid] = seen
		r.failingObjects.Add(1)
	}
	seen[key] = true
	logger.Error(fmt.Sprintf("Handler '%s' does not match: its filters have failed: %v", id, err))
	execution.LogPanicStack(logger, err)
}

// forgetFailedFiltersLocked drops the filter reports of an object; r.mu is held.
func (r *Reactor) forgetFailedFiltersLocked(uid string) {
	if _, ok := r.failedFilters[uid]; ok {
		delete(r.failedFilters, uid)
		r.failingObjects.Add(-1)
	}
}

// filterReports are a Reactor's reports of failed filters.
type filterReports struct {
	failingObjects atomic.Int32 // len(failedFilters), readable without the lock
}
