package queueing

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/kopf-go/kopf/internal/testutil"
)

type syncBuffer = testutil.Buffer

// TestQueueSurvivesAPanickingProcessor: a panic that escapes the
// processor is logged with the object's key and stack; the queue's
// figures and the object's stream stay consistent, so the other objects and the same object's
// next events are processed.
func TestQueueSurvivesAPanickingProcessor(t *testing.T) {
	for _, limit := range []int{0, 1} {
		t.Run(map[int]string{0: "no limit", 1: "limit=1"}[limit], func(t *testing.T) {
			r := newRecorder(t, map[string]func(context.Context, *Stream){
				"a/1": func(context.Context, *Stream) { panic("boom") },
				"b/1": func(_ context.Context, s *Stream) {
					s.Requeue(event("b", "requeued"), time.Hour) // dropped by b/2
					panic("bang")
				},
			})
			var logs syncBuffer
			logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
			m, _ := startQueue(t, Options{IdleTimeout: time.Hour, WorkerLimit: limit, Logger: logger}, r.process)

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
			if got := m.Active(); got > max(limit, 1) {
				t.Errorf("Active() = %d, want at most %d", got, max(limit, 1))
			}
		})
	}
}
