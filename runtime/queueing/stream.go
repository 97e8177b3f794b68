package queueing

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/util/resourceversion"

	"github.com/kopf-go/kopf/runtime/watching"
)

// Stream is the backlog of one object: at most one pending event (the
// latest), the resourceVersions seen since an expectation was set, and the
// requeue of its last cycle.
type Stream struct {
	key string
	q   *Queue // nil for a stream of no queue

	mu sync.Mutex
	// latest is the pending event if has; signal (made by WaitExpected,
	// nil until then) is told of each new one.
	latest   watching.Event
	has      bool
	signal   chan struct{}
	expected string
	arrived  bool
	// overdue: the expectation outlived the idle timeout unmet; the next
	// WaitExpected gives it up at once (the processor reads the object).
	overdue bool
	// since is when the pending event's object got it: the arrival of the
	// oldest event batched into it; taken is that of the event taken last.
	since time.Time
	taken time.Time
	// ended is when the object's last cycle ended (for the idle timeout).
	ended time.Time
	// requeue is what the processor asked for in the cycle in progress;
	// asleep, the requeue waiting for its delay after the cycle.
	requeue *requeue
	asleep  *requeue
	// woke and left are how the last requeue ended, for the cycle now.
	woke Wake
	left time.Duration
}

// requeue is an event to process again once its delay is over.
type requeue struct {
	ev  watching.Event
	d   time.Duration
	due time.Time
}

// Wake is how the delay of a Requeue ended, as the object's next cycle
// sees it (Stream.Woke).
type Wake int

const (
	// NotRequeued: the previous cycle asked for no requeue (or the
	// stream is of no queue, or the operator restarted).
	NotRequeued Wake = iota
	// Elapsed: the delay is over; the event processed is the requeued one.
	Elapsed
	// Interrupted: a newer event of the object arrived before the delay
	// was over (or during the cycle that asked for it); it is the event
	// processed, and the requeued one is dropped.
	Interrupted
)

func newStream() *Stream { return &Stream{} }

// put makes ev the pending event; it reports whether the stream had none
// pending before (a Wakeup with one pending is dropped: false). A pending
// event interrupts the delay of a requeue. An event older than the
// pending one (see older) does not replace it: the pending one keeps its
// place, with ev's first-listing mark.
func (s *Stream) put(ev watching.Event) (added bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ev.Wakeup && s.has {
		return false // the pending event is processed anyway
	}
	if s.expected != "" && resourceVersion(ev) == s.expected {
		s.arrived = true
	}
	if s.has && !s.latest.Wakeup && older(ev, s.latest) {
		s.latest.Initial = s.latest.Initial || ev.Initial
	} else {
		added = s.replace(ev)
	}
	select {
	case s.signal <- struct{}{}: // nil (never ready) unless WaitExpected waits
	default:
	}
	return added
}

// replace makes ev the pending event, keeping the first-listing mark of
// the one it replaces, and says whether none was pending; s.mu is held.
func (s *Stream) replace(ev watching.Event) (added bool) {
	if s.has && s.latest.Initial {
		ev.Initial = true // keep the first-listing mark through batching
	}
	added = !s.has
	if added {
		s.since = time.Now()
	}
	if s.asleep != nil {
		s.woke, s.left = Interrupted, max(time.Until(s.asleep.due), time.Nanosecond)
		s.asleep = nil
	}
	s.latest, s.has = ev, true
	return added
}

// older says whether a is an older version of the object than b: both
// resourceVersions are well formed and a's is the lower, compared as
// apimachinery's resourceversion does (Kubernetes' comparable resource
// versions, KEP-5504: decimal integers, increasing with every write of
// the resource). One watch delivers an object's versions in order; an
// older one arrives after a newer one from another source: the listing of
// a gained bucket (sharding's catch-up) racing the watch, or another
// watch of the object. A version that is not well formed is not compared:
// the latest arrival wins, as before comparable versions.
func older(a, b watching.Event) bool {
	c, err := resourceversion.CompareResourceVersion(resourceVersion(a), resourceVersion(b))
	return err == nil && c < 0
}

// take returns the event to process now: the pending one, else the
// requeued one if its delay is over (wait > 0: it is not, by so much).
// An unmet expectation older than idle becomes overdue: the cycle does
// not wait for it (see WaitExpected). It is not dropped: the event taken
// may be older than the patch (a watch that stalled and brings it late),
// and must not be judged as if it were consistent with it.
func (s *Stream) take(now time.Time, idle time.Duration) (ev watching.Event, wait time.Duration, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.expected != "" && !s.arrived && !s.ended.IsZero() && now.Sub(s.ended) > idle {
		s.overdue = true
	}
	switch {
	case s.has:
		ev = s.latest
		s.latest, s.has = watching.Event{}, false
		s.taken = s.since
		return ev, 0, true
	case s.asleep == nil:
		return ev, 0, false // an interrupted requeue's delay is over: nothing to do
	case now.Before(s.asleep.due):
		return ev, s.asleep.due.Sub(now), false
	}
	ev = s.asleep.ev
	s.woke, s.left, s.taken = Elapsed, 0, s.asleep.due
	s.asleep = nil
	return ev, 0, true
}

