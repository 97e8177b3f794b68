package operator

import (
	"context"
	"testing"
	"testing/synctest"

	"github.com/kopf-go/kopf/runtime/queueing"
	"github.com/kopf-go/kopf/runtime/watching"
)

func TestIndexGate(t *testing.T) {
	tests := []struct {
		name     string
		watches  int // registered before sealing
		listed   int // of them, listed
		sealed   bool
		wantOpen bool
	}{
		{"nothing yet", 0, 0, false, false},
		{"sealed without indexed watches", 0, 0, true, true},
		{"a watch not listed yet", 1, 0, true, false},
		{"every watch listed", 2, 2, true, true},
		{"one of two listed", 2, 1, true, false},
		{"listed but not sealed", 1, 1, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newIndexGate()
			var done []func()
			for range tt.watches {
				done = append(done, g.watch())
			}
			for i := range tt.listed {
				done[i]()
				done[i]() // twice: counted once
			}
			if tt.sealed {
				g.seal()
			}
			if got := g.isOpen(); got != tt.wantOpen {
				t.Errorf("open = %v, want %v", got, tt.wantOpen)
			}
		})
	}
}

// A watch registered after the gate opened does not close it.
func TestIndexGateLateWatch(t *testing.T) {
	g := newIndexGate()
	g.seal()
	g.watch()
	if !g.isOpen() {
		t.Error("a late watch closed the gate")
	}
}

// Workers are held until the gate opens, or let go when the operator
// exits; without indices (a nil gate), nothing is held.
func TestIndexGateHold(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newIndexGate()
		listed := g.watch()
		processed := 0
		process := g.hold(func(context.Context, watching.Event, *queueing.Stream) { processed++ })
		go process(t.Context(), watching.Event{}, nil)
		synctest.Wait()
		if processed != 0 {
			t.Fatal("processed before the index was filled")
		}
		g.seal()
		listed()
		synctest.Wait()
		if processed != 1 {
			t.Fatalf("processed %d times after the gate opened, want 1", processed)
		}

		shut := newIndexGate()
		shut.watch()
		ctx, cancel := context.WithCancel(t.Context())
		exited := false
		go func() {
			shut.hold(func(context.Context, watching.Event, *queueing.Stream) { processed++ })(ctx, watching.Event{}, nil)
			exited = true
		}()
		cancel()
		synctest.Wait()
		if !exited || processed != 1 {
			t.Errorf("exited = %v, processed = %d; want the worker let go unprocessed", exited, processed)
		}

		var none *indexGate
		none.hold(func(context.Context, watching.Event, *queueing.Stream) { processed++ })(t.Context(), watching.Event{}, nil)
		if processed != 2 {
			t.Error("a nil gate held the worker")
		}
	})
}
