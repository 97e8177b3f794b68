// Package kopftest runs a kopf-go operator inside a test, in the test's
// own process, against any cluster's rest.Config (usually a local control
// plane from github.com/kopf-go/kopf/envtest): Kopf's KopfRunner, and
// more. See docs/testing.md.
//
// A test starts the operator from its Register function (Start), from a
// main-like function (StartMain) or from its command line (StartCommand),
// acts on the cluster, and then waits, with timeouts, for what the
// operator did:
//
//   - its log, captured at debug level in Kopf's format (Logs, WaitLog);
//   - the outcome of each handler's attempts, per object, reported by the
//     reactor itself rather than parsed from the log: which handlers ran,
//     for which cause, how often, whether they succeeded, failed or will
//     be retried (Outcomes, WaitOutcome, WaitOutcomes);
//   - the objects' states (Objects.WaitFor);
//   - its probe handlers' results, as its health endpoint would serve
//     them (Probe).
//
// Handlers' unit tests, without an operator, call the handler functions
// directly with kwargs made by hand; WithClient gives them fakes of the
// clients they get with kopf.Client.
//
// Stop stops the operator and returns its exit error, as KopfRunner's
// exception and exit_code tell; the test's cleanup stops it otherwise,
// and prints its log if the test failed.
//
// This machinery exists because an operator's handlers are worth testing
// where they run: against a real API server, with the reactor's retries,
// finalizers and persisted progress, which no fake client reproduces. The
// package is part of the runtime module and depends on nothing more than
// an operator does (client-go): the control plane's helper, which needs
// controller-runtime, is the separate envtest module.
package kopftest

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/kopf-go/kopf"
	"github.com/kopf-go/kopf/internal/testutil"
	"github.com/kopf-go/kopf/runtime/cli"
	"github.com/kopf-go/kopf/runtime/operator"
	"github.com/kopf-go/kopf/runtime/reactor"
)

// StopTimeout is how long Stop waits for the operator to exit: Kopf's
// exit timeout for the handlers in progress, and more.
const StopTimeout = 30 * time.Second

// Operator is an operator running in the test's process. Its methods are
// safe for concurrent use.
type Operator struct {
	t      testing.TB
	logs   *Buffer
	cancel context.CancelFunc
	done   chan struct{} // closed when the operator has exited
	err    error         // the exit error, once done is closed
	ready  chan struct{} // closed when the operator is ready
	once   sync.Once     // closes ready

	mu       sync.Mutex // guards outcomes
	outcomes []Outcome

	stopMu  sync.Mutex // guards stopped and stopErr; held while stopping
	stopped bool       // Stop was called
	stopErr error      // what Stop returned

	probe probes // the probe handlers' runner, once started
}

// Buffer is a bytes.Buffer safe for concurrent writes and reads: a log
// sink for an operator run by other means (kopf.Run with kopf.WithLogger,
// kopf.NewLogger) while the test reads it. The zero value is ready to use.
type Buffer = testutil.Buffer

// FastSettings changes Kopf's default settings into those of Kopf's own
// test runs of its examples, for kopf.WithSettings: a failed handler is
// retried after 1 second instead of 60. Start applies it before the
// test's own options.
func FastSettings(s *kopf.Settings) {
	s.Execution.DefaultBackoff = time.Second
}

// Start registers the handlers that register adds and runs the operator in
// a goroutine, until Stop or the end of the test, connected with cfg.
//
// By default it serves all namespaces (kopf.WithAllNamespaces), runs
// standalone (kopf.WithStandalone) with FastSettings, and looks up
// resources that it cannot find yet (CRDs created later) every second.
// opts apply after these defaults and may change them, except that the
// log always goes to the Operator (a kopf.WithLogger is replaced) and
// cfg is always the configuration (a kopf.WithConfig is replaced).
//
// If the handlers do not register or the operator cannot start, the
// operator exits at once: the waiting methods then fail the test with its
// error, and so does the cleanup; Stop returns it.
func Start(t testing.TB, cfg *rest.Config, register func(*kopf.Registry) error, opts ...kopf.Option) *Operator {
	t.Helper()
	o := newOperator(t, cfg)
	all := append(defaults(), opts...)
	all = append(all, o.forced(cfg)...)
	o.run(func(ctx context.Context) error { return kopf.Run(ctx, register, all...) })
	return o
}

