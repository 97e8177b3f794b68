package kopf_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/kopf-go/kopf"
)

// Handlers can be registered by hand: this is what generated Register
// functions do.
func ExampleRegistry() {
	reg := kopf.NewRegistry()
	err := reg.AddChanging(kopf.ChangingHandler{
		ID:       "create_fn",
		Selector: kopf.Selector{Group: "kopf.dev", Name: "kopfexamples"},
		Reasons:  []kopf.Reason{kopf.ReasonCreate},
		Fn: func(ctx context.Context, kw *kopf.ChangingKwargs) (any, error) {
			return map[string]any{"message": "hello world"}, nil
		},
	})
	fmt.Println(err, reg.Selectors())
	// Output: <nil> [kopf.dev/kopfexamples]
}

// A sub-handler is registered from inside its parent handler, through the
// parent's context; outside a handler it is refused.
func ExampleSubhandler() {
	err := kopf.Subhandler(context.Background(), kopf.ChangingHandler{
		ID: "item1",
		Fn: func(ctx context.Context, kw *kopf.ChangingKwargs) (any, error) { return nil, nil },
	})
	fmt.Println(err)
	// Output: sub-handlers can only be registered inside a changing handler
}

// Handlers steer their retries with the errors they return.
func ExampleNewTemporaryError() {
	err := fmt.Errorf("connecting: %w", kopf.NewTemporaryError("the database is not ready yet", 10*time.Second))
	var tmp *kopf.TemporaryError
	if errors.As(err, &tmp) {
		fmt.Println(tmp.Message, tmp.Delay)
	}
	// Output: the database is not ready yet 10s
}

// register stands for an operator's generated Register function.
func register(r *kopf.Registry) error {
	return r.AddChanging(kopf.ChangingHandler{
		ID:       "create_fn",
		Selector: kopf.Selector{Group: "kopf.dev", Name: "kopfexamples"},
		Reasons:  []kopf.Reason{kopf.ReasonCreate},
		Fn: func(ctx context.Context, kw *kopf.ChangingKwargs) (any, error) {
			kopf.Info(ctx, kw.Body, "Created")
			return map[string]any{"message": "hello world"}, nil
		},
	})
}

// An operator's main function sets in code what its command line does not
// say: here, Kubernetes Events are not posted, and at most 16 objects are
// processed at once. `<binary> run -A` then runs it as usual.
func ExampleMain() {
	os.Exit(kopf.Main(register, kopf.WithSettings(func(s *kopf.Settings) {
		s.Posting.Enabled = false
		s.Queueing.WorkerLimit = 16
	})))
}

// An operator embedded into another program (Kopf's kopf.operator() in a
// thread of its own, with its ready_flag and stop_flag): it runs in a
// goroutine until its context is cancelled, and tells when it has listed
// the objects it serves. See docs/embedding.md.
func ExampleRun() {
	ctx, stop := context.WithCancel(context.Background())
	defer stop()

	ready := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- kopf.Run(ctx, register,
			kopf.WithNamespaces("default"),
			kopf.WithStandalone(),
			kopf.WithLogger(kopf.NewLogger(os.Stderr, kopf.LogPlain, slog.LevelInfo)),
			kopf.WithSettings(func(s *kopf.Settings) {
				s.Persistence.DiffBaseStorage = &kopf.StatusDiffBaseStorage{}
			}),
			kopf.WithReady(func() { close(ready) }),
		)
	}()

	select {
	case <-ready:
		fmt.Println("The operator has listed its objects.")
	case err := <-done:
		fmt.Println("The operator cannot start:", err)
		return
	}

	// ... the program's own work, while the operator serves ...

	stop() // Kopf's stop_flag: the operator stops and Run returns.
	if err := <-done; err != nil {
		fmt.Println("The operator failed:", err)
	}
}

// Settings start from Kopf's defaults.
func ExampleDefaultSettings() {
	s := kopf.DefaultSettings()
	fmt.Println(s.Persistence.Finalizer, s.Execution.DefaultBackoff, s.Posting.Enabled)
	// Output: kopf.zalando.org/KopfFinalizerMarker 1m0s true
}

// A handler registers sub-handlers of its own kwargs type; each runs after
// the parent returns, with its progress under "<parent id>/<id>".
func ExampleSubhandlerFunc() {
	parent := func(ctx context.Context, kw kopf.ChangingKwargs) error {
		for _, item := range []string{"item1", "item2"} {
			err := kopf.SubhandlerFunc(ctx, item, func(ctx context.Context, kw kopf.ChangingKwargs) error {
				kw.Logger.Info("=== Handling creation for " + item + ". ===")
				return nil
			})
			if err != nil {
				return err
			}
		}
		return nil
	}
	// Outside the reactor, the parent has no sub-handlers to register into.
	fmt.Println(parent(context.Background(), kopf.ChangingKwargs{}))
	// Output: sub-handlers can only be registered inside a changing handler
}

// An operator's main function names the operator in its command line's
// help and --version (by default, the binary's name), and gives the
// defaults of flags it always runs with: `kopfexample-operator run` then
// serves the namespace "default" with the priority 100, unless -n, -A or
// -p say otherwise. See docs/cli.md.
func ExampleWithName() {
	os.Exit(kopf.Main(register,
		kopf.WithName("kopfexample-operator"),
		kopf.WithNamespaces("default"),
		kopf.WithPriority(100),
	))
}

// A logger in Kopf's JSON format, as `--log-format json --log-refkey k8s`
// makes it: the object a record is about goes into the field "k8s".
func ExampleNewLoggerWith() {
	logger := kopf.NewLoggerWith(os.Stderr, kopf.LogOptions{
		Format: kopf.LogJSON,
		Level:  slog.LevelDebug, // --verbose
		RefKey: "k8s",           // --log-refkey k8s
	})
	logger.Info("Starting the operator.")
}
