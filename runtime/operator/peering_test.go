package operator

import (
	"context"
	"log/slog"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kopf-go/kopf/runtime/queueing"
	"github.com/kopf-go/kopf/runtime/settings"
	"github.com/kopf-go/kopf/runtime/watching"
)

func TestApplyPeeringOptions(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		want settings.Peering
	}{
		{"nothing given", Options{}, settings.Default().Peering},
		{"-P", Options{PeeringName: "example"}, func() settings.Peering {
			p := settings.Default().Peering
			p.Name, p.Mandatory = "example", true
			return p
		}()},
		{"--dev", Options{Priority: 666}, func() settings.Peering { p := settings.Default().Peering; p.Priority = 666; return p }()},
		{"--standalone", Options{Standalone: true}, func() settings.Peering { p := settings.Default().Peering; p.Standalone = true; return p }()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.opts.Settings = settings.Default()
			applyPeeringOptions(tt.opts)
			if got := tt.opts.Settings.Peering; got != tt.want {
				t.Errorf("settings.Peering = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestShardedStandalone(t *testing.T) {
	tests := []struct {
		name           string
		opts           Options
		wantStandalone bool
	}{
		{"peering, no sharding", Options{}, false},
		{"-P, no sharding", Options{PeeringName: "example"}, false},
		{"sharding: peering off", Options{Sharding: &Sharding{}}, true},
		{"sharding, --standalone", Options{Sharding: &Sharding{}, Standalone: true}, true},
		{"sharding and -P: the name is the group's", Options{Sharding: &Sharding{}, PeeringName: "example"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.opts.Settings = settings.Default()
			tt.opts.Logger = slog.New(slog.DiscardHandler)
			applyPeeringOptions(tt.opts)
			shardedStandalone(&tt.opts)
			if got := tt.opts.Settings.Peering.Standalone; got != tt.wantStandalone {
				t.Errorf("settings.Peering.Standalone = %v, want %v", got, tt.wantStandalone)
			}
		})
	}
}

// A paused gate holds new processing until it is resumed, and lets the
// held workers go when the operator stops.
func TestPauseGate(t *testing.T) {
	synctest.Test(t, testPauseGate)
}

func testPauseGate(t *testing.T) {
	stop := make(chan struct{})
	g := newPauseGate(stop, slog.New(slog.DiscardHandler))
	var ran atomic.Int32
	process := g.hold(func(context.Context, watching.Event, *queueing.Stream) { ran.Add(1) })

	process(context.Background(), watching.Event{}, nil)
	if ran.Load() != 1 {
		t.Fatalf("an open gate did not process: %d", ran.Load())
	}

	g.set(true)
	done := make(chan struct{})
	go func() { process(context.Background(), watching.Event{}, nil); close(done) }()
	synctest.Wait() // the worker is blocked in the gate
	select {
	case <-done:
		t.Fatal("a paused gate processed")
	default:
	}
	g.set(false)
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("a resumed gate did not process")
	}
	if ran.Load() != 2 {
		t.Fatalf("ran %d times, want 2", ran.Load())
	}

	g.set(true)
	done = make(chan struct{})
	go func() { process(context.Background(), watching.Event{}, nil); close(done) }()
	close(stop)
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("a held worker did not return on the operator's stop")
	}
	if ran.Load() != 2 {
		t.Fatalf("a stopped gate processed: ran %d times", ran.Load())
	}
}

// A pause lets the cycle in progress finish; a Lease lost (abandon)
// cancels it, so that nothing it would write is sent.
func TestPauseGateAbandon(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newPauseGate(make(chan struct{}), slog.New(slog.DiscardHandler))
		release := make(chan struct{})
		var cancelled atomic.Bool
		process := g.hold(func(ctx context.Context, _ watching.Event, _ *queueing.Stream) {
			select {
			case <-ctx.Done():
				cancelled.Store(true)
			case <-release:
			}
		})
		done := make(chan struct{})
		go func() { process(context.Background(), watching.Event{}, nil); close(done) }()
		synctest.Wait()
		g.set(true) // a pause: the cycle goes on
		synctest.Wait()
		select {
		case <-done:
			t.Fatal("a pause ended the cycle in progress")
		default:
		}
		g.abandon() // the Lease lost: the cycle is cancelled
		synctest.Wait()
		select {
		case <-done:
		default:
			t.Fatal("abandon did not end the cycle in progress")
		}
		if !cancelled.Load() {
			t.Error("the abandoned cycle's context was not cancelled")
		}
		if len(g.cycles) != 0 {
			t.Errorf("%d cycles still tracked", len(g.cycles))
		}
	})
}
