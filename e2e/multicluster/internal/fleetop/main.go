// Command fleetop is the fleet operator that TestReplicasSplitTheFleet
// runs as two processes with --clusters-dir and --clusters-shared: a
// creation handler of KopfExample objects that returns, into
// status.create_fn, the process's pid and its kwargs' cluster.
package main

import (
	"context"
	"os"

	"github.com/kopf-go/kopf/runtime/causes"
	"github.com/kopf-go/kopf/runtime/cli"
	"github.com/kopf-go/kopf/runtime/kwargs"
	"github.com/kopf-go/kopf/runtime/registry"
	"github.com/kopf-go/kopf/runtime/resources"
)

func main() { os.Exit(cli.Main(register)) }

func register(r *registry.Registry) error {
	sel := resources.Selector{Group: "kopf.dev", Version: "v1", Name: "kopfexamples"}
	return r.AddChanging(registry.ChangingHandler{ID: "create_fn", Selector: sel, Reasons: []causes.Reason{causes.Create},
		Fn: func(ctx context.Context, kw *kwargs.Changing) (any, error) {
			return map[string]any{"pid": int64(os.Getpid()), "cluster": kw.Cluster}, nil
		}})
}
