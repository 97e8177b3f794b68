// Command kopfgo is the kopf-go contender of the benchmark: one creation
// handler that returns {"message": "hello world"} (as examples/01-minimal)
// and one update handler that returns {"value": spec.value}, registered by
// hand (what kopf-gen would generate, minus the typed kwargs).
//
// By default it runs exactly as a user's operator does: kopf.Main with
// `run -A --standalone -q`. With BENCH_RUN=operator it runs the same
// runtime through operator.Run, as kopf.Main does, with two additions for
// the benchmark: it counts the connections it dials (printed on exit as
// "bench: dials=N"), BENCH_MAX_IN_FLIGHT, if set, overrides
// settings.Networking.MaxInFlight (0: unbounded, the runtime's behaviour
// before that setting existed), and BENCH_WORKER_LIMIT, if set, overrides
// settings.Queueing.WorkerLimit (0: unbounded, one worker per object, the
// runtime's behaviour before that setting existed).
package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strconv"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/kopf-go/kopf"
	"github.com/kopf-go/kopf/runtime/cli"
	"github.com/kopf-go/kopf/runtime/logging"
	"github.com/kopf-go/kopf/runtime/operator"
	"github.com/kopf-go/kopf/runtime/settings"

	"github.com/kopf-go/kopf/bench/internal/instrument"
)

// Register adds the benchmark's handlers.
func Register(r *kopf.Registry) error {
	sel := kopf.Selector{Group: "kopf.dev", Name: "kopfexamples"}
	if err := r.AddChanging(kopf.ChangingHandler{
		ID: "create_fn", Selector: sel, Reasons: []kopf.Reason{kopf.ReasonCreate},
		Fn: func(ctx context.Context, kw *kopf.ChangingKwargs) (any, error) {
			return map[string]any{"message": "hello world"}, nil
		},
	}); err != nil {
		return err
	}
	return r.AddChanging(kopf.ChangingHandler{
		ID: "update_fn", Selector: sel, Reasons: []kopf.Reason{kopf.ReasonUpdate},
		Fn: func(ctx context.Context, kw *kopf.ChangingKwargs) (any, error) {
			return map[string]any{"value": kw.Spec["value"]}, nil
		},
	})
}

func main() {
	instrument.Start()
	code := run()
	instrument.Stop()
	os.Exit(code)
}

func run() int {
	if os.Getenv("BENCH_RUN") != "operator" {
		return kopf.Main(Register)
	}
	// What `run -A --standalone -q` does, plus the dial count.
	reg := kopf.NewRegistry()
	if err := Register(reg); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	cfg, err := cli.LoadConfig("")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	var dials atomic.Int64
	dialer := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	cfg.Dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials.Add(1)
		return dialer.DialContext(ctx, network, addr)
	}
	defer func() { fmt.Fprintf(os.Stderr, "bench: dials=%d\n", dials.Load()) }()
	s := settings.Default()
	for _, o := range []struct {
		env string
		to  *int
	}{
		{"BENCH_MAX_IN_FLIGHT", &s.Networking.MaxInFlight},
		{"BENCH_WORKER_LIMIT", &s.Queueing.WorkerLimit},
	} {
		if v := os.Getenv(o.env); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil {
				fmt.Fprintf(os.Stderr, "%s: %v\n", o.env, err)
				return 2
			}
			*o.to = n
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	err = operator.Run(ctx, reg, operator.Options{
		Config:        cfg,
		AllNamespaces: true,
		Standalone:    true,
		Settings:      s,
		Logger:        logging.New(os.Stderr, logging.Full, slog.LevelWarn),
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}
