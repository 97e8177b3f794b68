package queueing

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer safe for the workers' concurrent logging.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestMultiplexerSurvivesAPanickingProcessor: a panic that escapes the
// processor is logged with the object's key and stack; the worker's slot
// and stream stay consistent, so the other objects and the same object's
// next events are processed.
func TestMultiplexerSurvivesAPanickingProcessor(t *testing.T) {
	for _, limit := range []int{0, 1} {
		t.Run(map[int]string{0: "no limit", 1: "limit=1"}[limit], func(t *testing.T) {
			r := newRecorder(t, map[string]func(context.Context, *Stream){
				"a/1": func(context.Context, *Stream) { panic("boom") },
				"b/1": func(ctx context.Context, s *Stream) {
					s.Sleep(ctx, time.Millisecond) // lends and reclaims the slot
					panic("bang")
				},
			})
			var logs syncBuffer
			logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
			m, _ := startMultiplexer(t, Options{IdleTimeout: time.Hour, WorkerLimit: limit, Logger: logger}, r.process)

			m.Put(event("a", "1"))
			r.expectNext("a", "1")
			m.Put(event("b", "1"))
			r.expectNext("b", "1")
			m.Put(event("c", "1"))
			r.expectNext("c", "1")
			m.Put(event("a", "2"))
			r.expectNext("a", "2")
			m.Put(event("b", "2"))
			r.expectNext("b", "2")

			eventually(t, "both panics to be logged", func() bool {
				return strings.Count(logs.String(), "level=ERROR") == 2
			})
			out := logs.String()
			for _, want := range []string{
				"Event processing has failed with an unrecoverable error for a: boom",
				"Event processing has failed with an unrecoverable error for b: bang",
				"The stack of the panic: boom",
				"panic_test.go",
			} {
				if !strings.Contains(out, want) {
					t.Errorf("the log lacks %q:\n%s", want, out)
				}
			}
			if limit > 0 {
				m.mu.Lock()
				slots := m.slots
				m.mu.Unlock()
				if slots > limit {
					t.Errorf("%d slots are held, over the limit of %d", slots, limit)
				}
			}
		})
	}
}
