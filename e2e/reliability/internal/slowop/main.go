// Command slowop is the operator that the reliability tests run as a
// separate process and kill: two creation handlers for KopfExample
// objects, a fast one and a slow one (it sleeps for $SLOWOP_SLEEP, 5s by
// default). Every invocation is appended to the file $SLOWOP_RECORD as a
// line "<event> <handler> <namespace/name> retry=<n> pid=<pid>", where the
// event is "invoked" when a handler starts and "finished" when it returns;
// each line is synced before the handler goes on, so the record survives a
// SIGKILL.
//
//	SLOWOP_RECORD=/tmp/record slowop run -A --standalone -v --kubeconfig ...
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/kopf-go/kopf/runtime/causes"
	"github.com/kopf-go/kopf/runtime/cli"
	"github.com/kopf-go/kopf/runtime/kwargs"
	"github.com/kopf-go/kopf/runtime/registry"
	"github.com/kopf-go/kopf/runtime/resources"
)

func main() {
	os.Exit(cli.Main(register))
}

func register(r *registry.Registry) error {
	sleep := 5 * time.Second
	if v := os.Getenv("SLOWOP_SLEEP"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			return fmt.Errorf("SLOWOP_SLEEP: %w", err)
		}
		sleep = d
	}
	sel := resources.Selector{Name: "kopfexamples"}
	if err := r.AddChanging(registry.ChangingHandler{
		ID: "fast_fn", Selector: sel, Reasons: []causes.Reason{causes.Create},
		Fn: func(ctx context.Context, kw *kwargs.Changing) (any, error) {
			if err := record("invoked", "fast_fn", kw); err != nil {
				return nil, err
			}
			return map[string]any{"message": "fast"}, record("finished", "fast_fn", kw)
		},
	}); err != nil {
		return err
	}
	return r.AddChanging(registry.ChangingHandler{
		ID: "slow_fn", Selector: sel, Reasons: []causes.Reason{causes.Create},
		Fn: func(ctx context.Context, kw *kwargs.Changing) (any, error) {
			if err := record("invoked", "slow_fn", kw); err != nil {
				return nil, err
			}
			select {
			case <-time.After(sleep):
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return map[string]any{"message": "slow"}, record("finished", "slow_fn", kw)
		},
	})
}

// record appends one synced line to $SLOWOP_RECORD.
func record(event, handler string, kw *kwargs.Changing) error {
	f, err := os.OpenFile(os.Getenv("SLOWOP_RECORD"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	line := fmt.Sprintf("%s %s %s/%s retry=%d pid=%d\n", event, handler, kw.Namespace, kw.Name, kw.Retry, os.Getpid())
	if _, err := f.WriteString(line); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
