package daemons

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/kopf-go/kopf/runtime/body"
	"github.com/kopf-go/kopf/runtime/diffs"
	"github.com/kopf-go/kopf/runtime/execution"
	"github.com/kopf-go/kopf/runtime/kwargs"
	"github.com/kopf-go/kopf/runtime/patches"
	"github.com/kopf-go/kopf/runtime/registry"
	"github.com/kopf-go/kopf/runtime/resources"
)

// Host is what the Objects of one resource need of the reactor that
// serves it, shared by all of them.
type Host struct {
	Resource resources.Resource
	// Cluster is the name of the resource's cluster in a fleet operator,
	// which the handlers' kwargs carry; "" in a single-cluster operator.
	Cluster string
	// Logger returns the logger of the object b (Kopf's per-object
	// logger); made when needed, not kept between a timer's ticks.
	Logger func(b body.Body) *slog.Logger
	// Apply sends a patch of the outcome of an attempt (results into
	// status.<id>, the handler's own changes) to the object b.
	Apply func(ctx context.Context, b body.Body, p patches.Patch) error
	// Observe, if set, is told how every attempt on the object b ended:
	// the handler's id, "daemon" or "timer", the retry, the outcome, and
	// whether it was interrupted by a stop.
	Observe func(b body.Body, handler, kind string, retry int, out execution.Outcome, interrupted bool)

	nameOnce sync.Once
	name     string // Resource.String(), for the hooks: formatted once

	handlersMu sync.Mutex
	handlers   map[handlerKey]string // the handlers' names in the log, by kind and id
}

type handlerKey struct {
	daemon bool
	id     string
}

// resourceName returns the resource's kopf-style name, formatted on first
// use (a timer's every tick reports it).
func (h *Host) resourceName() string {
	h.nameOnce.Do(func() { h.name = h.Resource.String() })
	return h.name
}

// handlerName returns the handler's name as Kopf logs it: "Daemon 'x'",
// "Timer 'x'". Made once per handler of the resource (not per object, not
// per tick).
func (h *Host) handlerName(daemon bool, id string) string {
	h.handlersMu.Lock()
	defer h.handlersMu.Unlock()
	key := handlerKey{daemon, id}
	if name, ok := h.handlers[key]; ok {
		return name
	}
	name := "Timer '" + id + "'"
	if daemon {
		name = "Daemon '" + id + "'"
	}
	if h.handlers == nil {
		h.handlers = map[handlerKey]string{}
	}
	h.handlers[key] = name
	return name
}

// Object holds the daemons and timers of one object. The reactor calls its
// methods from the object's worker; runners call back from their own
// goroutines.
type Object struct {
	e    *Engine
	host *Host
	memo kwargs.Memo
	// wake asks the reactor to process the object again (with its latest
	// body): called when its runners are all done after a stop for its
	// deletion, or one is done after a stop for its filters, so that its
	// finalizer is released or a runner that matches again is started.
	// Nil: nothing is woken.
	wake func()

	mu        sync.Mutex
	latest    body.Body // the object as last seen (the reactor's: copied for user code)
	idleReset time.Time // the last change of the essence
	running   []*runner // a few per object: a slice is smaller than a map
	forever   []string  // ids of runners done on their own: never started again
	deleted   bool
	reported  map[string]bool // the ids whose filters' panics are reported
}

// NewObject returns the daemons' state of an object first seen with body
// b (its idle time counts from now), with its memo and its wake function
// (see Object.wake).
func (e *Engine) NewObject(h *Host, b body.Body, memo kwargs.Memo, wake func()) *Object {
	o := &Object{e: e, host: h, memo: memo, wake: wake, latest: b, idleReset: time.Now()}
	e.mu.Lock()
	e.objects[o] = struct{}{}
	e.mu.Unlock()
	return o
}

// Forget is called when the reactor forgets the object (it is gone): its
// runners are stopped as for a deletion, and the engine drops it.
func (o *Object) Forget() {
	o.Stop(kwargs.StopDeleted)
	o.e.mu.Lock()
	delete(o.e.objects, o)
	o.e.mu.Unlock()
}

// Update records the latest body of the object; changed says that its
// essence changed (not its status), which restarts the timers' idle time.
func (o *Object) Update(b body.Body, changed bool) {
	o.mu.Lock()
	o.latest = b
	var wake []*runner
	if changed {
		o.idleReset = time.Now()
		for _, r := range o.running {
			wake = append(wake, r)
		}
	}
	o.mu.Unlock()
	for _, r := range wake {
		r.changed()
	}
}

// latestCopy returns a copy of the latest body for user code.
func (o *Object) latestCopy() body.Body {
	o.mu.Lock()
	b := o.latest
	o.mu.Unlock()
	return b.DeepCopy()
}

// logger returns the object's logger.
func (o *Object) logger() *slog.Logger {
	if o.host.Logger == nil {
		return o.e.logger
	}
	return o.host.Logger(o.latestOwn())
}

// find returns the runner of the id, nil if none.
func (o *Object) find(id string) *runner {
	for _, r := range o.running {
		if r.id == id {
			return r
		}
	}
	return nil
}

// latestOwn returns the latest body, the reactor's: never for user code.
func (o *Object) latestOwn() body.Body {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.latest
}

func (o *Object) idleSince() time.Time {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.idleReset
}

