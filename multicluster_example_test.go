package kopf_test

import (
	"context"
	"fmt"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/kopf-go/kopf"
	"github.com/kopf-go/kopf/runtime/clusters"
)

// docs/multicluster.md shows fleetRegister and runEastWest verbatim.

func fleetRegister(r *kopf.Registry) error {
	return r.AddChanging(kopf.ChangingHandler{
		ID:       "create_fn",
		Selector: kopf.Selector{Group: "kopf.dev", Version: "v1", Name: "kopfexamples"},
		Reasons:  []kopf.Reason{kopf.ReasonCreate},
		Fn: func(ctx context.Context, kw *kopf.ChangingKwargs) (any, error) {
			// kw.Cluster names the object's cluster; kopf.Client(ctx, ...)
			// and kopf.RESTConfig(ctx) are that cluster's.
			kw.Logger.Info(fmt.Sprintf("Created in %s.", kw.Cluster))
			return map[string]any{"cluster": kw.Cluster}, nil
		},
	})
}

func runEastWest(ctx context.Context) error {
	east, err := clientcmd.BuildConfigFromFlags("", "/etc/fleet/east.kubeconfig")
	if err != nil {
		return err
	}
	west, err := clientcmd.BuildConfigFromFlags("", "/etc/fleet/west.kubeconfig")
	if err != nil {
		return err
	}
	return kopf.Run(ctx, fleetRegister,
		kopf.WithAllNamespaces(),
		kopf.WithReadiness("http://0.0.0.0:8080/readyz"),
		kopf.WithClusters(clusters.List(
			clusters.Cluster{Name: "east", Config: east},
			clusters.Cluster{Name: "west", Config: west},
		)),
	)
}

var _ = runEastWest
