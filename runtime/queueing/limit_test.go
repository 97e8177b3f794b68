package queueing

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kopf-go/kopf/runtime/watching"
)

// Tests of the worker limit, each exceeding it. A long idle timeout makes
// any wait for it fail the test (by failAfter) instead of passing late.

// waiters returns how many sleepers wait to get a slot back.
func waiters(m *Multiplexer) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.waiters)
}

// hasStream reports whether the multiplexer keeps a stream for key.
func hasStream(m *Multiplexer, key string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.streams[key]
	return ok
}

// TestMultiplexerLimitUnderLoad: a burst of many objects, each with several
// events, put while the first ones are processed.
func TestMultiplexerLimitUnderLoad(t *testing.T) {
	const objects, events = 200, 5
	for _, limit := range []int{1, 4, 16} {
		t.Run(fmt.Sprintf("limit=%d", limit), func(t *testing.T) {
			var (
				m                 *Multiplexer
				running, maxSeen  atomic.Int64
				maxWorkers        atomic.Int64
				mu                sync.Mutex
				last              = map[string]int{} // the last version processed, by key
				latestSeen        = map[string]int{} // times the latest version was processed, by key
				done              = make(chan struct{})
				remaining         = objects
				errOnce           sync.Once
				processedTwiceErr string
			)
			process := func(_ context.Context, ev watching.Event, _ *Stream) {
				n := running.Add(1)
				defer running.Add(-1)
				for {
					if old := maxSeen.Load(); n <= old || maxSeen.CompareAndSwap(old, n) {
						break
					}
				}
				if w := int64(m.Workers()); w > maxWorkers.Load() {
					maxWorkers.Store(w) // racy maximum: only ever an underestimate
				}
				time.Sleep(50 * time.Microsecond) // let processors overlap
				rv, _ := strconv.Atoi(resourceVersion(ev))
				mu.Lock()
				defer mu.Unlock()
				if rv <= last[ev.Key] {
					errOnce.Do(func() { processedTwiceErr = fmt.Sprintf("%s: version %d processed after %d", ev.Key, rv, last[ev.Key]) })
				}
				last[ev.Key] = rv
				if rv == events {
					latestSeen[ev.Key]++
					if latestSeen[ev.Key] == 1 {
						if remaining--; remaining == 0 {
							close(done)
						}
					}
				}
			}
			m, _ = startMultiplexer(t, Options{IdleTimeout: time.Hour, WorkerLimit: limit}, process)

			for rv := 1; rv <= events; rv++ {
				for i := range objects {
					m.Put(event(fmt.Sprintf("o%03d", i), strconv.Itoa(rv)))
					if w := m.Workers(); w > limit {
						t.Fatalf("Workers() = %d after a Put, want at most %d", w, limit)
					}
				}
			}
			receive(t, done, "the latest version of every object to be processed")
			eventually(t, "the queue to empty", func() bool { return m.Queued() == 0 })

			if got := maxSeen.Load(); got > int64(limit) {
				t.Errorf("%d processors ran at once, want at most %d", got, limit)
			}
			if got := maxWorkers.Load(); got > int64(limit) {
				t.Errorf("Workers() = %d during processing, want at most %d", got, limit)
			}
			if got := m.Workers(); got > limit {
				t.Errorf("Workers() = %d after processing, want at most %d", got, limit)
			}
			mu.Lock()
			defer mu.Unlock()
			if processedTwiceErr != "" {
				t.Error(processedTwiceErr)
			}
			for key, n := range latestSeen {
				if n != 1 {
					t.Errorf("%s: the latest version was processed %d times, want once", key, n)
				}
			}
		})
	}
}

// TestMultiplexerServesTheQueueAsSoonAsASlotFrees: a queued object does not
// wait for the idle timeout of the worker that will serve it.
func TestMultiplexerServesTheQueueAsSoonAsASlotFrees(t *testing.T) {
	tests := []struct {
		name string
		// busy: the worker is still processing a/1 when b is queued;
		// otherwise it waits idle for a's next event.
		busy bool
	}{
		{name: "the busy worker finishes", busy: true},
		{name: "the idle worker is woken"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			started, release := make(chan struct{}), make(chan struct{})
			r := newRecorder(t, map[string]func(context.Context, *Stream){"a/1": blockUntil(started, release)})
			m, _ := startMultiplexer(t, Options{IdleTimeout: time.Hour, WorkerLimit: 1}, r.process)
			idle := make(chan struct{}, 1)
			m.onIdle = func() {
				select {
				case idle <- struct{}{}:
				default:
				}
			}

			m.Put(event("a", "1"))
			r.expectNext("a", "1")
			receive(t, started, "a/1 to start")
			if !tt.busy {
				close(release)
				receive(t, idle, "the worker to wait idle for a's next event")
			}
			m.Put(event("b", "1"))
			if tt.busy {
				if got := m.Queued(); got != 1 {
					t.Errorf("Queued() = %d while a/1 is processed, want 1", got)
				}
				close(release)
			}
			r.expectNext("b", "1")
			if got := m.Workers(); got != 1 {
				t.Errorf("Workers() = %d, want 1: the worker serves b after a", got)
			}
			if got := m.Queued(); got != 0 {
				t.Errorf("Queued() = %d after b is served, want 0", got)
			}
			// a is left for b: a's next event is queued, then served.
			m.Put(event("a", "2"))
			r.expectNext("a", "2")
		})
	}
}

