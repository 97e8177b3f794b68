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

// processed is what a test processor reports for every event it handles.
type processed struct {
	key, rv string
	initial bool
}

// recorder is a processor that reports every event, fails the test if two
// events of one key are ever processed at once, and lets a test hook into
// the processing of particular versions.
type recorder struct {
	t    *testing.T
	seen chan processed
	// hooks run inside the processor, by "key/rv".
	hooks map[string]func(ctx context.Context, s *Stream)

	mu       sync.Mutex
	inflight map[string]int
}

func newRecorder(t *testing.T, hooks map[string]func(ctx context.Context, s *Stream)) *recorder {
	t.Helper()
	return &recorder{t: t, seen: make(chan processed, 1000), hooks: hooks, inflight: map[string]int{}}
}

func (r *recorder) process(ctx context.Context, ev watching.Event, s *Stream) {
	r.mu.Lock()
	r.inflight[ev.Key]++
	if n := r.inflight[ev.Key]; n > 1 {
		r.t.Errorf("%d events of %q are processed at once", n, ev.Key)
	}
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		r.inflight[ev.Key]--
		r.mu.Unlock()
	}()

	rv := resourceVersion(ev)
	r.seen <- processed{key: ev.Key, rv: rv, initial: ev.Initial}
	if hook := r.hooks[ev.Key+"/"+rv]; hook != nil {
		hook(ctx, s)
	}
}

// next returns the next processed event.
func (r *recorder) next() processed {
	r.t.Helper()
	return receive(r.t, r.seen, "an event to be processed")
}

func (r *recorder) expectNext(key, rv string) {
	r.t.Helper()
	if got := r.next(); got.key != key || got.rv != rv {
		r.t.Fatalf("processed %s/%s, want %s/%s", got.key, got.rv, key, rv)
	}
}

// startQueue starts a queue that is stopped, and all of its
// workers waited for, when the test ends.
func startQueue(t *testing.T, opts Options, process Processor) (*Queue, context.CancelFunc) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	m := New(ctx, opts, process)
	t.Cleanup(func() {
		cancel()
		waitDone(t, m)
	})
	return m, cancel
}

func waitDone(t *testing.T, m *Queue) {
	t.Helper()
	done := make(chan struct{})
	go func() { m.Wait(); close(done) }()
	receive(t, done, "the workers to exit")
}

// commonLimits are the worker limits that the tests of the behaviour common
// to every limit run with: none (Kopf's default) and one that they do not
// exceed (the tests of limit_test.go exceed theirs).
var commonLimits = []int{0, 3}

// forEachLimit runs test as a subtest for each of commonLimits.
func forEachLimit(t *testing.T, test func(t *testing.T, limit int)) {
	t.Helper()
	for _, limit := range commonLimits {
		t.Run(fmt.Sprintf("limit=%d", limit), func(t *testing.T) { test(t, limit) })
	}
}

// eventually polls cond until it holds, failing the test after failAfter.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(failAfter)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// blockUntil returns a hook that reports that it has started and then
// blocks until release is closed (or the queue stops).
func blockUntil(started chan<- struct{}, release <-chan struct{}) func(context.Context, *Stream) {
	return func(ctx context.Context, _ *Stream) {
		close(started)
		select {
		case <-release:
		case <-ctx.Done():
		}
	}
}

func TestQueueProcessesOnlyTheLatestWhileBusy(t *testing.T) {
	forEachLimit(t, func(t *testing.T, limit int) {
		started, release := make(chan struct{}), make(chan struct{})
		r := newRecorder(t, map[string]func(context.Context, *Stream){"a/1": blockUntil(started, release)})
		m, _ := startQueue(t, Options{IdleTimeout: time.Minute, WorkerLimit: limit}, r.process)

		m.Put(event("a", "1"))
		r.expectNext("a", "1")
		receive(t, started, "a/1 to start")
		for _, rv := range []string{"2", "3", "4"} {
			m.Put(event("a", rv))
		}
		close(release)
		r.expectNext("a", "4")

		// Versions 2 and 3 would come before 5 if they were still queued.
		m.Put(event("a", "5"))
		r.expectNext("a", "5")
	})
}

