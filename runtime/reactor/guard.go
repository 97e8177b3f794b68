package reactor

import (
	"fmt"
	"log/slog"
	"sync"
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
	if !r.filterReports.note(uid, id+"\x00"+cause, err != nil) {
		return
	}
	logger.Error(fmt.Sprintf("Handler '%s' does not match: its filters have failed: %v", id, err))
	execution.LogPanicStack(logger, err)
}

// filterReports remembers, per object UID, the handlers and causes whose
// filters failed and are reported. The zero value is ready to use.
type filterReports struct {
	mu      sync.Mutex
	failed  map[string]map[string]bool // by UID, then by handler and cause
	objects atomic.Int32               // len(failed), readable without the lock
}

// note records whether the filters of key failed for the object, and
// reports whether this failure is new and to be logged.
func (f *filterReports) note(uid, key string, failed bool) (report bool) {
	if !failed && f.objects.Load() == 0 {
		return false // the common case, without the lock
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	seen := f.failed[uid]
	if !failed {
		if seen[key] {
			delete(seen, key)
			if len(seen) == 0 {
				f.forgetLocked(uid)
			}
		}
		return false
	}
	if seen[key] {
		return false
	}
	if seen == nil {
		if f.failed == nil {
			f.failed = map[string]map[string]bool{}
		}
		seen = map[string]bool{}
		f.failed[uid] = seen
		f.objects.Add(1)
	}
	seen[key] = true
	return true
}

// forget drops the reports of an object.
func (f *filterReports) forget(uid string) {
	if f.objects.Load() == 0 {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.forgetLocked(uid)
}

func (f *filterReports) forgetLocked(uid string) {
	if _, ok := f.failed[uid]; ok {
		delete(f.failed, uid)
		f.objects.Add(-1)
	}
}