// finish ends the cycle of ev: it returns the delay after which the
// object's key is to be added again for its requeue (ok), unless there is
// none, a newer event is pending (the requeue is then interrupted at
// once), or the queue is stopping.
func (s *Stream) finish(ev watching.Event, now time.Time, stopping bool) (d time.Duration, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.woke, s.left, s.ended = NotRequeued, 0, now
	if ev.Type == watching.Deleted {
		s.clearExpected() // the object is gone: none of its versions will come
	}
	r := s.requeue
	s.requeue = nil
	switch {
	case r == nil || stopping:
		return 0, false
	case s.has:
		s.woke, s.left = Interrupted, max(r.d, time.Nanosecond)
		return 0, false
	}
	r.due = now.Add(r.d)
	s.asleep = r
	return r.d, true
}

// drop forgets the pending event and the requeue (the queue is closed).
func (s *Stream) drop() {
	s.mu.Lock()
	s.latest, s.has, s.asleep = watching.Event{}, false, nil
	s.mu.Unlock()
}

// empty reports whether nothing of the stream remains to keep.
func (s *Stream) empty() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.has && s.asleep == nil && s.expected == ""
}

// Requeue ends the cycle with a delay: once the processor returns, ev is
// processed again after d, unless a newer event of the object arrives
// first (that one is then processed, at once, and ev is dropped). The next
// cycle tells which by Woke. The last call of a cycle wins. Only the
// processor may call it.
func (s *Stream) Requeue(ev watching.Event, d time.Duration) {
	s.mu.Lock()
	s.requeue = &requeue{ev: ev, d: d}
	s.mu.Unlock()
}

// Woke reports how the delay of the previous cycle's Requeue ended, and
// for Interrupted, how much of it was left (more than 0). Only the
// processor may call it.
func (s *Stream) Woke() (Wake, time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.woke, s.left
}

// Arrived returns when the event being processed arrived: the oldest of
// the events batched into it (the processed one is the latest of them),
// or for a requeued event, when its delay was over. Only the processor
// may call it.
func (s *Stream) Arrived() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.taken
}

func (s *Stream) pending() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.has
}

// Expect records that the object was just patched to this resourceVersion,
// so that WaitExpected can tell when the patch has come back.
func (s *Stream) Expect(rv string) {
	s.mu.Lock()
	// The watch stream may have delivered that version before the patcher
	// got here: it is then pending (the worker is busy with the patcher).
	s.expected, s.overdue = rv, false
	s.arrived = rv != "" && s.has && resourceVersion(s.latest) == rv
	s.mu.Unlock()
}

// WaitExpected waits until the expected resourceVersion has arrived in the
// stream (or none is expected), up to timeout, or until ctx is done or the
// queue is closed (no event will arrive then: see Stopping). It reports
// whether the version arrived. An expectation that is overdue (unmet for
// longer than Options.IdleTimeout after its cycle) is given up at once:
// false, without waiting. On false (timeout or overdue), the expectation
// is dropped; the processor cannot trust the event it has to be as new as
// its own patch, and reads the object instead.
// Events that arrive meanwhile stay pending for the next cycle. The
// expectation may have been set in the object's previous cycle; the worker
// is held while it waits (the wait is short).
func (s *Stream) WaitExpected(ctx context.Context, timeout time.Duration) bool {
	if s.settled() { // the usual case: no timer needed
		return true
	}
	s.mu.Lock()
	if s.signal == nil {
		s.signal = make(chan struct{}, 1)
	}
	signal, overdue := s.signal, s.overdue
	if overdue {
		s.clearExpected()
	}
	s.mu.Unlock()
	if overdue {
		return false
	}
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		if s.settled() {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-s.closing():
			return false
		case <-deadline.C:
			s.mu.Lock()
			s.clearExpected()
			s.mu.Unlock()
			return false
		case <-signal:
			// Check again. The signal is only a hint: the next cycle takes
			// the pending event whether or not the signal was consumed.
		}
	}
}

// settled clears an expectation that is met and reports whether none is
// outstanding.
func (s *Stream) settled() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	done := s.expected == "" || s.arrived
	if done {
		s.clearExpected()
	}
	return done
}

// clearExpected forgets the expectation; s.mu is held.
func (s *Stream) clearExpected() {
	s.expected, s.arrived, s.overdue = "", false, false
}

// Pending reports whether a newer event is waiting.
func (s *Stream) Pending() bool { return s.pending() }

// Stopping reports whether the stream's queue is closed or its context
// done: the operator is exiting, no event will come, and the processor
// should return as soon as what it has started is finished.
func (s *Stream) Stopping() bool {
	if s.q == nil {
		return false
	}
	return s.q.isClosed() || s.q.ctx.Err() != nil
}

// closing is closed when the stream's queue is closed (nil, never ready,
// for a stream of no queue).
func (s *Stream) closing() <-chan struct{} {
	if s.q == nil {
		return nil
	}
	return s.q.closing
}

// Drive processes ev on a stream of no queue (s: a new one if nil), then
// the requeues that follow it, each after its delay, as a queue would for
// an object with no newer event; it returns when a cycle asks for no
// requeue or ctx is done. It is for tests and tools that run a processor
// on one object without a Queue.
func Drive(ctx context.Context, process Processor, ev watching.Event, s *Stream) {
	if s == nil {
		s = newStream()
	}
	for {
		process(ctx, ev, s)
		d, ok := s.finish(ev, time.Now(), ctx.Err() != nil)
		if !ok {
			return
		}
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		var wait time.Duration
		if ev, wait, ok = s.take(time.Now(), time.Duration(1<<63-1)); !ok || wait > 0 {
			return
		}
	}
}

func resourceVersion(ev watching.Event) string {
	meta, _ := ev.Object["metadata"].(map[string]any)
	rv, _ := meta["resourceVersion"].(string)
	return rv
}