// StartMain runs a main-like function of the operator in a goroutine,
// until Stop or the end of the test: main gets the context whose
// cancellation is the operator's stop, and the options that connect it to
// cfg, capture its log and observe its handlers, which it must pass last
// to kopf.Run:
//
//	func run(ctx context.Context, opts ...kopf.Option) error {
//		return kopf.Run(ctx, Register, append([]kopf.Option{
//			kopf.WithSettings(...), // the operator's own
//		}, opts...)...)
//	}
//
// Unlike Start, it adds no defaults of namespaces or settings (only
// kopf.WithStandalone): those are main's own choice, under test. Its
// return value is the operator's exit error (see Stop).
func StartMain(t testing.TB, cfg *rest.Config, main func(ctx context.Context, opts ...kopf.Option) error) *Operator {
	t.Helper()
	o := newOperator(t, cfg)
	opts := append([]kopf.Option{kopf.WithStandalone()}, o.forced(cfg)...)
	o.run(func(ctx context.Context) error { return main(ctx, opts...) })
	return o
}

// StartCommand runs the operator's command line, as `kopf.Main(register,
// opts...)` would with the arguments args (e.g. "run", "-n", "default"),
// in a goroutine, until Stop or the end of the test: Kopf's
// KopfRunner(['run', ...]). The options apply as in Start, after its
// defaults; the command line's flags take precedence as they do under
// kopf.Main, except that the log always goes to the Operator at debug
// level (-v, -q and --log-format have no effect), and cfg is used unless
// --kubeconfig is given. Its exit error is the command's: an unknown flag,
// a failed start.
//
// The command handles SIGINT and SIGTERM as an operator's binary does, so
// while it runs, the test process is stopped by those signals only after
// the operator has stopped.
func StartCommand(t testing.TB, cfg *rest.Config, args []string, register func(*kopf.Registry) error, opts ...kopf.Option) *Operator {
	t.Helper()
	o := newOperator(t, cfg)
	all := append(defaults(), opts...)
	all = append(all, o.forced(cfg)...)
	var co operator.Options
	for _, opt := range all {
		opt(&co)
	}
	o.run(func(ctx context.Context) error {
		cmd := cli.NewCommandWith(register, o.logs, co)
		cmd.SetArgs(args)
		cmd.SetOut(o.logs)
		cmd.SetErr(o.logs)
		return cmd.ExecuteContext(ctx)
	})
	return o
}

// defaults are Start's options before the test's own.
func defaults() []kopf.Option {
	return []kopf.Option{kopf.WithAllNamespaces(), kopf.WithStandalone(), kopf.WithSettings(FastSettings)}
}

func newOperator(t testing.TB, cfg *rest.Config) *Operator {
	t.Helper()
	if cfg == nil {
		t.Fatal("kopftest: the rest.Config is nil (envtest.Start(t).Config is one)")
	}
	return &Operator{t: t, logs: &Buffer{}, done: make(chan struct{}), ready: make(chan struct{})}
}

// forced are the options that connect the operator to the test: always
// last.
func (o *Operator) forced(cfg *rest.Config) []kopf.Option {
	logger := kopf.NewLogger(o.logs, kopf.LogFull, slog.LevelDebug)
	return []kopf.Option{
		kopf.WithConfig(rest.CopyConfig(cfg)),
		kopf.WithLogger(logger),
		func(co *operator.Options) {
			prev := co.Ready
			co.Ready = func() {
				o.once.Do(func() { close(o.ready) })
				if prev != nil {
					prev()
				}
			}
			co.Observe = o.observe
			co.Prober = o.setProbe
			if co.RescanInterval == 0 {
				co.RescanInterval = time.Second
			}
		},
	}
}

