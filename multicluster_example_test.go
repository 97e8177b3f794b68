package kopf_test

import (
	"context"
	"fmt"

	"k8s.io/client-go/tools/clientcmd"

	"github.com/kopf-go/kopf"
	"github.com/kopf-go/kopf/runtime/clusters"
	"github.com/kopf-go/kopf/runtime/operator"
)

// docs/multicluster.md shows fleetRegister, kubeconfigs and runFleet
// verbatim.

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

// kubeconfigs is a provider of a fixed list of clusters, each a kubeconfig
// file by the cluster's name.
type kubeconfigs map[string]string

func (k kubeconfigs) Run(ctx context.Context, sink clusters.Sink) error {
	for name, path := range k {
		cfg, err := clientcmd.BuildConfigFromFlags("", path)
		if err != nil {
			return fmt.Errorf("the cluster %s: %w", name, err)
		}
		if err := sink.Engage(ctx, clusters.Cluster{Name: name, Config: cfg}); err != nil {
			return err
		}
	}
	<-ctx.Done() // the operator disengages them as it stops
	return nil
}

func runFleet(ctx context.Context) error {
	fleet := kubeconfigs{
		"east": "/etc/fleet/east.kubeconfig",
		"west": "/etc/fleet/west.kubeconfig",
	}
	return kopf.Run(ctx, fleetRegister,
		kopf.WithAllNamespaces(),
		kopf.WithReadiness("http://0.0.0.0:8080/readyz"),
		func(o *operator.Options) { o.Clusters = fleet },
	)
}

var _ = runFleet
