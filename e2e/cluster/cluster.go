// Package cluster starts a real, local Kubernetes control plane (etcd and
// kube-apiserver, no controllers, no nodes) for end-to-end tests and for
// `make cluster`, using controller-runtime's envtest to start and stop the
// processes.
//
// The binaries are found in $KUBEBUILDER_ASSETS, as envtest users expect,
// or else in bin/k8s/<version>-<os>-<arch> of this repository, where
// `make controlplane` builds them from the Go module proxy. The project's
// own builds die with their parent process, so a test that is killed
// leaves nothing behind; with other binaries, only a clean stop does.
package cluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// KubernetesVersion is the version of the control plane this project builds.
const KubernetesVersion = "1.35.4"

// Cluster is a running control plane.
type Cluster struct {
	// Config is an admin's (system:masters) client configuration.
	Config *rest.Config
	env    *envtest.Environment
	// certs and certDirs serve StopAPIServer and StartAPIServer (restart.go);
	// certDirs also holds the token file's directory (users.go). Every
	// directory in it is removed by Stop.
	certs    map[string][]byte
	certDirs []string
	token    string // the admin token of TokenUser
}

// Start starts a fresh control plane on free loopback ports in temporary
// directories and stops it when the test ends (pass or fail). It fails the
// test if the binaries are missing or the control plane does not start.
func Start(t testing.TB) *Cluster {
	t.Helper()
	c, err := StartDetached()
	if err != nil {
		t.Fatalf("starting the control plane: %v", err)
	}
	t.Cleanup(func() {
		if err := c.Stop(); err != nil {
			t.Errorf("stopping the control plane: %v", err)
		}
	})
	return c
}

// StartDetached starts a control plane that lives until Stop is called
// (or this process dies). Options change how it is started.
func StartDetached(opts ...Option) (*Cluster, error) {
	assets, err := AssetsDir()
	if err != nil {
		return nil, err
	}
	env := &envtest.Environment{
		BinaryAssetsDirectory:    assets,
		ControlPlaneStartTimeout: 90 * time.Second,
		ControlPlaneStopTimeout:  30 * time.Second,
	}
	c := &Cluster{env: env}
	if err := c.configureTokens(); err != nil {
		_ = c.Stop()
		return nil, err
	}
	for _, opt := range opts {
		opt(env)
	}
	cfg, err := env.Start()
	if err != nil {
		_ = c.Stop()
		return nil, err
	}
	cfg.QPS, cfg.Burst = 1000, 2000 // the tests' own clients are not the bottleneck
	c.Config = cfg
	return c, nil
}

// Stop stops the control plane and removes its temporary directories.
func (c *Cluster) Stop() error {
	err := c.env.Stop()
	for _, dir := range c.certDirs {
		_ = os.RemoveAll(dir)
	}
	return err
}

// Kubeconfig returns a kubeconfig for an admin user, for kubectl and for
// operators run as separate processes.
func (c *Cluster) Kubeconfig() ([]byte, error) {
	user, err := c.env.AddUser(envtest.User{Name: "kopf-admin", Groups: []string{"system:masters"}}, c.Config)
	if err != nil {
		return nil, err
	}
	return user.KubeConfig()
}

// WriteKubeconfig writes the admin kubeconfig to a file.
func (c *Cluster) WriteKubeconfig(path string) error {
	data, err := c.Kubeconfig()
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o600)
}

// AssetsDir finds the control-plane binaries: $KUBEBUILDER_ASSETS, or the
// repository's bin/k8s/<version>-<os>-<arch>.
func AssetsDir() (string, error) {
	if dir := os.Getenv("KUBEBUILDER_ASSETS"); dir != "" {
		return dir, checkAssets(dir)
	}
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(root, "bin", "k8s", fmt.Sprintf("%s-%s-%s", KubernetesVersion, runtime.GOOS, runtime.GOARCH))
	return dir, checkAssets(dir)
}

func checkAssets(dir string) error {
	for _, name := range []string{"etcd", "kube-apiserver"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			return fmt.Errorf("control-plane binary %s is missing in %s (run `make controlplane` to build it): %w", name, dir, err)
		}
	}
	return nil
}

// RepoRoot finds the root of this repository from the working directory.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && strings.HasPrefix(string(data), "module github.com/kopf-go/kopf\n") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("not inside the kopf-go repository; set KUBEBUILDER_ASSETS")
		}
		dir = parent
	}
}

// WaitFor polls cond every 50ms until it returns true or an error, or the
// timeout passes.
func WaitFor(ctx context.Context, timeout time.Duration, cond func(ctx context.Context) (bool, error)) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	var lastErr error
	for {
		ok, err := cond(ctx)
		if err != nil {
			lastErr = err
		}
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			if lastErr != nil {
				return fmt.Errorf("%w (last error: %v)", ctx.Err(), lastErr)
			}
			return ctx.Err()
		case <-tick.C:
		}
	}
}
