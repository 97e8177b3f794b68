package queueing

import (
	"context"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kopf-go/kopf/runtime/body"
	"github.com/kopf-go/kopf/runtime/watching"
)

// failAfter bounds every wait of these tests; nothing should come close.
// long is a timeout given to the code under test that must not expire.
const (
	failAfter = 10 * time.Second
	long      = failAfter / 2
)

func event(key, rv string) watching.Event {
	return watching.Event{
		Type:   watching.Modified,
		Key:    key,
		Object: body.Body{"metadata": map[string]any{"name": key, "resourceVersion": rv}},
	}
}

func testContext(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	return ctx
}

// receive waits for a value from ch, failing the test after failAfter.
func receive[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(failAfter):
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}

func TestStreamBatchesToTheLatest(t *testing.T) {
	tests := []struct {
		name        string
		events      []watching.Event
		wantRV      string
		wantInitial bool
	}{
		{name: "one", events: []watching.Event{event("a", "1")}, wantRV: "1"},
		{name: "latest wins", events: []watching.Event{event("a", "1"), event("a", "2"), event("a", "3")}, wantRV: "3"},
		{
			name: "the first-listing mark survives batching",
			events: []watching.Event{
				{Key: "a", Initial: true, Object: event("a", "1").Object},
				event("a", "2"),
			},
			wantRV: "2", wantInitial: true,
		},
		{
			name:   "a later initial event stays initial",
			events: []watching.Event{event("a", "1"), {Key: "a", Initial: true, Object: event("a", "2").Object}},
			wantRV: "2", wantInitial: true,
		},
		{
			name:   "an older version does not replace a newer one pending (a listing racing the watch)",
			events: []watching.Event{event("a", "5"), {Key: "a", Type: watching.Listed, Initial: true, Object: event("a", "4").Object}},
			wantRV: "5", wantInitial: true,
		},
		{
			name:   "versions compared as integers, not as strings",
			events: []watching.Event{event("a", "10"), event("a", "9")},
			wantRV: "10",
		},
		{
			name:   "versions not comparable: the latest wins",
			events: []watching.Event{event("a", "b2"), event("a", "b1")},
			wantRV: "b1",
		},
		{
			name:   "a wakeup does not replace a pending event",
			events: []watching.Event{event("a", "1"), {Key: "a", Wakeup: true, Object: event("a", "2").Object}},
			wantRV: "1",
		},
		{
			name:   "a wakeup is taken when nothing is pending",
			events: []watching.Event{{Key: "a", Wakeup: true, Object: event("a", "2").Object}},
			wantRV: "2",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStream()
			if s.Pending() {
				t.Fatal("a new stream has a pending event")
			}
			for _, ev := range tt.events {
				s.put(ev)
			}
			if !s.Pending() {
				t.Fatal("Pending() = false after put")
			}
			ev, _, ok := s.take(time.Now(), time.Hour)
			if !ok {
				t.Fatal("take() found nothing")
			}
			if got := resourceVersion(ev); got != tt.wantRV {
				t.Errorf("took rv %q, want %q", got, tt.wantRV)
			}
			if ev.Initial != tt.wantInitial {
				t.Errorf("Initial = %v, want %v", ev.Initial, tt.wantInitial)
			}
			if _, _, ok := s.take(time.Now(), time.Hour); ok || s.Pending() {
				t.Error("the event is still pending after take()")
			}
		})
	}
}

