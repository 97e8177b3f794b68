package queueing

import (
	"context"
	"sync"
	"time"

	"github.com/kopf-go/kopf/runtime/watching"
)

// Stream is the backlog of one object: at most one pending event (the
// latest), plus the resourceVersions seen since an expectation was set.
type Stream struct {
	// Guarded by the multiplexer's lock; mux is nil for a stream of no
	// multiplexer.
	key    string
	mux    *Multiplexer
	owned  bool // a worker owns the object (processing, sleeping or idle)
	queued bool // the object is in the ready queue

	mu       sync.Mutex
	latest   *watching.Event
	signal   chan struct{}
	expected string
	arrived  bool
	// since is when the pending event's object got it: the arrival of the
	// oldest event batched into it; taken is that of the event taken last,
	// slept how long its processor has slept in Sleep since.
	since time.Time
	taken time.Time
	slept time.Duration
}

func newStream() *Stream { return &Stream{signal: make(chan struct{}, 1)} }

// put makes ev the pending event; it reports whether the stream had none
// pending before (a Wakeup with one pending is dropped: false).
func (s *Stream) put(ev watching.Event) (added bool) {
	s.mu.Lock()
	if ev.Wakeup && s.latest != nil {
		s.mu.Unlock() // the pending event wakes the worker anyway
		return false
	}
	if s.latest != nil && s.latest.Initial {
		ev.Initial = true // keep the first-listing mark through batching
	}
	added = s.latest == nil
	if added {
		s.since = time.Now()
	}
	s.latest = &ev
	if s.expected != "" && resourceVersion(ev) == s.expected {
		s.arrived = true
	}
	s.mu.Unlock()
	select {
	case s.signal <- struct{}{}:
	default:
	}
	return added
}

func (s *Stream) take() (watching.Event, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.latest == nil {
		return watching.Event{}, false
	}
	ev := *s.latest
	s.latest = nil
	s.taken, s.slept = s.since, 0
	return ev, true
}

// Arrived returns when the event being processed arrived: the oldest of
// the events batched into it (the processed one is the latest of them).
// Only the processor may call it.
func (s *Stream) Arrived() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.taken
}

// Slept returns how long the processor has slept in Sleep while
// processing the event taken last. Only the processor may call it.
func (s *Stream) Slept() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.slept
}

func (s *Stream) pending() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.latest != nil
}

// expecting reports whether an expectation is outstanding.
func (s *Stream) expecting() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.expected != ""
}

// Expect records that the object was just patched to this resourceVersion,
// so that WaitExpected can tell when the patch has come back.
func (s *Stream) Expect(rv string) {
	s.mu.Lock()
	// The watch stream may have delivered that version before the patcher
	// got here: it is then pending (the worker is busy with the patcher).
	s.expected = rv
	s.arrived = rv != "" && s.latest != nil && resourceVersion(*s.latest) == rv
	s.mu.Unlock()
}

// WaitExpected waits until the expected resourceVersion has arrived in the
// stream (or none is expected), up to timeout, or until ctx is done or the
// multiplexer is closed (no event will arrive then: see Stopping). It
// reports whether the version arrived.
// Events that arrive meanwhile stay pending for the worker loop. The
// expectation may have been set in the object's previous cycle, by another
// worker; the worker keeps its slot while it waits (the wait is short).
func (s *Stream) WaitExpected(ctx context.Context, timeout time.Duration) bool {
	if s.settled() { // the usual case: no timer needed
		return true
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
			s.expected, s.arrived = "", false
			s.mu.Unlock()
			return false
		case <-s.signal:
			// Check again. The worker loop takes pending events without
			// needing the signal, so consuming it here loses nothing.
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
		s.expected, s.arrived = "", false
	}
	return done
}

// Sleep waits for d, or until a new event arrives, ctx is done or the
// multiplexer is closed (the operator is exiting: see Stopping). It reports
// how much of d was left when interrupted (0 if it slept fully).
//
// With a worker limit, the sleeping processor does not hold a worker slot:
// Sleep gives it up for the sleep and takes one back before it returns,
// waiting for one if none is free (that wait is not counted in what it
// reports). It must be called by the processor, from the worker's
// goroutine.
func (s *Stream) Sleep(ctx context.Context, d time.Duration) time.Duration {
	if s.pending() {
		return d
	}
	if m := s.mux; m != nil && m.limit > 0 {
		m.lend()
		defer m.reclaim(ctx)
	}
	start := time.Now()
	defer func() {
		s.mu.Lock()
		s.slept += time.Since(start)
		s.mu.Unlock()
	}()
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			return 0
		case <-ctx.Done():
		case <-s.closing():
		case <-s.signal:
			// A signal with nothing pending is left over from an event that
			// the worker loop took without waiting: keep sleeping.
			if !s.pending() {
				continue
			}
			// The new event stays pending for the worker loop.
		}
		break
	}
	left := d - time.Since(start)
	if left < 0 {
		left = 0
	}
	return left
}

// Pending reports whether a newer event is waiting.
func (s *Stream) Pending() bool { return s.pending() }

// Stopping reports whether the stream's multiplexer is closed or its
// context done: the operator is exiting, no event will come, and the
// processor should return as soon as what it has started is finished.
func (s *Stream) Stopping() bool {
	if s.mux == nil {
		return false
	}
	return s.mux.isClosed() || s.mux.ctx.Err() != nil
}

// closing is closed when the stream's multiplexer is closed (nil, never
// ready, for a stream of no multiplexer).
func (s *Stream) closing() <-chan struct{} {
	if s.mux == nil {
		return nil
	}
	return s.mux.closing
}

func resourceVersion(ev watching.Event) string {
	meta, _ := ev.Object["metadata"].(map[string]any)
	rv, _ := meta["resourceVersion"].(string)
	return rv
}
