package queueing

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/kopf-go/kopf/runtime/watching"
)

// TestQueueBusy: Busy names exactly the objects whose processor runs
// now, sorted, and forgets each as soon as its processor returns.
func TestQueueBusy(t *testing.T) {
	forEachLimit(t, func(t *testing.T, limit int) {
		startedA, releaseA := make(chan struct{}), make(chan struct{})
		startedB, releaseB := make(chan struct{}), make(chan struct{})
		r := newRecorder(t, map[string]func(context.Context, *Stream){
			"b/1": blockUntil(startedB, releaseB),
			"a/1": blockUntil(startedA, releaseA),
		})
		m, _ := startQueue(t, Options{IdleTimeout: time.Minute, WorkerLimit: limit}, r.process)

		if got := m.Busy(); len(got) != 0 {
			t.Fatalf("Busy() = %v before any event, want none", got)
		}
		m.Put(event("b", "1"))
		m.Put(event("a", "1"))
		m.Put(event("c", "1")) // processed at once: never busy for long
		receive(t, startedA, "a/1 to start")
		receive(t, startedB, "b/1 to start")
		eventually(t, "c/1 to be processed", func() bool { return !slices.Contains(m.Busy(), "c") })
		if got, want := m.Busy(), []string{"a", "b"}; !slices.Equal(got, want) {
			t.Errorf("Busy() = %v, want %v", got, want)
		}
		close(releaseA)
		eventually(t, "a to be no longer busy", func() bool { return slices.Equal(m.Busy(), []string{"b"}) })
		close(releaseB)
		eventually(t, "nothing to be busy", func() bool { return len(m.Busy()) == 0 })
	})
}

// TestQueueCloseWakesWaitingProcessors: at Close, a processor waiting for
// its own patched version returns at once with its context intact, and
// reports the interruption; Stopping tells it why.
func TestQueueCloseWakesWaitingProcessors(t *testing.T) {
	type result struct {
		interrupted   bool
		stoppingAfter bool
		ctxErr        error
	}
	tests := []struct {
		name string
		wait func(ctx context.Context, s *Stream) bool // reports an interruption
	}{
		{name: "WaitExpected", wait: func(ctx context.Context, s *Stream) bool {
			s.Expect("never")
			return !s.WaitExpected(ctx, time.Hour)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			forEachLimit(t, func(t *testing.T, limit int) {
				waiting := make(chan struct{})
				done := make(chan result, 1)
				r := newRecorder(t, map[string]func(context.Context, *Stream){
					"a/1": func(ctx context.Context, s *Stream) {
						if s.Stopping() {
							t.Error("Stopping() before Close")
						}
						close(waiting)
						interrupted := tt.wait(ctx, s)
						done <- result{interrupted: interrupted, stoppingAfter: s.Stopping(), ctxErr: ctx.Err()}
					},
				})
				m, _ := startQueue(t, Options{IdleTimeout: time.Hour, WorkerLimit: limit}, r.process)
				m.Put(event("a", "1"))
				receive(t, waiting, "a/1 to wait")
				m.Close()
				got := receive(t, done, "the wait to end at Close")
				if !got.interrupted {
					t.Error("the wait did not report an interruption")
				}
				if !got.stoppingAfter {
					t.Error("Stopping() = false after Close")
				}
				if got.ctxErr != nil {
					t.Errorf("the context is done at Close: %v", got.ctxErr)
				}
				waitDone(t, m)
			})
		})
	}
}

// TestStreamStoppingWithTheContext: a cancelled context means stopping too.
func TestStreamStoppingWithTheContext(t *testing.T) {
	stopping := make(chan bool, 1)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	started := make(chan struct{})
	m := New(ctx, Options{IdleTimeout: time.Hour}, func(ctx context.Context, _ watching.Event, s *Stream) {
		close(started)
		<-ctx.Done()
		stopping <- s.Stopping()
	})
	m.Put(event("a", "1"))
	receive(t, started, "a/1 to start")
	cancel()
	if !receive(t, stopping, "the processor to return") {
		t.Error("Stopping() = false with the context cancelled")
	}
	waitDone(t, m)
	if (&Stream{}).Stopping() {
		t.Error("a stream of no queue is stopping")
	}
}
