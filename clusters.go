package kopf

import (
	"github.com/kopf-go/kopf/runtime/clusters"
	"github.com/kopf-go/kopf/runtime/operator"
)

// WithClusters makes the operator a fleet operator: it serves every
// cluster that p engages, each with its own pipelines, while its own
// credentials stay the home cluster's (docs/multicluster.md). The
// providers are package runtime/clusters': clusters.List,
// clusters.KubeconfigDir, clusters.KubeconfigSecrets, and clusters.Shared
// to split them between replicas; on the command line, --clusters-dir,
// --clusters-secrets and --clusters-shared choose one and win over this
// option.
func WithClusters(p clusters.Provider) Option {
	return func(o *operator.Options) { o.Clusters = p }
}
