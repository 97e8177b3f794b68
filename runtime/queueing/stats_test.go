package queueing

import (
	"context"
	"testing"
	"time"
)

// TestQueueStats checks the figures that metrics read: busy and
// pending objects, the queue behind a limit, and the adds, of which
// batched events are not.
func TestQueueStats(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	r := newRecorder(t, map[string]func(context.Context, *Stream){"ns/a/1": blockUntil(started, release)})
	m, _ := startQueue(t, Options{IdleTimeout: time.Minute, WorkerLimit: 1}, r.process)
	if got := m.Stats(); got != (Stats{Limit: 1, Workers: 1}) {
		t.Fatalf("Stats() of an unused queue = %+v, want only the limit and its pool", got)
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
	// a's newer event, which arrived during a/1, is processed next by the
	// same worker; then b.
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

// TestStreamArrived checks what a processor learns of the event it
// processes: when the oldest event batched into it arrived, or for a
// requeued event, when its delay was over.
func TestStreamArrived(t *testing.T) {
	s := newStream()
	before := time.Now()
	s.put(event("ns/a", "1"))
	between := time.Now()
	s.put(event("ns/a", "2")) // batched: the arrival is the first's
	ev, _, ok := s.take(time.Now(), time.Hour)
	if !ok {
		t.Fatal("nothing to take")
	}
	if got := s.Arrived(); got.Before(before) || got.After(between) {
		t.Errorf("Arrived() = %s, want the first event's arrival, within [%s, %s]", got, before, between)
	}
	s.Requeue(ev, time.Minute)
	ended := time.Now()
	if _, ok := s.finish(ev, ended, false); !ok {
		t.Fatal("the requeue is not scheduled")
	}
	if _, _, ok := s.take(ended.Add(2*time.Minute), time.Hour); !ok {
		t.Fatal("the requeued event is not taken after its delay")
	}
	if got, want := s.Arrived(), ended.Add(time.Minute); !got.Equal(want) {
		t.Errorf("Arrived() of the requeued event = %s, want the end of its delay, %s", got, want)
	}
}