// Match starts the daemons and timers whose filters match the latest body
// and that do not run yet (nor have ended on their own), and stops the
// running ones whose filters no longer match (kwargs.StopFiltersMismatch).
// It reports whether any matches: the object then needs the finalizer.
func (o *Object) Match(daemons []*registry.DaemonHandler, timers []*registry.TimerHandler) bool {
	o.mu.Lock()
	b := o.latest
	deleted := o.deleted
	o.mu.Unlock()
	if deleted {
		return false
	}
	var own kwargs.Base
	var user *kwargs.Base
	ownKw := func() *kwargs.Base {
		if own.Body == nil {
			own = kwargs.FromBody(o.host.Resource, b, nil, nil, o.memo)
			own.Cluster = o.host.Cluster
		}
		return &own
	}
	userKw := func() *kwargs.Base {
		if user == nil {
			u := kwargs.FromBody(o.host.Resource, b.DeepCopy(), patches.New(), o.logger(), o.memo)
			u.Cluster = o.host.Cluster
			user = &u
		}
		return user
	}
	matched := map[string]bool{}
	var start []*runner
	for _, h := range daemons {
		if o.matches(h.ID, h.Field, &h.Filter, h.When != nil, func() bool {
			return h.When(&kwargs.Daemon{Base: *userKw(), Param: h.Param})
		}, ownKw, userKw) {
			matched[h.ID] = true
			start = append(start, &runner{daemon: h})
		}
	}
	for _, h := range timers {
		if o.matches(h.ID, h.Field, &h.Filter, h.When != nil, func() bool {
			return h.When(&kwargs.Timer{Base: *userKw(), Param: h.Param})
		}, ownKw, userKw) {
			matched[h.ID] = true
			start = append(start, &runner{timer: h})
		}
	}
	var stop []*runner
	o.mu.Lock()
	for _, r := range o.running {
		if !matched[r.id] {
			stop = append(stop, r)
		}
	}
	var started []*runner
	for _, r := range start {
		r.init(o)
		if o.find(r.id) != nil || slices.Contains(o.forever, r.id) {
			continue
		}
		r.prepare()
		if !o.e.register(r) {
			continue // the operator exits or pauses
		}
		o.running = append(o.running, r)
		started = append(started, r)
	}
	o.mu.Unlock()
	for _, r := range stop {
		r.stop(kwargs.StopFiltersMismatch)
	}
	for _, r := range started {
		r.start()
	}
	return len(matched) > 0
}

// matches applies a daemon's or timer's filters, as Kopf does for
// spawning handlers: labels and annotations, value= at the field, then
// when=. Callbacks get user code's copy, through execution.Guard: a panic
// does not match (logged once per handler while the object is served).
func (o *Object) matches(id string, field []string, f interface {
	MatchMeta(*kwargs.Base) bool
	MatchValues(any, bool, any, bool, bool, *kwargs.Base) bool
	HasCallbacks() bool
}, hasWhen bool, when func() bool, own, user func() *kwargs.Base) bool {
	kw := own
	if f.HasCallbacks() || hasWhen {
		kw = user
	}
	ok, err := execution.Guard(func() (bool, error) {
		if !f.MatchMeta(kw()) {
			return false, nil
		}
		if field != nil {
			v, present := diffs.Resolve(map[string]any(kw().Body), field)
			if !f.MatchValues(nil, false, v, present, false, kw()) {
				return false, nil
			}
		} else if !f.MatchValues(nil, false, nil, false, false, kw()) {
			return false, nil
		}
		return !hasWhen || when(), nil
	})
	if err != nil {
		o.mu.Lock()
		first := !o.reported[id]
		if o.reported == nil {
			o.reported = map[string]bool{}
		}
		o.reported[id] = true
		o.mu.Unlock()
		if first {
			logger := o.logger()
			logger.Error(fmt.Sprintf("The filters of '%s' failed; it does not match: %v", id, err))
			execution.LogPanicStack(logger, err)
		}
		return false
	}
	return ok
}

// Stop tells every runner of the object to stop for the reason (for
// kwargs.StopDeleted: for good, none starts again) and reports whether
// all are done (exited, or left orphaned): only then may the object's
// finalizer be released. When they are done later, Host.Wake is called.
func (o *Object) Stop(reason *kwargs.StopReason) (done bool) {
	o.mu.Lock()
	if reason == kwargs.StopDeleted {
		o.deleted = true
	}
	runners := make([]*runner, 0, len(o.running))
	for _, r := range o.running {
		runners = append(runners, r)
	}
	o.mu.Unlock()
	for _, r := range runners {
		r.stop(reason)
	}
	return o.Done()
}

// Done reports whether no runner of the object is left to wait for.
func (o *Object) Done() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.running) == 0
}

// Running returns the ids of the object's runners not done yet.
func (o *Object) Running() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	out := make([]string, 0, len(o.running))
	for _, r := range o.running {
		out = append(out, r.id)
	}
	return out
}

// finished removes a runner that is done; own: it ended on its own (not
// asked to stop), and is never started again for this object.
func (o *Object) finished(r *runner, own bool, reason *kwargs.StopReason) {
	o.mu.Lock()
	if i := slices.Index(o.running, r); i >= 0 {
		o.running = slices.Delete(o.running, i, i+1)
	}
	if own {
		o.forever = append(o.forever, r.id)
	}
	empty := len(o.running) == 0
	o.mu.Unlock()
	o.e.unregister(r)
	if o.wake != nil && ((empty && reason == kwargs.StopDeleted) || reason == kwargs.StopFiltersMismatch) {
		o.wake()
	}
}

// Body returns the latest body of the object, as the reactor gave it (not
// for user code).
func (o *Object) Body() body.Body { return o.latestOwn() }
