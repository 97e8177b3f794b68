package queueing

import (
	"context"
	"fmt"
	"strconv"
	"sync"
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

// startMultiplexer starts a multiplexer that is stopped, and all of its
// workers waited for, when the test ends.
func startMultiplexer(t *testing.T, opts Options, process Processor) (*Multiplexer, context.CancelFunc) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	m := NewMultiplexer(ctx, opts, process)
	t.Cleanup(func() {
		cancel()
		waitDone(t, m)
	})
	return m, cancel
}

func waitDone(t *testing.T, m *Multiplexer) {
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
// blocks until release is closed (or the multiplexer stops).
func blockUntil(started chan<- struct{}, release <-chan struct{}) func(context.Context, *Stream) {
	return func(ctx context.Context, _ *Stream) {
		close(started)
		select {
		case <-release:
		case <-ctx.Done():
		}
	}
}

func TestMultiplexerProcessesOnlyTheLatestWhileBusy(t *testing.T) {
	forEachLimit(t, func(t *testing.T, limit int) {
		started, release := make(chan struct{}), make(chan struct{})
		r := newRecorder(t, map[string]func(context.Context, *Stream){"a/1": blockUntil(started, release)})
		m, _ := startMultiplexer(t, Options{IdleTimeout: time.Minute, WorkerLimit: limit}, r.process)

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

func TestMultiplexerKeepsTheOrderOfOneObject(t *testing.T) {
	forEachLimit(t, func(t *testing.T, limit int) {
		r := newRecorder(t, nil)
		m, _ := startMultiplexer(t, Options{IdleTimeout: time.Minute, WorkerLimit: limit}, r.process)

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

func TestMultiplexerRunsObjectsInParallel(t *testing.T) {
	forEachLimit(t, func(t *testing.T, limit int) {
		startedA, releaseA := make(chan struct{}), make(chan struct{})
		startedB, releaseB := make(chan struct{}), make(chan struct{})
		r := newRecorder(t, map[string]func(context.Context, *Stream){
			"a/1": blockUntil(startedA, releaseA),
			"b/1": blockUntil(startedB, releaseB),
		})
		m, _ := startMultiplexer(t, Options{IdleTimeout: time.Minute, WorkerLimit: limit}, r.process)

		m.Put(event("a", "1"))
		receive(t, startedA, "a/1 to start")
		m.Put(event("b", "1"))
		receive(t, startedB, "b/1 to start while a/1 is busy")
		if got := m.Workers(); got != 2 {
			t.Errorf("Workers() = %d, want 2", got)
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

func TestMultiplexerWorkersExitWhenIdleAndRestart(t *testing.T) {
	forEachLimit(t, func(t *testing.T, limit int) {
		r := newRecorder(t, nil)
		m, _ := startMultiplexer(t, Options{IdleTimeout: 10 * time.Millisecond, WorkerLimit: limit}, r.process)

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
			eventually(t, fmt.Sprintf("round %d: the idle workers to exit", round), func() bool { return m.Workers() == 0 })
		}
	})
}

func TestMultiplexerKeepsTheInitialMarkThroughBatching(t *testing.T) {
	forEachLimit(t, func(t *testing.T, limit int) {
		started, release := make(chan struct{}), make(chan struct{})
		r := newRecorder(t, map[string]func(context.Context, *Stream){"a/1": blockUntil(started, release)})
		m, _ := startMultiplexer(t, Options{IdleTimeout: time.Minute, WorkerLimit: limit}, r.process)

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

func TestMultiplexerStopsWithTheContext(t *testing.T) {
	forEachLimit(t, func(t *testing.T, limit int) {
		started := make(chan struct{})
		r := newRecorder(t, map[string]func(context.Context, *Stream){
			"a/1": func(ctx context.Context, _ *Stream) { close(started); <-ctx.Done() },
		})
		m, cancel := startMultiplexer(t, Options{IdleTimeout: time.Minute, WorkerLimit: limit}, r.process)

		m.Put(event("a", "1"))
		m.Put(event("b", "1"))
		receive(t, started, "a/1 to start")
		m.Put(event("a", "2")) // pending when the context is cancelled
		cancel()
		waitDone(t, m)
		if got := m.Workers(); got != 0 {
			t.Errorf("Workers() = %d after Wait, want 0", got)
		}
		close(r.seen)
		for p := range r.seen {
			if p.key == "a" && p.rv == "2" {
				t.Error("an event was processed after the context was cancelled")
			}
		}
	})
}

func TestMultiplexerSleepIsInterruptedByANewEvent(t *testing.T) {
	forEachLimit(t, func(t *testing.T, limit int) {
		sleeping := make(chan struct{})
		left := make(chan time.Duration, 1)
		r := newRecorder(t, map[string]func(context.Context, *Stream){
			"a/1": func(ctx context.Context, s *Stream) {
				close(sleeping)
				left <- s.Sleep(ctx, time.Hour)
			},
		})
		m, _ := startMultiplexer(t, Options{IdleTimeout: time.Minute, WorkerLimit: limit}, r.process)

		m.Put(event("a", "1"))
		receive(t, sleeping, "a/1 to sleep")
		m.Put(event("a", "2"))
		if got := receive(t, left, "the sleep to be interrupted"); got <= 0 {
			t.Errorf("Sleep() = %v left, want some of 1h", got)
		}
		r.expectNext("a", "1")
		r.expectNext("a", "2")
	})
}

// TestMultiplexerSleepIsNotInterruptedByTheCurrentEvent: an event that
// arrived while the worker was busy is processed next; its arrival must not
// cut short a sleep during its own processing.
func TestMultiplexerSleepIsNotInterruptedByTheCurrentEvent(t *testing.T) {
	forEachLimit(t, func(t *testing.T, limit int) {
		started, release := make(chan struct{}), make(chan struct{})
		left := make(chan time.Duration, 1)
		r := newRecorder(t, map[string]func(context.Context, *Stream){
			"a/1": blockUntil(started, release),
			"a/2": func(ctx context.Context, s *Stream) { left <- s.Sleep(ctx, 20*time.Millisecond) },
		})
		m, _ := startMultiplexer(t, Options{IdleTimeout: time.Minute, WorkerLimit: limit}, r.process)

		m.Put(event("a", "1"))
		receive(t, started, "a/1 to start")
		m.Put(event("a", "2"))
		close(release)
		if got := receive(t, left, "a/2 to sleep"); got != 0 {
			t.Errorf("Sleep() = %v left, want 0 (slept fully)", got)
		}
	})
}

// TestMultiplexerWaitsForThePatchedVersion: a processor that patched the
// object waits, in the next cycle, for its own version to come back.
func TestMultiplexerWaitsForThePatchedVersion(t *testing.T) {
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
				var m *Multiplexer
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
				m, _ = startMultiplexer(t, Options{IdleTimeout: time.Minute, WorkerLimit: limit}, r.process)

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
func TestMultiplexerCloseFinishesTheCurrentEvent(t *testing.T) {
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
		m, _ := startMultiplexer(t, Options{IdleTimeout: time.Minute, WorkerLimit: limit}, r.process)
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

// TestOnIdle: Options.OnIdle is called once the last worker has exited, and
// not while any is alive.
func TestOnIdle(t *testing.T) {
	for _, limit := range []int{0, 2} {
		t.Run(fmt.Sprintf("limit=%d", limit), func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			t.Cleanup(cancel)
			idle := make(chan int, 100) // Workers() seen at each call
			var m *Multiplexer
			m = NewMultiplexer(ctx, Options{IdleTimeout: 20 * time.Millisecond, WorkerLimit: limit, OnIdle: func() { idle <- m.Workers() }},
				func(context.Context, watching.Event, *Stream) {})
			for i := range 5 {
				m.Put(event("obj-"+strconv.Itoa(i), "1"))
			}
			select {
			case n := <-idle:
				if n != 0 {
					t.Errorf("OnIdle called with %d workers alive", n)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("OnIdle was not called after the workers exited")
			}
			if n := m.Workers(); n != 0 {
				t.Errorf("%d workers alive after OnIdle", n)
			}
		})
	}
}
