package kopf_test

import (
	"context"
	"os"
	"time"

	"k8s.io/client-go/rest"

	"github.com/kopf-go/kopf"
	"github.com/kopf-go/kopf/runtime/clusters"
)

// One operator serves every cluster of a directory of kubeconfig files,
// one cluster per file, added and removed while it runs, as `operator run
// --clusters-dir /etc/fleet` does. See docs/multicluster.md.
func ExampleWithClusters() {
	os.Exit(kopf.Main(register,
		kopf.WithClusters(clusters.KubeconfigDir("/etc/fleet", clusters.DirOptions{Interval: 30 * time.Second})),
	))
}

// runSharedFleet embeds a fleet operator in a program running in its home
// cluster: its clusters are the kubeconfig Secrets labelled
// kopf.dev/fleet=prod in the namespace fleet, split between the program's
// replicas.
func runSharedFleet(ctx context.Context) error {
	home, err := rest.InClusterConfig()
	if err != nil {
		return err
	}
	secrets := clusters.KubeconfigSecrets(home, "fleet", "kopf.dev/fleet=prod", clusters.SecretOptions{})
	return kopf.Run(ctx, register,
		kopf.WithConfig(home),
		kopf.WithClusters(clusters.Shared(home, secrets, clusters.SharedOptions{
			Namespace:     "fleet",
			LeaseDuration: 15 * time.Second,
		})),
	)
}

// runListed serves the clusters that the program knows itself, and one
// more that it learns of while the operator runs.
func runListed(ctx context.Context, eu, us *rest.Config, later <-chan *rest.Config) error {
	fleet := clusters.List(
		clusters.Cluster{Name: "eu", Config: eu},
		clusters.Cluster{Name: "us", Config: us},
	)
	go func() {
		if cfg, ok := <-later; ok {
			_ = fleet.Add(ctx, clusters.Cluster{Name: "asia", Config: cfg})
		}
	}()
	return kopf.Run(ctx, register, kopf.WithClusters(fleet))
}

var _, _ = runSharedFleet, runListed
