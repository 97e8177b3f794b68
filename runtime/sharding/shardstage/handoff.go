package shardstage

import (
	"context"
	"fmt"
	"time"

	"github.com/kopf-go/kopf/runtime/daemons"
	"github.com/kopf-go/kopf/runtime/kwargs"
	"github.com/kopf-go/kopf/runtime/sharding"
)

// Lose stops the objects of the buckets given up, and returns once none
// is processed here any more and their daemons and timers are stopped (or
// after HandoffTimeout, having abandoned what is left). The steps: the
// buckets are disowned (no event of theirs is admitted or processed from
// now on, their requeues included), their watches stopped (in the label
// and server modes: the objects leave without any event), the daemons
// stopped, and the cycles still in progress awaited (no cycle sleeps: a
// delay is a requeue), then abandoned.
func (s *Stage) Lose(ctx context.Context, buckets []int) {
	start := time.Now()
	set := map[int]bool{}
	for _, b := range buckets {
		set[b] = true
	}
	s.disown(set)
	s.stopWatches(set)
	h := handoff{s: s, buckets: set, daemons: s.stopDaemons(set)}
	if n := h.await(ctx); n > 0 {
		s.cfg.Logger.Warn(fmt.Sprintf("Sharding: %d objects of the buckets given up are still busy after %s seconds; abandoning their cycles.", n, seconds(time.Since(start))))
		h.abandon()
	}
	s.cfg.Logger.Info(fmt.Sprintf("Sharding: stopped %d buckets in %s seconds.", len(buckets), seconds(time.Since(start))))
}

// disown marks the buckets as not owned and forgets their objects (and
// what the fence knows of them).
func (s *Stage) disown(set map[int]bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for b := range set {
		s.owned[b] = false
	}
	for _, l := range s.lanes {
		for key, b := range l.keys {
			if set[b] {
				delete(l.keys, key)
				delete(l.versions, key)
				l.writer.Forget(splitKey(key))
			}
		}
	}
}

// stopDaemons tells the daemons and timers of the buckets' objects to
// stop, and returns their objects.
func (s *Stage) stopDaemons(set map[int]bool) []*daemons.Object {
	if s.Daemons == nil {
		return nil
	}
	var objs []*daemons.Object
	for _, o := range s.Daemons.Objects() {
		meta := o.Body().Meta()
		if b, ok := s.bucket(sharding.ObjectKey(meta.Namespace(), meta.Name()), meta.UID()); ok && set[b] {
			o.Stop(kwargs.StopOperatorPausing)
			objs = append(objs, o)
		}
	}
	return objs
}

// handoff is the work left of the buckets given up.
type handoff struct {
	s       *Stage
	buckets map[int]bool
	daemons []*daemons.Object
}

// busy counts the objects still processed and the daemons still running.
func (h handoff) busy() int {
	n := 0
	h.s.mu.Lock()
	for _, l := range h.s.lanes {
		for _, f := range l.inflight {
			if h.buckets[f.bucket] {
				n++
			}
		}
	}
	h.s.mu.Unlock()
	for _, o := range h.daemons {
		if !o.Done() {
			n++
		}
	}
	return n
}

// await polls until nothing is busy, for up to HandoffTimeout or until
// ctx is done (the replica's lease is about to expire, a moment that its
// renewals move on; or another replica owns the buckets already), and
// returns what is still busy.
func (h handoff) await(ctx context.Context) int {
	timeout := time.NewTimer(h.s.cfg.HandoffTimeout)
	defer timeout.Stop()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for busy := h.busy(); busy > 0; busy = h.busy() {
		if ctx.Err() != nil {
			return busy
		}
		select {
		case <-timeout.C:
			return busy
		case <-ctx.Done():
		case <-tick.C:
		}
	}
	return 0
}

// abandon cancels the cycles in progress: what they would write is not
// sent.
func (h handoff) abandon() {
	h.s.mu.Lock()
	defer h.s.mu.Unlock()
	for _, l := range h.s.lanes {
		for _, f := range l.inflight {
			if h.buckets[f.bucket] {
				f.cancel()
			}
		}
	}
}
