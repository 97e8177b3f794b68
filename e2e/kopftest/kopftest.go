// Package kopftest runs kopf-go operators inside end-to-end tests: in the
// test's own process against a real control plane, capturing the reactor's
// log so that tests can assert Kopf's log lines, as Kopf's own end-to-end
// tests do.
package kopftest

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/kopf-go/kopf/runtime/logging"
	"github.com/kopf-go/kopf/runtime/operator"
	"github.com/kopf-go/kopf/runtime/registry"
	"github.com/kopf-go/kopf/runtime/settings"
)

// Operator is an operator running in-process.
type Operator struct {
	t      testing.TB
	logs   *Buffer
	cancel context.CancelFunc
	done   chan error
	once   sync.Once
}

// Options tune a test operator. The zero value runs with -A --standalone
// --verbose and the settings of Kopf's own end-to-end runs (FastSettings).
type Options struct {
	Namespaces []string
	Settings   *settings.Settings
}

// Start registers the handlers and runs the operator until Stop or the end
// of the test. It fails the test if registration fails.
func Start(t testing.TB, cfg *rest.Config, register func(*registry.Registry) error, opts Options) *Operator {
	t.Helper()
	reg := registry.New()
	if err := register(reg); err != nil {
		t.Fatalf("registering the handlers: %v", err)
	}
	if opts.Settings == nil {
		opts.Settings = FastSettings()
	}
	routeKlog()
	buf := &Buffer{}
	logger := logging.New(buf, logging.Full, slog.LevelDebug)
	ctx, cancel := context.WithCancel(context.Background())
	o := &Operator{t: t, logs: buf, cancel: cancel, done: make(chan error, 1)}
	go func() {
		o.done <- operator.Run(ctx, rest.CopyConfig(cfg), reg, operator.Options{
			Namespaces:     opts.Namespaces,
			AllNamespaces:  len(opts.Namespaces) == 0,
			Standalone:     true,
			Settings:       opts.Settings,
			Logger:         logger,
			RescanInterval: time.Second,
		})
	}()
	t.Cleanup(func() {
		o.Stop()
		if t.Failed() {
			t.Logf("operator log:\n%s", buf.String())
		}
	})
	return o
}

// routeKlog sends klog's output, process-wide, to stderr in Kopf's full
// format, once per test binary. The operators of the tests share the
// process, so it cannot go to any one operator's log; the lines about each
// operator's own watches do, through client-go's contextual logging (see
// operator.Run).
var routeKlog = sync.OnceFunc(func() {
	logging.RouteKlog(logging.New(os.Stderr, logging.Full, slog.LevelInfo))
})

// FastSettings are Kopf's defaults with the default handler backoff
// lowered to 1 s, as Kopf's own end-to-end runs of its examples do.
func FastSettings() *settings.Settings {
	s := settings.Default()
	s.Execution.DefaultBackoff = time.Second
	return s
}

// Stop stops the operator and waits for it to exit (at most 30 s). It may
// be called more than once.
func (o *Operator) Stop() {
	o.once.Do(func() {
		o.cancel()
		select {
		case err := <-o.done:
			if err != nil {
				o.t.Errorf("the operator failed: %v", err)
			}
		case <-time.After(30 * time.Second):
			o.t.Errorf("the operator did not stop in 30 s")
		}
	})
}

// Logs returns everything logged so far.
func (o *Operator) Logs() string { return o.logs.String() }

// WaitLog waits until the log contains the text, failing the test after
// the timeout.
func (o *Operator) WaitLog(text string, timeout time.Duration) {
	o.t.Helper()
	deadline := time.Now().Add(timeout)
	for !strings.Contains(o.logs.String(), text) {
		if time.Now().After(deadline) {
			o.t.Fatalf("the operator did not log %q in %s", text, timeout)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Count returns how many log lines contain the text.
func (o *Operator) Count(text string) int {
	return strings.Count(o.logs.String(), text)
}

// Buffer is a bytes.Buffer safe for concurrent writes and reads.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// Write appends to the buffer.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String returns the contents.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