func TestQueueKeepsTheOrderOfOneObject(t *testing.T) {
	forEachLimit(t, func(t *testing.T, limit int) {
		r := newRecorder(t, nil)
		m, _ := startQueue(t, Options{IdleTimeout: time.Minute, WorkerLimit: limit}, r.process)

		const n = 200
		for i := 1; i <= n; i++ {
			m.Put(event("a", strconv.Itoa(i)))
		}
		last := 0
		for last < n {
			got := r.next()
			rv, err := strconv.Atoi(got.rv)
			if err != nil || got.key != "a" {
				t.Fatalf("processed %+v", got)
			}
			if rv <= last {
				t.Fatalf("processed version %d after %d", rv, last)
			}
			last = rv
		}
	})
}

func TestQueueRunsObjectsInParallel(t *testing.T) {
	forEachLimit(t, func(t *testing.T, limit int) {
		startedA, releaseA := make(chan struct{}), make(chan struct{})
		startedB, releaseB := make(chan struct{}), make(chan struct{})
		r := newRecorder(t, map[string]func(context.Context, *Stream){
			"a/1": blockUntil(startedA, releaseA),
			"b/1": blockUntil(startedB, releaseB),
		})
		m, _ := startQueue(t, Options{IdleTimeout: time.Minute, WorkerLimit: limit}, r.process)

		m.Put(event("a", "1"))
		receive(t, startedA, "a/1 to start")
		m.Put(event("b", "1"))
		receive(t, startedB, "b/1 to start while a/1 is busy")
		if got := m.Active(); got != 2 {
			t.Errorf("Active() = %d, want 2", got)
		}

		// A third object is not held up by the two busy ones either.
		m.Put(event("c", "1"))
		seen := map[string]bool{}
		for len(seen) < 3 {
			got := r.next()
			seen[got.key+"/"+got.rv] = true
		}
		if !seen["c/1"] {
			t.Errorf("processed %v, want c/1 among them", seen)
		}
		close(releaseA)
		close(releaseB)
	})
}

func TestQueueActiveDropsToZeroAndRestarts(t *testing.T) {
	forEachLimit(t, func(t *testing.T, limit int) {
		r := newRecorder(t, nil)
		m, _ := startQueue(t, Options{IdleTimeout: 10 * time.Millisecond, WorkerLimit: limit}, r.process)

		for round := 1; round <= 3; round++ {
			rv := strconv.Itoa(round)
			m.Put(event("a", rv))
			m.Put(event("b", rv))
			got := map[string]bool{}
			for len(got) < 2 {
				p := r.next()
				got[p.key+"/"+p.rv] = true
			}
			if !got["a/"+rv] || !got["b/"+rv] {
				t.Fatalf("round %d: processed %v", round, got)
			}
			eventually(t, fmt.Sprintf("round %d: no object in hand", round), func() bool { return m.Active() == 0 })
		}
	})
}

func TestQueueKeepsTheInitialMarkThroughBatching(t *testing.T) {
	forEachLimit(t, func(t *testing.T, limit int) {
		started, release := make(chan struct{}), make(chan struct{})
		r := newRecorder(t, map[string]func(context.Context, *Stream){"a/1": blockUntil(started, release)})
		m, _ := startQueue(t, Options{IdleTimeout: time.Minute, WorkerLimit: limit}, r.process)

		m.Put(event("a", "1"))
		r.expectNext("a", "1")
		receive(t, started, "a/1 to start")
		listed := event("a", "2")
		listed.Initial = true
		m.Put(listed)
		m.Put(event("a", "3"))
		close(release)
		if got := r.next(); got.rv != "3" || !got.initial {
			t.Errorf("processed %+v, want rv 3 marked as initial", got)
		}
	})
}