// run runs fn in a goroutine and stops it at the test's end.
func (o *Operator) run(fn func(ctx context.Context) error) {
	ctx, cancel := context.WithCancel(context.Background())
	o.cancel = cancel
	go func() {
		defer close(o.done)
		o.err = fn(ctx)
	}()
	o.t.Cleanup(func() {
		o.stopMu.Lock()
		stopped := o.stopped
		o.stopMu.Unlock()
		if err := o.Stop(); err != nil && !stopped {
			o.t.Errorf("the operator: %v", err)
		}
		if o.t.Failed() {
			o.t.Logf("the operator's log:\n%s", o.logs.String())
		}
	})
}

// Stop stops the operator (Kopf's stop flag: the watches end, the handlers
// in progress get settings.Queueing.ExitTimeout to finish) and waits up
// to StopTimeout for it to exit. It returns the operator's exit error: nil
// after a clean stop, the reason if it could not start or if it exited
// before, an error if it does not exit in time. It may be called more
// than once and returns the same each time.
func (o *Operator) Stop() error {
	o.stopMu.Lock()
	defer o.stopMu.Unlock()
	if o.stopped {
		return o.stopErr
	}
	o.stopped = true
	o.cancel()
	select {
	case <-o.done:
		o.stopErr = o.err
	case <-time.After(StopTimeout):
		o.stopErr = fmt.Errorf("the operator did not stop in %s", StopTimeout)
	}
	return o.stopErr
}

// Done is closed when the operator has exited, by Stop or on its own.
func (o *Operator) Done() <-chan struct{} { return o.done }

// Logs returns everything the operator has logged so far, in Kopf's full
// format ("[time] logger [LEVEL] [namespace/name] message"), debug
// messages included.
func (o *Operator) Logs() string { return o.logs.String() }

// CountLog returns how many times the text occurs in the log.
func (o *Operator) CountLog(text string) int { return strings.Count(o.logs.String(), text) }

// WaitLog waits until the log contains the text. It fails the test
// (t.Fatalf) after the timeout, or at once if the operator exits first.
func (o *Operator) WaitLog(text string, timeout time.Duration) {
	o.t.Helper()
	if err := o.poll(timeout, func() bool { return strings.Contains(o.logs.String(), text) }); err != nil {
		o.t.Fatalf("the operator did not log %q: %v", text, err)
	}
}

// WaitReady waits until the operator is ready: every resource of its
// handlers is found and watched and the first listings are handed to the
// workers (see kopf.WithReady). It fails the test after the timeout, or
// at once if the operator exits first.
func (o *Operator) WaitReady(timeout time.Duration) {
	o.t.Helper()
	if err := o.poll(timeout, func() bool {
		select {
		case <-o.ready:
			return true
		default:
			return false
		}
	}); err != nil {
		o.t.Fatalf("the operator is not ready: %v", err)
	}
}

// errExited is wrapped by poll's error when the operator has exited.
var errExited = errors.New("the operator has exited")

// poll waits until cond holds, the timeout passes, or the operator exits.
func (o *Operator) poll(timeout time.Duration, cond func() bool) error {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		if cond() {
			return nil
		}
		select {
		case <-o.done:
			if cond() {
				return nil
			}
			if o.err != nil {
				return fmt.Errorf("%w: %w", errExited, o.err)
			}
			return errExited
		case <-deadline.C:
			return fmt.Errorf("not in %s", timeout)
		case <-tick.C:
		}
	}
}

// observe records an observation of the reactor as an Outcome.
func (o *Operator) observe(obs reactor.Observation) {
	out := fromObservation(obs, time.Now())
	o.mu.Lock()
	o.outcomes = append(o.outcomes, out)
	o.mu.Unlock()
}
