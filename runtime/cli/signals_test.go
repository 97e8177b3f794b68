package cli

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// lockedBuffer is a bytes.Buffer safe for the watcher's writes and the
// test's reads.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestWatchSignals: the first signal stops the operator gracefully, the
// second forces the exit; each is logged once, and nothing happens
// without a signal.
func TestWatchSignals(t *testing.T) {
	const wait = 5 * time.Second // nothing should come close
	tests := []struct {
		name        string
		signals     []os.Signal
		cancelled   bool // ctx is cancelled before stop is called
		forced      bool
		wantLogs    []string
		cancelOuter bool // the parent context is cancelled instead
	}{
		{name: "no signal"},
		{name: "the parent is cancelled", cancelOuter: true, cancelled: true},
		{name: "SIGINT", signals: []os.Signal{syscall.SIGINT}, cancelled: true,
			wantLogs: []string{`level=INFO msg="Signal SIGINT is received. Operator is stopping."`}},
		{name: "SIGTERM", signals: []os.Signal{syscall.SIGTERM}, cancelled: true,
			wantLogs: []string{`level=INFO msg="Signal SIGTERM is received. Operator is stopping."`}},
		{name: "SIGINT twice", signals: []os.Signal{syscall.SIGINT, syscall.SIGINT}, cancelled: true, forced: true,
			wantLogs: []string{
				`level=INFO msg="Signal SIGINT is received. Operator is stopping."`,
				`level=WARN msg="Signal SIGINT is received again. Operator is exiting immediately, without waiting for the handlers."`,
			}},
		{name: "SIGTERM, then SIGINT", signals: []os.Signal{syscall.SIGTERM, syscall.SIGINT}, cancelled: true, forced: true,
			wantLogs: []string{
				`level=INFO msg="Signal SIGTERM is received. Operator is stopping."`,
				`level=WARN msg="Signal SIGINT is received again. Operator is exiting immediately, without waiting for the handlers."`,
			}},
		{name: "a third signal is not waited for", signals: []os.Signal{syscall.SIGTERM, syscall.SIGTERM, syscall.SIGTERM}, cancelled: true, forced: true,
			wantLogs: []string{
				`level=INFO msg="Signal SIGTERM is received. Operator is stopping."`,
				`level=WARN msg="Signal SIGTERM is received again. Operator is exiting immediately, without waiting for the handlers."`,
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var logs lockedBuffer
			logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
				if a.Key == slog.TimeKey {
					return slog.Attr{}
				}
				return a
			}}))
			parent, cancelParent := context.WithCancel(context.Background())
			t.Cleanup(cancelParent)
			sigs := make(chan os.Signal, len(tt.signals))
			ctx, forced, stop := watchSignals(parent, sigs, logger)
			t.Cleanup(stop)

			for _, sig := range tt.signals {
				sigs <- sig
			}
			if tt.cancelOuter {
				cancelParent()
			}
			if tt.cancelled {
				select {
				case <-ctx.Done():
				case <-time.After(wait):
					t.Fatal("the context is not cancelled")
				}
			}
			if tt.forced {
				select {
				case <-forced:
				case <-time.After(wait):
					t.Fatal("the exit is not forced")
				}
			}
			if want := len(tt.wantLogs); want > 0 {
				deadline := time.Now().Add(wait)
				for strings.Count(logs.String(), "\n") < want && time.Now().Before(deadline) {
					time.Sleep(time.Millisecond)
				}
			}
			// What must not happen: checked once the watcher is released,
			// so that it has nothing left to do.
			stop()
			if !tt.forced {
				select {
				case <-forced:
					t.Error("the exit is forced by fewer than two signals")
				default:
				}
			}
			var got []string
			for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
				if line != "" {
					got = append(got, line)
				}
			}
			if strings.Join(got, "\n") != strings.Join(tt.wantLogs, "\n") {
				t.Errorf("logged:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.wantLogs, "\n"))
			}
		})
	}
}

// TestWatchSignalsStopCancels: stop cancels the context and releases the
// watcher; calling it again is harmless.
func TestWatchSignalsStopCancels(t *testing.T) {
	sigs := make(chan os.Signal, 1)
	ctx, forced, stop := watchSignals(context.Background(), sigs, slog.New(slog.DiscardHandler))
	stop()
	stop()
	if ctx.Err() == nil {
		t.Error("the context is not cancelled by stop")
	}
	sigs <- syscall.SIGINT // nobody listens any more: no panic, no forced exit
	select {
	case <-forced:
		t.Error("the exit is forced after stop")
	default:
	}
}
