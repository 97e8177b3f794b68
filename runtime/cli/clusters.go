package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"

	"github.com/kopf-go/kopf/runtime/clusters"
	"github.com/kopf-go/kopf/runtime/operator"
)

// clusterFlags are the flags that make the operator a fleet operator
// (docs/multicluster.md), bound to Options.Clusters by
// complete: --clusters-dir DIR (clusters.KubeconfigDir),
// --clusters-secrets NAMESPACE/SELECTOR (clusters.KubeconfigSecrets: the
// namespace is up to the first "/", the label selector is the rest, e.g.
// "fleet/kopf.dev/fleet=prod"), and --clusters-shared (clusters.Shared over
// the provider of the flags, or else the one set in code). One of
// --clusters-dir and --clusters-secrets, which wins over the provider set
// in code. Their variables: KOPF_RUN_CLUSTERS_DIR, _SECRETS, _SHARED.
type clusterFlags struct {
	dir     string
	secrets string
	shared  bool
}

func addClusterFlags(fl *pflag.FlagSet, f *clusterFlags) {
	fl.StringVar(&f.dir, "clusters-dir", "", "serve one cluster per kubeconfig file in this directory, added and removed while running (docs/multicluster.md)")
	fl.StringVar(&f.secrets, "clusters-secrets", "", `serve one cluster per kubeconfig Secret of the home cluster selected by NAMESPACE/SELECTOR, e.g. "fleet/kopf.dev/fleet=prod" (key "kubeconfig")`)
	fl.BoolVar(&f.shared, "clusters-shared", false, "split the clusters between the replicas that run with --clusters-shared (Leases in $POD_NAMESPACE of the home cluster)")
}

// complete sets o.Clusters from the flags, the home cluster's credentials
// read when the provider runs (o.Config, else o.Login: the operator's).
func (f *clusterFlags) complete(o *operator.Options) error {
	if f.dir != "" && f.secrets != "" {
		return errors.New("either --clusters-dir or --clusters-secrets can be used, not both")
	}
	cfg, login := o.Config, o.Login
	home := func(ctx context.Context) (*rest.Config, error) {
		if cfg != nil || login == nil {
			return cfg, nil
		}
		return login(ctx)
	}
	switch {
	case f.dir != "":
		o.Clusters = clusters.KubeconfigDir(f.dir, clusters.DirOptions{Logger: o.Logger})
	case f.secrets != "":
		ns, selector, ok := strings.Cut(f.secrets, "/")
		if !ok || ns == "" || selector == "" {
			return fmt.Errorf("--clusters-secrets %q: want NAMESPACE/SELECTOR", f.secrets)
		}
		o.Clusters = homeProvider{home: home, make: func(cfg *rest.Config) clusters.Provider {
			return clusters.KubeconfigSecrets(cfg, ns, selector, clusters.SecretOptions{Logger: o.Logger})
		}}
	}
	if f.shared {
		if o.Clusters == nil {
			return errors.New("--clusters-shared needs the clusters: --clusters-dir, --clusters-secrets, or a provider set in code")
		}
		inner, logger := o.Clusters, o.Logger
		o.Clusters = homeProvider{home: home, make: func(cfg *rest.Config) clusters.Provider {
			return clusters.Shared(cfg, inner, clusters.SharedOptions{Logger: logger})
		}}
	}
	return nil
}

// homeProvider is a provider made when it runs, of the home cluster's
// credentials, which the command line loads only then.
type homeProvider struct {
	home func(context.Context) (*rest.Config, error)
	make func(*rest.Config) clusters.Provider
}

func (p homeProvider) Run(ctx context.Context, sink clusters.Sink) error {
	cfg, err := p.home(ctx)
	if err != nil {
		return fmt.Errorf("the home cluster's credentials: %w", err)
	}
	if cfg == nil {
		return errors.New("the home cluster's credentials: none")
	}
	return p.make(cfg).Run(ctx, sink)
}