func TestQueueStopsWithTheContext(t *testing.T) {
	forEachLimit(t, func(t *testing.T, limit int) {
		started := make(chan struct{})
		r := newRecorder(t, map[string]func(context.Context, *Stream){
			"a/1": func(ctx context.Context, _ *Stream) { close(started); <-ctx.Done() },
		})
		m, cancel := startQueue(t, Options{IdleTimeout: time.Minute, WorkerLimit: limit}, r.process)

		m.Put(event("a", "1"))
		m.Put(event("b", "1"))
		receive(t, started, "a/1 to start")
		m.Put(event("a", "2")) // pending when the context is cancelled
		cancel()
		waitDone(t, m)
		if got := m.Active(); got != 0 {
			t.Errorf("Active() = %d after Wait, want 0", got)
		}
		close(r.seen)
		for p := range r.seen {
			if p.key == "a" && p.rv == "2" {
				t.Error("an event was processed after the context was cancelled")
			}
		}
	})
}

// TestQueueRequeue: a processor that ends its cycle with a requeue gets
// the requeued event back after the delay, with Woke saying Elapsed,
// without holding a worker meanwhile (another object is processed on the
// only one).
func TestQueueRequeue(t *testing.T) {
	for _, limit := range []int{0, 1} {
		t.Run(fmt.Sprintf("limit=%d", limit), func(t *testing.T) {
			type woken struct {
				wake Wake
				left time.Duration
				rv   string
			}
			woke := make(chan woken, 10)
			r := newRecorder(t, map[string]func(context.Context, *Stream){
				"a/1": func(_ context.Context, s *Stream) {
					w, left := s.Woke()
					woke <- woken{w, left, "1"}
					if w == NotRequeued {
						s.Requeue(event("a", "1"), 50*time.Millisecond)
					}
				},
			})
			m, _ := startQueue(t, Options{IdleTimeout: time.Minute, WorkerLimit: limit}, r.process)

			m.Put(event("a", "1"))
			r.expectNext("a", "1")
			if got := receive(t, woke, "a/1's first cycle"); got.wake != NotRequeued {
				t.Errorf("first cycle: Woke() = %v, want NotRequeued", got.wake)
			}
			m.Put(event("b", "1")) // served meanwhile by the only worker
			r.expectNext("b", "1")
			r.expectNext("a", "1")
			if got := receive(t, woke, "a/1's requeue"); got.wake != Elapsed || got.left != 0 {
				t.Errorf("requeued cycle: Woke() = %v, %v; want Elapsed, 0", got.wake, got.left)
			}
		})
	}
}

// TestQueueRequeueIsInterruptedByANewEvent: a newer event that arrives
// during the delay (or during the cycle that asks for it) is processed at
// once instead of the requeued one, which is dropped; Woke says how much
// of the delay was left.
func TestQueueRequeueIsInterruptedByANewEvent(t *testing.T) {
	for _, during := range []bool{false, true} {
		forEachLimit(t, func(t *testing.T, limit int) {
			var m *Queue
			wakes := make(chan time.Duration, 1)
			requeued := make(chan struct{})
			r := newRecorder(t, map[string]func(context.Context, *Stream){
				"a/1": func(_ context.Context, s *Stream) {
					s.Requeue(event("a", "requeued"), time.Hour)
					if during {
						m.Put(event("a", "2"))
					}
					close(requeued)
				},
				"a/2": func(_ context.Context, s *Stream) {
					if w, left := s.Woke(); w == Interrupted {
						wakes <- left
					} else {
						wakes <- -1
					}
				},
			})
			m, _ = startQueue(t, Options{IdleTimeout: time.Minute, WorkerLimit: limit}, r.process)

			m.Put(event("a", "1"))
			r.expectNext("a", "1")
			receive(t, requeued, "a/1 to requeue")
			if !during {
				eventually(t, "a/1's cycle to end", func() bool { return m.Active() == 0 })
				m.Put(event("a", "2"))
			}
			r.expectNext("a", "2")
			if left := receive(t, wakes, "a/2 to be processed"); left <= 0 || left > time.Hour {
				t.Errorf("Woke() = %v left, want Interrupted with some of 1h left", left)
			}
			m.Put(event("a", "3"))
			r.expectNext("a", "3") // not the requeued one
		})
	}
}

