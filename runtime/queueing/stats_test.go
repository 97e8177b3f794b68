package queueing

import (
	"context"
	"testing"
	"time"
)

// TestMultiplexerStats checks the figures that metrics read: busy and
// pending objects, the queue behind a limit, and the adds, of which
// batched events are not.
func TestMultiplexerStats(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	r := newRecorder(t, map[string]func(context.Context, *Stream){"ns/a/1": blockUntil(started, release)})
	m, _ := startMultiplexer(t, Options{IdleTimeout: time.Minute, WorkerLimit: 1}, r.process)
	if got := m.Stats(); got != (Stats{Limit: 1}) {
		t.Fatalf("Stats() of an unused multiplexer = %+v, want only the limit", got)
	}

	m.Put(event("ns/a", "1"))
	r.expectNext("ns/a", "1")
	receive(t, started, "a/1 to start")
	m.Put(event("ns/a", "2")) // pending behind the busy one
	m.Put(event("ns/a", "3")) // batched into it: no add
	m.Put(event("ns/b", "1")) // queued: no slot is free

	st := m.Stats()
	want := Stats{Limit: 1, Workers: 1, Busy: 1, Pending: 2, Queued: 1, Added: 3}
	if st.BusyFor <= 0 || st.Longest != st.BusyFor {
		t.Errorf("Stats() with one busy object: BusyFor %s, Longest %s; want both the same and positive", st.BusyFor, st.Longest)
	}
	st.BusyFor, st.Longest = 0, 0
	if st != want {
		t.Errorf("Stats() = %+v, want %+v", st, want)
	}

	close(release)
	r.expectNext("ns/a", "3")
	r.expectNext("ns/b", "1")
	eventually(t, "nothing busy or pending", func() bool {
		st := m.Stats()
		return st.Busy == 0 && st.Pending == 0 && st.Queued == 0
	})
	if got := m.Stats().Added; got != 3 {
		t.Errorf("Stats().Added = %d after processing, want 3", got)
	}
}

// TestStreamArrivedAndSlept checks what a processor learns of the event it
// processes: when the oldest event batched into it arrived, and how long
// it has slept since it took it.
func TestStreamArrivedAndSlept(t *testing.T) {
	s := newStream()
	before := time.Now()
	s.put(event("ns/a", "1"))
	between := time.Now()
	s.put(event("ns/a", "2")) // batched: the arrival is the first's
	if _, ok := s.take(); !ok {
		t.Fatal("nothing to take")
	}
	if got := s.Arrived(); got.Before(before) || got.After(between) {
		t.Errorf("Arrived() = %s, want the first event's arrival, within [%s, %s]", got, before, between)
	}
	if got := s.Slept(); got != 0 {
		t.Errorf("Slept() before sleeping = %s, want 0", got)
	}
	s.Sleep(testContext(t), 5*time.Millisecond)
	if got := s.Slept(); got < 5*time.Millisecond {
		t.Errorf("Slept() after a 5ms sleep = %s, want at least 5ms", got)
	}
	s.put(event("ns/a", "3"))
	if _, ok := s.take(); !ok {
		t.Fatal("nothing to take")
	}
	if got := s.Slept(); got != 0 {
		t.Errorf("Slept() for a new event = %s, want 0", got)
	}
	if got := s.Arrived(); !got.After(between) {
		t.Errorf("Arrived() of the new event = %s, want after %s", got, between)
	}
}
