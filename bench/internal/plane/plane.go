// Package plane starts what each of bench/'s own benchmark commands
// (cmd/daemons, cmd/indexing, cmd/sharding) starts first: a local control
// plane outside any test (e2e/cluster.StartDetached), a work directory
// holding its admin kubeconfig, and files of examples/ applied to it.
package plane

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/kopf-go/kopf/e2e/cluster"
	"github.com/kopf-go/kopf/envtest"
)

// Plane is a running control plane with its work directory.
type Plane struct {
	*cluster.Cluster
	// Work is a temporary directory for logs and binaries; Stop removes it.
	Work string
	// Kubeconfig is the admin kubeconfig, Work/kubeconfig.
	Kubeconfig string
}

// Start starts a control plane, makes a work directory named after name,
// and applies the files of examples/ given (e.g. "crd.yaml"), in order.
// On an error, whatever was started is stopped.
func Start(ctx context.Context, name string, examples ...string) (_ *Plane, err error) {
	c, err := cluster.StartDetached()
	if err != nil {
		return nil, fmt.Errorf("starting the control plane: %w", err)
	}
	p := &Plane{Cluster: c}
	defer func() {
		if err != nil {
			p.Stop()
		}
	}()
	if p.Work, err = os.MkdirTemp("", name+"-bench-"); err != nil {
		return nil, err
	}
	p.Kubeconfig = filepath.Join(p.Work, "kubeconfig")
	if err := c.WriteKubeconfig(p.Kubeconfig); err != nil {
		return nil, err
	}
	root, err := cluster.RepoRoot()
	if err != nil {
		return nil, err
	}
	for _, file := range examples {
		data, err := os.ReadFile(filepath.Join(root, "examples", file))
		if err != nil {
			return nil, err
		}
		if _, err := envtest.Apply(ctx, c.Config, data); err != nil {
			return nil, fmt.Errorf("applying examples/%s: %w", file, err)
		}
	}
	return p, nil
}

// Stop stops the control plane and removes the work directory.
func (p *Plane) Stop() {
	_ = p.Cluster.Stop()
	if p.Work != "" {
		_ = os.RemoveAll(p.Work)
	}
}