// TestStreamRequeue: a cycle's Requeue is scheduled when the cycle ends;
// the requeued event is taken once its delay is over, unless a newer
// event (a wake-up included) arrives first, during the cycle or the delay:
// that one is taken instead, and the next cycle learns which from Woke.
func TestStreamRequeue(t *testing.T) {
	const d = time.Minute
	t0 := time.Now()
	tests := []struct {
		name      string
		requeue   bool
		stopping  bool
		during    func(s *Stream) // in the cycle, after Requeue
		delay     func(s *Stream) // during the delay
		wantSched bool            // finish schedules the requeue
		wantRV    string          // taken next ("": nothing)
		wantWake  Wake
		wantLeft  func(time.Duration) bool
	}{
		{name: "no requeue", wantWake: NotRequeued},
		{name: "nothing happens: the requeued event after the delay", requeue: true, wantSched: true, wantRV: "requeued", wantWake: Elapsed,
			wantLeft: func(l time.Duration) bool { return l == 0 }},
		{name: "a newer event during the cycle", requeue: true, during: func(s *Stream) { s.put(event("a", "2")) }, wantRV: "2", wantWake: Interrupted,
			wantLeft: func(l time.Duration) bool { return l == d }},
		{name: "a newer event during the delay", requeue: true, wantSched: true, delay: func(s *Stream) { s.put(event("a", "2")) }, wantRV: "2", wantWake: Interrupted,
			wantLeft: func(l time.Duration) bool { return l > 0 && l <= d }},
		{name: "a wake-up during the delay", requeue: true, wantSched: true, wantRV: "woken", wantWake: Interrupted,
			delay: func(s *Stream) {
				ev := event("a", "woken")
				ev.Wakeup = true
				s.put(ev)
			},
			wantLeft: func(l time.Duration) bool { return l > 0 && l <= d }},
		{name: "the queue is stopping", requeue: true, stopping: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStream()
			s.put(event("a", "1"))
			ev, _, _ := s.take(t0, time.Hour)
			if tt.requeue {
				s.Requeue(event("a", "requeued"), d)
			}
			if tt.during != nil {
				tt.during(s)
			}
			got, sched := s.finish(ev, t0, tt.stopping)
			if sched != tt.wantSched || (sched && got != d) {
				t.Fatalf("finish() = %v, %v; want %v, %v", got, sched, d, tt.wantSched)
			}
			if tt.delay != nil {
				tt.delay(s)
			}
			if sched && tt.delay == nil {
				if _, wait, ok := s.take(t0.Add(d/2), time.Hour); ok || wait != d/2 {
					t.Errorf("take() half-way = %v, %v; want nothing, %v to wait", ok, wait, d/2)
				}
			}
			next, _, ok := s.take(t0.Add(2*d), time.Hour)
			if rv := resourceVersion(next); ok != (tt.wantRV != "") || rv != tt.wantRV {
				t.Fatalf("take() after the delay = %q, %v; want %q", rv, ok, tt.wantRV)
			}
			if w, left := s.Woke(); w != tt.wantWake || (tt.wantLeft != nil && !tt.wantLeft(left)) {
				t.Errorf("Woke() = %v, %v; want %v", w, left, tt.wantWake)
			}
			if ok {
				s.finish(next, t0.Add(2*d), false)
				if _, _, again := s.take(t0.Add(3*d), time.Hour); again {
					t.Error("the requeued event is taken after all")
				}
			}
		})
	}
}

// TestDrive: Drive processes an event and its requeues, each after its
// delay, on a stream of no queue.
func TestDrive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var seen []Wake
		start := time.Now()
		Drive(t.Context(), func(_ context.Context, ev watching.Event, s *Stream) {
			w, _ := s.Woke()
			seen = append(seen, w)
			if len(seen) < 3 {
				s.Requeue(ev, time.Second)
			}
		}, event("a", "1"), nil)
		if want := []Wake{NotRequeued, Elapsed, Elapsed}; !slices.Equal(seen, want) {
			t.Errorf("cycles woke %v, want %v", seen, want)
		}
		if got := time.Since(start); got != 2*time.Second {
			t.Errorf("Drive took %s, want the two delays, 2s", got)
		}
	})
}

