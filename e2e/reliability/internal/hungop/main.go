// Command hungop is the operator that the exit tests run as a separate
// process and stop with signals: one creation handler for KopfExample
// objects, hung_fn, which logs "hung_fn is invoked" and then blocks for
// $HUNGOP_BLOCK (10m by default) ignoring its context, as a handler stuck
// in a call that takes no context does.
//
//	hungop run -n NAMESPACE --standalone -v --kubeconfig ...
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
	block := 10 * time.Minute
	if v := os.Getenv("HUNGOP_BLOCK"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			return fmt.Errorf("HUNGOP_BLOCK: %w", err)
		}
		block = d
	}
	return r.AddChanging(registry.ChangingHandler{
		ID: "hung_fn", Selector: resources.Selector{Name: "kopfexamples"}, Reasons: []causes.Reason{causes.Create},
		Fn: func(_ context.Context, kw *kwargs.Changing) (any, error) {
			kw.Logger.Info("hung_fn is invoked")
			time.Sleep(block) // deliberately deaf to the context
			return map[string]any{"message": "finished"}, nil
		},
	})
}