// TestMultiplexerSleepDoesNotHoldASlot: a processor sleeping in Stream.Sleep
// lends its slot; it waits for a slot to come back when it wakes up.
func TestMultiplexerSleepDoesNotHoldASlot(t *testing.T) {
	sleeping := make(chan struct{})
	slept := make(chan bool, 1) // whether b/2 was still being processed
	startedB, releaseB := make(chan struct{}), make(chan struct{})
	var releasedB atomic.Bool
	r := newRecorder(t, map[string]func(context.Context, *Stream){
		"a/1": func(ctx context.Context, s *Stream) {
			close(sleeping)
			if left := s.Sleep(ctx, time.Hour); left <= 0 {
				t.Errorf("Sleep() = %v left, want it interrupted", left)
			}
			slept <- !releasedB.Load()
		},
		"b/2": func(ctx context.Context, s *Stream) {
			close(startedB)
			<-releaseB
			releasedB.Store(true)
		},
	})
	m, _ := startMultiplexer(t, Options{IdleTimeout: time.Hour, WorkerLimit: 1}, r.process)

	m.Put(event("a", "1"))
	receive(t, sleeping, "a/1 to sleep")
	m.Put(event("b", "1"))
	r.expectNext("a", "1")
	r.expectNext("b", "1") // while a sleeps for an hour
	m.Put(event("b", "2"))
	r.expectNext("b", "2")
	receive(t, startedB, "b/2 to start")

	// a wakes up while b holds the only slot: it waits for it.
	m.Put(event("a", "2"))
	eventually(t, "a to wait for a slot", func() bool { return waiters(m) == 1 })
	if got := m.Workers(); got != 2 {
		t.Errorf("Workers() = %d, want 2: a's sleeping one and b's", got)
	}
	close(releaseB)
	if receive(t, slept, "a's sleep to return") {
		t.Error("a's Sleep returned while b/2 held the only slot")
	}
	r.expectNext("a", "2")
	eventually(t, "b's worker to hand its slot over and exit", func() bool { return m.Workers() == 1 })
}

// TestMultiplexerStopsWhileASleeperWaitsForASlot: neither Close nor the
// context leaves a processor waiting for its slot forever.
func TestMultiplexerStopsWhileASleeperWaitsForASlot(t *testing.T) {
	tests := []struct {
		name string
		stop func(m *Multiplexer, cancel context.CancelFunc, releaseB chan struct{})
	}{
		{name: "cancelled", stop: func(_ *Multiplexer, cancel context.CancelFunc, _ chan struct{}) { cancel() }},
		{name: "closed", stop: func(m *Multiplexer, _ context.CancelFunc, releaseB chan struct{}) {
			m.Close()
			close(releaseB)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sleeping, startedB, releaseB := make(chan struct{}), make(chan struct{}), make(chan struct{})
			r := newRecorder(t, map[string]func(context.Context, *Stream){
				"a/1": func(ctx context.Context, s *Stream) { close(sleeping); s.Sleep(ctx, time.Hour) },
				"b/1": blockUntil(startedB, releaseB),
			})
			m, cancel := startMultiplexer(t, Options{IdleTimeout: time.Hour, WorkerLimit: 1}, r.process)

			m.Put(event("a", "1"))
			receive(t, sleeping, "a/1 to sleep")
			m.Put(event("b", "1"))
			receive(t, startedB, "b/1 to start")
			m.Put(event("a", "2"))
			eventually(t, "a to wait for a slot", func() bool { return waiters(m) == 1 })
			tt.stop(m, cancel, releaseB)
			waitDone(t, m)
			if got := m.Workers(); got != 0 {
				t.Errorf("Workers() = %d after Wait, want 0", got)
			}
			close(r.seen)
			for p := range r.seen {
				if p.key == "a" && p.rv == "2" {
					t.Error("a/2 was processed after the multiplexer stopped")
				}
			}
		})
	}
}

