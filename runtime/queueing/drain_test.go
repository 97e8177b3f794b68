package queueing

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/kopf-go/kopf/runtime/watching"
)

// TestDrain: drain gives the workers the exit timeout, then names those
// still running and cancels them, then names those that ignore the
// cancellation and returns without waiting for them.
func TestDrain(t *testing.T) {
	const exitTimeout = 200 * time.Millisecond
	const slack = time.Second // scheduling on a loaded machine
	const unprocessed = "Unprocessed streams left for "
	const hung = "Hung tasks are not stopped: exiting without waiting for them; tasks left: "
	// The behaviours of the processors, by object key.
	const (
		quick    = "quick"    // returns before the exit timeout
		honours  = "honours"  // returns when its context is cancelled
		ignores  = "ignores"  // returns only when the test ends
		sleeping = "sleeping" // sleeps in the stream: woken at Close
	)
	tests := []struct {
		name     string
		objects  []string
		wantLogs []string // in order; no other warning
		maxTime  time.Duration
	}{
		{name: "every worker finishes in time", objects: []string{quick, sleeping}, maxTime: exitTimeout},
		{
			name: "a worker honours the cancellation", objects: []string{honours, quick},
			wantLogs: []string{unprocessed + "['default/honours'] of things.v1.example.com after the exit timeout of 0.2 seconds; cancelling them."},
			maxTime:  exitTimeout + slack,
		},
		{
			name: "a worker ignores the cancellation", objects: []string{ignores, honours, sleeping},
			wantLogs: []string{
				unprocessed + "['default/honours', 'default/ignores'] of things.v1.example.com after the exit timeout of 0.2 seconds; cancelling them.",
				hung + "['default/ignores'] of things.v1.example.com.",
			},
			maxTime: exitTimeout + hungGrace + slack,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			release := make(chan struct{}) // the end of the test
			t.Cleanup(func() { close(release) })
			started := make(chan string, len(tt.objects))
			workCtx, cancelWork := context.WithCancel(context.Background())
			t.Cleanup(cancelWork)
			mux := New(workCtx, Options{IdleTimeout: time.Hour}, func(ctx context.Context, ev watching.Event, s *Stream) {
				started <- ev.Key
				switch ev.Key {
				case "default/" + quick:
				case "default/" + honours:
					<-ctx.Done()
				case "default/" + ignores:
					<-release
				case "default/" + sleeping:
					s.Requeue(ev, time.Hour) // ends its cycle: nothing to wait for
				}
			})
			for _, name := range tt.objects {
				mux.Put(watching.Event{Type: watching.Added, Key: "default/" + name, Object: map[string]any{}})
			}
			for range tt.objects {
				select {
				case <-started:
				case <-time.After(10 * time.Second):
					t.Fatal("the processors did not start")
				}
			}
			var buf bytes.Buffer
			logger := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
				if a.Key == slog.TimeKey || a.Key == slog.LevelKey {
					return slog.Attr{}
				}
				return a
			}}))

			start := time.Now()
			drain(mux, cancelWork, exitTimeout, "things.v1.example.com", logger)
			elapsed := time.Since(start)

			if elapsed > tt.maxTime {
				t.Errorf("drain returned after %s, want at most %s", elapsed, tt.maxTime)
			}
			if workCtx.Err() == nil {
				t.Error("the workers' context is not cancelled after drain")
			}
			var got []string
			for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
				if line != "" {
					got = append(got, strings.TrimSuffix(strings.TrimPrefix(line, `msg="`), `"`))
				}
			}
			if strings.Join(got, "\n") != strings.Join(tt.wantLogs, "\n") {
				t.Errorf("logged:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.wantLogs, "\n"))
			}
		})
	}
}