// TestQueueWaitsForThePatchedVersion: a processor that patched the
// object waits, in the next cycle, for its own version to come back.
func TestQueueWaitsForThePatchedVersion(t *testing.T) {
	forEachLimit(t, func(t *testing.T, limit int) {
		tests := []struct {
			name string
			// deliverEarly: the patched version arrives before Expect (the
			// watch stream can be faster than the patch response).
			deliverEarly bool
		}{
			{name: "patched version arrives after Expect"},
			{name: "patched version arrives before Expect", deliverEarly: true},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				var m *Queue
				waited := make(chan bool, 1)
				r := newRecorder(t, map[string]func(context.Context, *Stream){
					"a/1": func(_ context.Context, s *Stream) {
						if tt.deliverEarly {
							m.Put(event("a", "2"))
							s.Expect("2")
						} else {
							s.Expect("2")
							m.Put(event("a", "2"))
						}
					},
					"a/2": func(ctx context.Context, s *Stream) { waited <- s.WaitExpected(ctx, long) },
				})
				m, _ = startQueue(t, Options{IdleTimeout: time.Minute, WorkerLimit: limit}, r.process)

				m.Put(event("a", "1"))
				if !receive(t, waited, "a/2 to wait for its version") {
					t.Error("WaitExpected() = false, want true: the patched version has arrived")
				}
				r.expectNext("a", "1")
				r.expectNext("a", "2")
			})
		}
	})
}

// Close lets the event in progress finish with its context intact, drops
// the pending ones, ignores new ones, and lets every worker exit.
func TestQueueCloseFinishesTheCurrentEvent(t *testing.T) {
	forEachLimit(t, func(t *testing.T, limit int) {
		started, release := make(chan struct{}), make(chan struct{})
		finished := make(chan error, 1)
		r := newRecorder(t, map[string]func(context.Context, *Stream){
			"a/1": func(ctx context.Context, _ *Stream) {
				close(started)
				<-release
				finished <- ctx.Err()
			},
		})
		m, _ := startQueue(t, Options{IdleTimeout: time.Minute, WorkerLimit: limit}, r.process)
		m.Put(event("a", "1"))
		receive(t, started, "a/1 to start")
		m.Put(event("a", "2")) // pending at Close: dropped
		m.Close()
		m.Put(event("b", "1")) // after Close: ignored
		close(release)
		if err := receive(t, finished, "a/1 to finish"); err != nil {
			t.Errorf("the current event's context is done at Close: %v", err)
		}
		waitDone(t, m)
		close(r.seen)
		for p := range r.seen {
			if p.rv == "2" || p.key == "b" {
				t.Errorf("%s/%s was processed after Close", p.key, p.rv)
			}
		}
	})
}

// TestOnIdle: Options.OnIdle is called once the last processing has ended,
// and then no object is in hand. It is a hint, not a guarantee: with
// several workers one may call it between two keys of another, so only the
// call after the last processing is asserted.
func TestOnIdle(t *testing.T) {
	for _, limit := range []int{0, 2} {
		t.Run(fmt.Sprintf("limit=%d", limit), func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			t.Cleanup(cancel)
			idle := make(chan int, 100) // Active() seen at each call
			var m *Queue
			var processed atomic.Int32
			release := make(chan struct{}) // every event is put before any processing ends
			m = New(ctx, Options{IdleTimeout: 20 * time.Millisecond, WorkerLimit: limit, OnIdle: func() { idle <- m.Active() }},
				func(context.Context, watching.Event, *Stream) { <-release; processed.Add(1) })
			for i := range 5 {
				m.Put(event("obj-"+strconv.Itoa(i), "1"))
			}
			close(release)
			deadline := time.After(5 * time.Second)
			for {
				select {
				case n := <-idle:
					if n == 0 && processed.Load() == 5 {
						return
					}
				case <-deadline:
					t.Fatalf("OnIdle was not called with no object in hand after the processing ended (%d of 5 processed)", processed.Load())
				}
			}
		})
	}
}