func TestStreamWaitExpected(t *testing.T) {
	const short = 20 * time.Millisecond
	tests := []struct {
		name string
		// before runs before WaitExpected; during runs concurrently with it.
		before, during func(s *Stream)
		timeout        time.Duration
		want           bool
		wantPendingRV  string // "" for nothing pending afterwards
	}{
		{
			name:    "nothing expected",
			before:  func(*Stream) {},
			timeout: 0, want: true,
		},
		{
			name:    "nothing expected, events pending",
			before:  func(s *Stream) { s.put(event("a", "1")) },
			timeout: 0, want: true, wantPendingRV: "1",
		},
		{
			name:    "expected version already arrived",
			before:  func(s *Stream) { s.Expect("5"); s.put(event("a", "5")) },
			timeout: long, want: true, wantPendingRV: "5",
		},
		{
			name:    "expected version arrived and was superseded",
			before:  func(s *Stream) { s.Expect("5"); s.put(event("a", "5")); s.put(event("a", "6")) },
			timeout: long, want: true, wantPendingRV: "6",
		},
		{
			// The watch stream can deliver the patched version before the
			// patching code gets to call Expect.
			name:    "expected version arrived just before Expect",
			before:  func(s *Stream) { s.put(event("a", "5")); s.Expect("5") },
			timeout: long, want: true, wantPendingRV: "5",
		},
		{
			name:    "expected version arrives while waiting",
			before:  func(s *Stream) { s.Expect("5"); s.put(event("a", "4")) },
			during:  func(s *Stream) { s.put(event("a", "5")) },
			timeout: long, want: true, wantPendingRV: "5",
		},
		{
			// A listing brought a newer version first; the patch's own
			// version arrives from the watch after it: it has arrived,
			// and the newer version stays pending.
			name:    "expected version arrives after a newer one",
			before:  func(s *Stream) { s.Expect("5"); s.put(event("a", "6")) },
			during:  func(s *Stream) { s.put(event("a", "5")) },
			timeout: long, want: true, wantPendingRV: "6",
		},
		{
			name:    "other versions only: times out",
			before:  func(s *Stream) { s.Expect("5"); s.put(event("a", "4")) },
			timeout: short, want: false, wantPendingRV: "4",
		},
		{
			name:    "the latest expectation replaces the previous one",
			before:  func(s *Stream) { s.Expect("5"); s.Expect("6"); s.put(event("a", "5")) },
			timeout: short, want: false, wantPendingRV: "5",
		},
		{
			name:    "an empty expectation is none",
			before:  func(s *Stream) { s.Expect("") },
			timeout: 0, want: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStream()
			tt.before(s)
			got := make(chan bool, 1)
			go func() { got <- s.WaitExpected(testContext(t), tt.timeout) }()
			if tt.during != nil {
				tt.during(s)
			}
			if ok := receive(t, got, "WaitExpected"); ok != tt.want {
				t.Errorf("WaitExpected() = %v, want %v", ok, tt.want)
			}
			ev, _, ok := s.take(time.Now(), time.Hour)
			switch {
			case tt.wantPendingRV == "" && ok:
				t.Errorf("pending afterwards: rv %q, want nothing", resourceVersion(ev))
			case tt.wantPendingRV != "" && (!ok || resourceVersion(ev) != tt.wantPendingRV):
				t.Errorf("pending afterwards: %v (rv %q), want rv %q", ok, resourceVersion(ev), tt.wantPendingRV)
			}
			// Whatever happened, the expectation is over.
			if !s.WaitExpected(testContext(t), 0) {
				t.Error("the expectation outlived WaitExpected")
			}
		})
	}
}

func TestStreamWaitExpectedCancelled(t *testing.T) {
	s := newStream()
	s.Expect("5")
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan bool, 1)
	go func() { got <- s.WaitExpected(ctx, time.Hour) }()
	cancel()
	if receive(t, got, "WaitExpected to be cancelled") {
		t.Error("WaitExpected() = true after cancellation, want false")
	}
}

// An expectation unmet past the idle timeout is not forgotten as if it
// were met: the event taken then (here the status patch's echo, older than
// the object patch expected, which a stalled watch brought late) must not
// be judged as consistent, so WaitExpected reports it unmet at once, and
// the processor reads the object. Within the idle timeout, it waits.
func TestStreamOverdueExpectation(t *testing.T) {
	const idle = 5 * time.Second
	tests := []struct {
		name     string
		after    time.Duration // from the end of the cycle to the take
		arrives  string        // the rv put before the take
		want     bool
		waitsFor time.Duration // how long WaitExpected waits (synctest's clock)
	}{
		{name: "within the idle timeout, not arrived", after: idle / 2, arrives: "1", want: false, waitsFor: time.Second},
		{name: "past the idle timeout, not arrived", after: 2 * idle, arrives: "1", want: false, waitsFor: 0},
		{name: "past the idle timeout, arrived", after: 2 * idle, arrives: "2", want: true, waitsFor: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := newStream()
				s.Expect("2")
				start := time.Now()
				s.finish(event("a", "0"), start, false)
				s.put(event("a", tt.arrives))
				if _, _, ok := s.take(start.Add(tt.after), idle); !ok {
					t.Fatal("nothing taken")
				}
				began := time.Now()
				if got := s.WaitExpected(t.Context(), time.Second); got != tt.want {
					t.Errorf("WaitExpected() = %v, want %v", got, tt.want)
				}
				if waited := time.Since(began); waited != tt.waitsFor {
					t.Errorf("WaitExpected waited %v, want %v", waited, tt.waitsFor)
				}
				if !s.WaitExpected(t.Context(), time.Second) {
					t.Error("the expectation is kept after WaitExpected reported on it")
				}
			})
		})
	}
}
