package reactor

import (
	"context"
	"fmt"
	"hash/fnv"
	"io"

	"github.com/kopf-go/kopf/runtime/body"
	"github.com/kopf-go/kopf/runtime/causes"
	"github.com/kopf-go/kopf/runtime/daemons"
	"github.com/kopf-go/kopf/runtime/execution"
	"github.com/kopf-go/kopf/runtime/kwargs"
	"github.com/kopf-go/kopf/runtime/patches"
	"github.com/kopf-go/kopf/runtime/progress"
	"github.com/kopf-go/kopf/runtime/watching"
)

// The reasons of the observations of daemons and timers (package
// kopftest's causes "daemon" and "timer").
const (
	ReasonDaemon causes.Reason = "daemon"
	ReasonTimer  causes.Reason = "timer"
)

// hasSpawning reports whether the resource has daemons or timers to run.
func (r *Reactor) hasSpawning() bool {
	return r.Daemons != nil && r.Registry.HasSpawning(r.Resource)
}

// spawning gives the object's daemons and timers the latest body (Kopf's
// process_spawning_cause): while the object exists, it starts those whose
// filters match and stops those that no longer match; once it is being
// deleted, it stops them all. The cycle then holds the finalizer while
// they match (spawnMatched) and until they are all done (spawnDone).
func (r *Reactor) spawning(key string, b body.Body, mem *memory) {
	if mem.daemons == nil {
		mem.daemons = r.Daemons.NewObject(r.spawningHost(), b, mem.memo, func() { r.wake(key, mem) })
	}
	changed := false
	if r.hasIdleTimers() {
		sum := r.essenceSum(b)
		changed = sum != mem.essence
		mem.essence = sum
	}
	mem.daemons.Update(b, changed)
	if b.Meta().DeletionTimestamp() != "" {
		mem.spawnDone = mem.daemons.Stop(kwargs.StopDeleted)
		return
	}
	mem.spawnMatched = mem.daemons.Match(r.Registry.DaemonHandlers(r.Resource), r.Registry.TimerHandlers(r.Resource))
	mem.spawnDone = mem.daemons.Done()
}

// hasIdleTimers reports whether a timer of the resource waits for its
// objects to be idle: only then is their essence followed.
func (r *Reactor) hasIdleTimers() bool {
	for _, t := range r.Registry.TimerHandlers(r.Resource) {
		if t.Idle > 0 {
			return true
		}
	}
	return false
}

// essenceSum is a 64-bit FNV-1a hash of the object's essence (encoded as
// Kopf's diff base: spec, labels, annotations, extra fields; not status):
// what is kept of it to see that it changed. A collision, 2^-64 per
// change, would miss one restart of the idle time.
func (r *Reactor) essenceSum(b body.Body) uint64 {
	essence, _ := progress.EncodeEssence(r.Settings.Persistence.DiffBaseStorage.Build(b, r.Registry.ExtraFields(r.Resource)))
	h := fnv.New64a()
	_, _ = io.WriteString(h, essence)
	return h.Sum64()
}

// wake asks for the object to be processed again with its latest body:
// its daemons are done, and its finalizer can be released (or a daemon
// that matches again can start).
func (r *Reactor) wake(key string, mem *memory) {
	if r.Requeue == nil {
		return
	}
	r.Requeue(watching.Event{Type: watching.Modified, Key: key, Object: mem.daemons.Body(), Wakeup: true})
}

// spawningHost returns what the daemons of the resource's objects need of
// the reactor: one for all the objects, made once.
func (r *Reactor) spawningHost() *daemons.Host {
	r.hostOnce.Do(func() {
		r.host = &daemons.Host{
			Resource: r.Resource,
			Cluster:  r.Cluster,
			Logger:   r.lazyObjectLogger,
			Apply: func(ctx context.Context, b body.Body, p patches.Patch) error {
				_, err := r.apply(withLogger(ctx, r.lazyObjectLogger(b)), b, p)
				return err
			},
		}
		if r.Observe != nil {
			r.host.Observe = func(b body.Body, handler, kind string, retry int, out execution.Outcome, interrupted bool) {
				reason, k := ReasonDaemon, KindDaemon
				if kind == "timer" {
					reason, k = ReasonTimer, KindTimer
				}
				obs := r.observation(b, handler, reason, retry, out)
				obs.Interrupted, obs.Kind = interrupted, k
				r.Observe(obs)
			}
		}
	})
	return r.host
}

// spawningCycle is the cycle of an object whose resource has daemons or
// timers but no changing handlers: the finalizer only. It is added while
// a daemon or timer matches, removed when none does, and released from a
// deleted object once they are all done (the object is woken then).
func (r *Reactor) spawningCycle(ctx context.Context, c *cycleState) error {
	if !c.deleting {
		finalizer := r.Settings.Persistence.Finalizer
		var rv string
		var err error
		switch {
		case (c.mem.spawnMatched || r.reconcileFinalizerNeeded(c.b, c.mem, c.logger)) && !c.hasFinalizer:
			c.logger.Debug("Adding the finalizer, thus preventing the actual deletion.")
			rv, err = r.addFinalizer(ctx, c.b, finalizer)
		case !c.mem.spawnMatched && c.hasFinalizer && c.mem.spawnDone && !r.reconcileFinalizerNeeded(c.b, c.mem, c.logger):
			c.logger.Debug("Removing the finalizer, as there are no handlers requiring it.")
			rv, err = r.removeFinalizer(ctx, c.b, finalizer)
		}
		c.s.Expect(rv)
		return err
	}
	if !c.mem.spawnDone {
		c.logger.Debug(fmt.Sprintf("Waiting for the daemons and timers to exit before releasing the object: %v.", c.mem.daemons.Running()))
		return nil
	}
	if r.reconcileHolds(c.mem) {
		c.logger.Debug("Waiting for the reconcile handlers to finish the deletion before releasing the object.")
		return nil // the reconcile step releases it
	}
	return r.releaseFinalizer(ctx, c, "")
}
