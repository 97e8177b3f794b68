// Package queueing runs one worker per object, as Kopf does: events of one
// object are processed strictly in order, one at a time; objects are
// processed in parallel with no fixed pool. A worker exists only while its
// object has events to process and exits after an idle timeout, so memory
// is spent on busy objects only.
//
// Events that arrive while the worker is busy are batched: only the latest
// one is processed next (older versions of an object are obsolete once a
// newer one is known). The processor can wait inside a cycle for newer
// events through the Stream it is given.
package queueing

import (
	"context"
	"sync"
	"time"

	"github.com/kopf-go/kopf/runtime/watching"
)

// Processor handles one event of one object. It may use the stream to wait
// for newer events of the same object.
type Processor func(ctx context.Context, ev watching.Event, s *Stream)

// Multiplexer dispatches events to per-object workers.
type Multiplexer struct {
	process     Processor
	idleTimeout time.Duration

	mu      sync.Mutex
	streams map[string]*Stream
	wg      sync.WaitGroup
	ctx     context.Context
	closing chan struct{}
	closed  bool
}

// NewMultiplexer returns a multiplexer whose workers run until ctx is done.
func NewMultiplexer(ctx context.Context, idleTimeout time.Duration, process Processor) *Multiplexer {
	return &Multiplexer{ctx: ctx, process: process, idleTimeout: idleTimeout, streams: map[string]*Stream{}, closing: make(chan struct{})}
}

// Close stops accepting events and lets every worker exit as soon as it has
// finished the event it is processing now; pending events are dropped (the
// next operator run will see the objects in its listing). Wait then waits
// for the workers; cancelling the multiplexer's context makes them hurry.
func (m *Multiplexer) Close() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.closed {
		m.closed = true
		close(m.closing)
	}
}

// Put hands an event to its object's worker, starting one if needed. It
// never blocks on processing.
func (m *Multiplexer) Put(ev watching.Event) {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return
	}
	s, ok := m.streams[ev.Key]
	if !ok {
		s = newStream()
		m.streams[ev.Key] = s
		m.wg.Add(1)
		go m.worker(ev.Key, s)
	}
	s.put(ev)
	m.mu.Unlock()
}

// Workers returns how many workers are alive.
func (m *Multiplexer) Workers() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.streams)
}

// Wait blocks until every worker has exited (after ctx is done).
func (m *Multiplexer) Wait() { m.wg.Wait() }

func (m *Multiplexer) worker(key string, s *Stream) {
	defer m.wg.Done()
	for {
		ev, ok := s.take()
		if !ok {
			select {
			case <-m.ctx.Done():
				m.remove(key, s)
				return
			case <-m.closing:
				m.remove(key, s)
				return
			case <-s.signal:
				continue
			case <-time.After(m.idleTimeout):
				// Exit only if nothing arrived meanwhile: Put holds the lock
				// while it adds, so the check and the removal are atomic.
				m.mu.Lock()
				if s.pending() {
					m.mu.Unlock()
					continue
				}
				delete(m.streams, key)
				m.mu.Unlock()
				return
			}
		}
		if m.ctx.Err() != nil || m.isClosed() {
			m.remove(key, s)
			return
		}
		m.process(m.ctx, ev, s)
	}
}

func (m *Multiplexer) isClosed() bool {
	select {
	case <-m.closing:
		return true
	default:
		return false
	}
}

func (m *Multiplexer) remove(key string, s *Stream) {
	m.mu.Lock()
	if m.streams[key] == s {
		delete(m.streams, key)
	}
	m.mu.Unlock()
}

// Stream is the backlog of one object: at most one pending event (the
// latest), plus the resourceVersions seen since an expectation was set.
type Stream struct {
	mu       sync.Mutex
	latest   *watching.Event
	signal   chan struct{}
	expected string
	arrived  bool
}

func newStream() *Stream { return &Stream{signal: make(chan struct{}, 1)} }

func (s *Stream) put(ev watching.Event) {
	s.mu.Lock()
	if s.latest != nil && s.latest.Initial {
		ev.Initial = true // keep the first-listing mark through batching
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
}

func (s *Stream) take() (watching.Event, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.latest == nil {
		return watching.Event{}, false
	}
	ev := *s.latest
	s.latest = nil
	return ev, true
}

func (s *Stream) pending() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.latest != nil
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
// stream (or none is expected), up to timeout. It reports whether it did.
// Events that arrive meanwhile stay pending for the worker loop.
func (s *Stream) WaitExpected(ctx context.Context, timeout time.Duration) bool {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		done := s.expected == "" || s.arrived
		if done {
			s.expected, s.arrived = "", false
		}
		s.mu.Unlock()
		if done {
			return true
		}
		select {
		case <-ctx.Done():
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

// Sleep waits for d, or until a new event arrives, or ctx is done. It
// reports how much of d was left when interrupted (0 if it slept fully).
func (s *Stream) Sleep(ctx context.Context, d time.Duration) time.Duration {
	if s.pending() {
		return d
	}
	start := time.Now()
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			return 0
		case <-ctx.Done():
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

func resourceVersion(ev watching.Event) string {
	meta, _ := ev.Object["metadata"].(map[string]any)
	rv, _ := meta["resourceVersion"].(string)
	return rv
}