// TestMultiplexerKeepsTheExpectationForTheNextWorker: the reactor expects
// its patch in one cycle and waits for it at the start of the next; between
// the two, the object may have no worker.
func TestMultiplexerKeepsTheExpectationForTheNextWorker(t *testing.T) {
	var m *Multiplexer
	waited := make(chan bool, 1)
	startedB, releaseB := make(chan struct{}), make(chan struct{})
	r := newRecorder(t, map[string]func(context.Context, *Stream){
		"a/1": func(_ context.Context, s *Stream) {
			s.Expect("2")
			m.Put(event("b", "1")) // queued: a has the only slot
		},
		"b/1": blockUntil(startedB, releaseB),
		"a/2": func(ctx context.Context, s *Stream) { waited <- s.WaitExpected(ctx, long) },
	})
	m, _ = startMultiplexer(t, Options{IdleTimeout: time.Hour, WorkerLimit: 1}, r.process)

	m.Put(event("a", "1"))
	r.expectNext("a", "1")
	r.expectNext("b", "1") // the worker left a for b
	receive(t, startedB, "b/1 to start")
	if !hasStream(m, "a") {
		t.Error("a's stream was forgotten while its expectation is outstanding")
	}
	m.Put(event("a", "2")) // the patched version, while a has no worker
	if got := m.Queued(); got != 1 {
		t.Errorf("Queued() = %d, want 1: a waits for the busy worker", got)
	}
	close(releaseB)
	if !receive(t, waited, "a/2 to wait for the expected version") {
		t.Error("WaitExpected() = false, want true at once: the patched version has arrived")
	}
	r.expectNext("a", "2")
}

// TestMultiplexerDropsTheExpectationOfADeletedObject: once the deletion of
// an object is processed, its patched version will never come; a new object
// of the same name must not wait for it.
func TestMultiplexerDropsTheExpectationOfADeletedObject(t *testing.T) {
	var m *Multiplexer
	waited := make(chan bool, 1)
	startedB, releaseB := make(chan struct{}), make(chan struct{})
	startedC, releaseC := make(chan struct{}), make(chan struct{})
	r := newRecorder(t, map[string]func(context.Context, *Stream){
		"a/1": func(_ context.Context, s *Stream) {
			s.Expect("2")
			m.Put(event("b", "1")) // queued: a has the only slot
		},
		"b/1": blockUntil(startedB, releaseB),
		"a/3": func(context.Context, *Stream) { m.Put(event("c", "1")) }, // the deletion
		"c/1": blockUntil(startedC, releaseC),
		"a/4": func(ctx context.Context, s *Stream) { waited <- s.WaitExpected(ctx, long) },
	})
	m, _ = startMultiplexer(t, Options{IdleTimeout: time.Hour, WorkerLimit: 1}, r.process)

	m.Put(event("a", "1"))
	r.expectNext("a", "1")
	r.expectNext("b", "1")
	receive(t, startedB, "b/1 to start")
	deletion := event("a", "3")
	deletion.Type = watching.Deleted
	m.Put(deletion)
	close(releaseB)
	r.expectNext("a", "3")
	r.expectNext("c", "1") // the worker left a for c
	receive(t, startedC, "c/1 to start")
	if hasStream(m, "a") {
		t.Error("a's stream is kept after its deletion was processed")
	}
	m.Put(event("a", "4")) // a new object of the same name
	close(releaseC)
	if !receive(t, waited, "a/4 to wait for an expected version") {
		t.Error("WaitExpected() = false, want true at once: nothing is expected of a new object")
	}
}

// TestMultiplexerCloseDropsTheQueue: queued objects are not processed after
// Close, and the workers exit without a cancellation.
func TestMultiplexerCloseDropsTheQueue(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	r := newRecorder(t, map[string]func(context.Context, *Stream){"a/1": blockUntil(started, release)})
	m, _ := startMultiplexer(t, Options{IdleTimeout: time.Hour, WorkerLimit: 1}, r.process)

	m.Put(event("a", "1"))
	receive(t, started, "a/1 to start")
	m.Put(event("b", "1"))
	m.Put(event("c", "1"))
	m.Put(event("b", "2")) // batched: b is queued once
	if got := m.Queued(); got != 2 {
		t.Fatalf("Queued() = %d, want 2", got)
	}
	m.Close()
	if got := m.Queued(); got != 0 {
		t.Errorf("Queued() = %d after Close, want 0", got)
	}
	close(release)
	waitDone(t, m)
	close(r.seen)
	for p := range r.seen {
		if p.key != "a" {
			t.Errorf("%s/%s was processed after Close", p.key, p.rv)
		}
	}
}
