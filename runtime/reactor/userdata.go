package reactor

import (
	"reflect"
	"time"

	"github.com/kopf-go/kopf/runtime/body"
	"github.com/kopf-go/kopf/runtime/causes"
	"github.com/kopf-go/kopf/runtime/diffs"
	"github.com/kopf-go/kopf/runtime/kwargs"
)

// What user code gets is its own to change. The reactor computes the cause,
// the essence and the diff-base from the object version as received, and
// never lets user code see those maps: handlers, when= and filter callbacks
// get a deep copy of the body, and of Old, New and Diff (whose values are
// parts of the essence to be stored). The copy is made at most once per
// cycle (and once per event for on.event handlers), and only when user
// code is about to see it: filters without callbacks look at the reactor's
// own data, which they do not change.

// kwSource gives filters the kwargs to look at.
type kwSource interface {
	// own returns the reactor's kwargs, never given to user code.
	own() *kwargs.Changing
	// user returns user code's kwargs: a copy, made on first use.
	user() *kwargs.Changing
}

// own is the cycle's own kwargs.
func (c *cycleState) own() *kwargs.Changing { return &c.base }

// user returns user code's kwargs of the cycle, copying c.base on first use.
func (c *cycleState) user() *kwargs.Changing {
	if c.userKw == nil {
		c.userKw = userCopy(&c.base)
	}
	return c.userKw
}

// userCopy returns a copy of kw that shares nothing mutable with it, but
// the Memo (user code's by design), the Patch and the Logger.
func userCopy(kw *kwargs.Changing) *kwargs.Changing {
	u := *kw
	u.Base = kwargs.FromBody(kw.Resource, kw.Body.DeepCopy(), kw.Patch, kw.Logger, kw.Memo)
	u.Cluster = kw.Cluster
	u.Old = body.DeepCopyValue(kw.Old)
	u.New = body.DeepCopyValue(kw.New)
	// A value that is the whole old or new essence (the one "add" of a
	// creation) is that copy again, not a third one.
	same := func(v, whole, copied any) any {
		if m, ok := v.(map[string]any); ok && m != nil {
			if w, ok := whole.(map[string]any); ok && reflect.ValueOf(m).UnsafePointer() == reflect.ValueOf(w).UnsafePointer() {
				return copied
			}
		}
		return body.DeepCopyValue(v)
	}
	if kw.Diff != nil {
		u.Diff = make(diffs.Diff, len(kw.Diff))
		for i, item := range kw.Diff {
			u.Diff[i] = diffs.Item{
				Op:   item.Op,
				Path: append([]string(nil), item.Path...),
				Old:  same(item.Old, kw.Old, u.Old),
				New:  same(item.New, kw.New, u.New),
			}
		}
	}
	// Typed handlers and callbacks decode this copy, once per cycle: its
	// copies (narrowed to fields, given to sub-handlers) share the cache.
	u.ShareDecoded()
	return &u
}

// fixedSource is kwargs that are user code's already (those a handler got,
// for the filters of its sub-handlers).
type fixedSource struct{ kw *kwargs.Changing }

func (f fixedSource) own() *kwargs.Changing  { return f.kw }
func (f fixedSource) user() *kwargs.Changing { return f.kw }

// asDeletion is a source's kwargs as for a deletion: what decides whether
// the finalizer is needed.
type asDeletion struct {
	src           kwSource
	ownKw, userKw *kwargs.Changing
}

func (d *asDeletion) own() *kwargs.Changing {
	if d.ownKw == nil {
		kw := *d.src.own()
		kw.Reason = causes.Delete
		d.ownKw = &kw
	}
	return d.ownKw
}

func (d *asDeletion) user() *kwargs.Changing {
	if d.userKw == nil {
		kw := *d.src.user()
		kw.Reason = causes.Delete
		d.userKw = &kw
	}
	return d.userKw
}

// handlersKwargs returns the kwargs for runHandlers: user code's copy if a
// handler may run in this cycle (one that has neither succeeded nor failed
// for the cause yet), else the reactor's own, which no handler then sees.
func (c *cycleState) handlersKwargs(r *Reactor) *kwargs.Changing {
	purpose := string(c.detected.Reason)
	ps := r.Settings.Persistence.ProgressStorage
	// pick at the end of time: any handler that is not finished is due.
	if pick(ps, c.b, "", purpose, c.handlers, endOfTime) == nil {
		return &c.base
	}
	return c.user()
}

var endOfTime = time.Unix(1<<62, 0)
