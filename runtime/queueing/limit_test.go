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

// hasStream reports whether the queue keeps a stream for key.
func hasStream(m *Queue, key string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.streams[key]
	return ok
}

// TestQueueLimitUnderLoad: a burst of many objects, each with several
// events, put while the first ones are processed.
func TestQueueLimitUnderLoad(t *testing.T) {
	const objects, events = 200, 5
	for _, limit := range []int{1, 4, 16} {
		t.Run(fmt.Sprintf("limit=%d", limit), func(t *testing.T) {
			var (
				m                 *Queue
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
				if w := int64(m.Active()); w > maxWorkers.Load() {
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
			m, _ = startQueue(t, Options{IdleTimeout: time.Hour, WorkerLimit: limit}, process)

			for rv := 1; rv <= events; rv++ {
				for i := range objects {
					m.Put(event(fmt.Sprintf("o%03d", i), strconv.Itoa(rv)))
					if w := m.Active(); w > limit {
						t.Fatalf("Active() = %d after a Put, want at most %d", w, limit)
					}
				}
			}
			receive(t, done, "the latest version of every object to be processed")
			eventually(t, "the queue to empty", func() bool { return m.Queued() == 0 })

			if got := maxSeen.Load(); got > int64(limit) {
				t.Errorf("%d processors ran at once, want at most %d", got, limit)
			}
			if got := maxWorkers.Load(); got > int64(limit) {
				t.Errorf("Active() = %d during processing, want at most %d", got, limit)
			}
			if got := m.Active(); got > limit {
				t.Errorf("Active() = %d after processing, want at most %d", got, limit)
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

// TestQueueServesTheQueueAsSoonAsASlotFrees: an object queued while every
// worker is busy is served as soon as one is done.
func TestQueueServesTheQueueAsSoonAsASlotFrees(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	r := newRecorder(t, map[string]func(context.Context, *Stream){"a/1": blockUntil(started, release)})
	m, _ := startQueue(t, Options{IdleTimeout: time.Hour, WorkerLimit: 1}, r.process)

	m.Put(event("a", "1"))
	r.expectNext("a", "1")
	receive(t, started, "a/1 to start")
	m.Put(event("b", "1"))
	if got := m.Queued(); got != 1 {
		t.Errorf("Queued() = %d while a/1 is processed, want 1", got)
	}
	close(release)
	r.expectNext("b", "1")
	if got := m.Stats().Workers; got != 1 {
		t.Errorf("Stats().Workers = %d, want 1: the pool's one worker serves b after a", got)
	}
	if got := m.Queued(); got != 0 {
		t.Errorf("Queued() = %d after b is served, want 0", got)
	}
	m.Put(event("a", "2"))
	r.expectNext("a", "2")
}

// TestQueueStopDropsTheRequeues: neither Close nor the context leaves a
// requeue behind: the queue stops at once, and the requeued event is
// never processed.
func TestQueueStopDropsTheRequeues(t *testing.T) {
	tests := []struct {
		name string
		stop func(m *Queue, cancel context.CancelFunc)
	}{
		{name: "cancelled", stop: func(_ *Queue, cancel context.CancelFunc) { cancel() }},
		{name: "closed", stop: func(m *Queue, _ context.CancelFunc) { m.Close() }},
	}
	for _, tt := range tests {
		for _, limit := range []int{0, 1} {
			t.Run(fmt.Sprintf("%s/limit=%d", tt.name, limit), func(t *testing.T) {
				r := newRecorder(t, map[string]func(context.Context, *Stream){
					"a/1": func(_ context.Context, s *Stream) { s.Requeue(event("a", "requeued"), 20*time.Millisecond) },
				})
				m, cancel := startQueue(t, Options{IdleTimeout: time.Hour, WorkerLimit: limit}, r.process)

				m.Put(event("a", "1"))
				r.expectNext("a", "1")
				eventually(t, "a/1's cycle to end", func() bool { return m.Active() == 0 })
				tt.stop(m, cancel)
				waitDone(t, m)
				time.Sleep(50 * time.Millisecond) // past the delay: nothing may come
				close(r.seen)
				for p := range r.seen {
					t.Errorf("%s/%s was processed after the queue stopped", p.key, p.rv)
				}
			})
		}
	}
}

// TestQueueKeepsTheExpectationForTheNextWorker: the reactor expects
// its patch in one cycle and waits for it at the start of the next; between
// the two, the object may have no worker.
func TestQueueKeepsTheExpectationForTheNextWorker(t *testing.T) {
	var m *Queue
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
	m, _ = startQueue(t, Options{IdleTimeout: time.Hour, WorkerLimit: 1}, r.process)

	m.Put(event("a", "1"))
	r.expectNext("a", "1")
	r.expectNext("b", "1") // a's cycle ended; b's begins
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

// TestQueueDropsTheExpectationOfADeletedObject: once the deletion of
// an object is processed, its patched version will never come; a new object
// of the same name must not wait for it.
func TestQueueDropsTheExpectationOfADeletedObject(t *testing.T) {
	var m *Queue
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
	m, _ = startQueue(t, Options{IdleTimeout: time.Hour, WorkerLimit: 1}, r.process)

	m.Put(event("a", "1"))
	r.expectNext("a", "1")
	r.expectNext("b", "1")
	receive(t, startedB, "b/1 to start")
	deletion := event("a", "3")
	deletion.Type = watching.Deleted
	m.Put(deletion)
	close(releaseB)
	r.expectNext("a", "3")
	r.expectNext("c", "1") // a's deletion processed; c's begins
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

// TestQueueCloseDropsTheQueue: queued objects are not processed after
// Close, and the workers exit without a cancellation.
func TestQueueCloseDropsTheQueue(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	r := newRecorder(t, map[string]func(context.Context, *Stream){"a/1": blockUntil(started, release)})
	m, _ := startQueue(t, Options{IdleTimeout: time.Hour, WorkerLimit: 1}, r.process)

	m.Put(event("a", "1"))
	receive(t, started, "a/1 to start")
	m.Put(event("b", "1"))
	m.Put(event("c", "1"))
	m.Put(event("b", "2")) // batched: b is queued once
	if got := m.Queued(); got != 2 {
		t.Fatalf("Queued() = %d, want 2", got)
	}
	m.Close()
	if got := m.Stats().Pending; got != 0 {
		t.Errorf("Stats().Pending = %d after Close, want 0", got)
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
