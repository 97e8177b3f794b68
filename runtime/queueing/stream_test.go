package queueing

import (
	"context"
	"testing"
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
			ev, ok := s.take()
			if !ok {
				t.Fatal("take() found nothing")
			}
			if got := resourceVersion(ev); got != tt.wantRV {
				t.Errorf("took rv %q, want %q", got, tt.wantRV)
			}
			if ev.Initial != tt.wantInitial {
				t.Errorf("Initial = %v, want %v", ev.Initial, tt.wantInitial)
			}
			if _, ok := s.take(); ok || s.Pending() {
				t.Error("the event is still pending after take()")
			}
		})
	}
}

func TestStreamSleep(t *testing.T) {
	const short = 20 * time.Millisecond
	tests := []struct {
		name     string
		prepare  func(s *Stream)
		d        time.Duration
		wantFull bool // slept fully: 0 is returned
	}{
		{name: "nothing happens: sleeps fully", prepare: func(*Stream) {}, d: short, wantFull: true},
		{
			// The signal of an event that the worker loop took without
			// waiting for it must not cut the sleep short.
			name:     "an event already taken does not interrupt",
			prepare:  func(s *Stream) { s.put(event("a", "1")); s.take() },
			d:        short,
			wantFull: true,
		},
		{
			name:    "a pending event: returns at once",
			prepare: func(s *Stream) { s.put(event("a", "1")) },
			d:       time.Hour,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStream()
			tt.prepare(s)
			left := s.Sleep(testContext(t), tt.d)
			if tt.wantFull && left != 0 {
				t.Errorf("Sleep() = %v left, want 0 (slept fully)", left)
			}
			if !tt.wantFull && left != tt.d {
				t.Errorf("Sleep() = %v left, want all of %v", left, tt.d)
			}
		})
	}
}

func TestStreamSleepInterruptedByANewEvent(t *testing.T) {
	s := newStream()
	left := make(chan time.Duration, 1)
	go func() { left <- s.Sleep(testContext(t), time.Hour) }()
	s.put(event("a", "2"))
	if got := receive(t, left, "Sleep to be interrupted"); got <= 0 || got > time.Hour {
		t.Errorf("Sleep() = %v left, want some of 1h", got)
	}
	if ev, ok := s.take(); !ok || resourceVersion(ev) != "2" {
		t.Errorf("the new event is not left pending: %v, %v", ev, ok)
	}
}

func TestStreamSleepInterruptedByTheContext(t *testing.T) {
	s := newStream()
	ctx, cancel := context.WithCancel(context.Background())
	left := make(chan time.Duration, 1)
	go func() { left <- s.Sleep(ctx, time.Hour) }()
	cancel()
	if got := receive(t, left, "Sleep to be cancelled"); got <= 0 || got > time.Hour {
		t.Errorf("Sleep() = %v left, want some of 1h", got)
	}
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
			ev, ok := s.take()
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
