// Package cluster is kopf-go's own end-to-end tests' control plane: the
// public github.com/kopf-go/kopf/envtest (which starts etcd and
// kube-apiserver through controller-runtime's envtest) plus what only the
// reliability tests and tools of this repository need: restarting the API
// server under running operators (restart.go), a user known by a static
// bearer token (users.go), one control plane shared by a test binary's
// tests (main.go), and finding this repository's own binaries (kopf-gen:
// kopfgen.go, from the one that make test builds).
//
// The binaries are found in $KUBEBUILDER_ASSETS, as envtest users expect,
// or else in bin/k8s/<version>-<os>-<arch> of this repository, where
// `make controlplane` builds them from the Go module proxy. The project's
// own builds die with their parent process, so a test that is killed
// leaves nothing behind; with other binaries, only a clean stop does.
//
// Start, StartDetached and Main take envtest's options; with
// envtest.WithControllers() the control plane also runs
// kube-controller-manager, kube-scheduler and kwok (garbage collection,
// namespace deletion, pods that run), which `make controlplane` builds too.
// Without it, as by default, there is the API server alone.
package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/kopf-go/kopf/envtest"
)

// KubernetesVersion is the version of the control plane this project builds.
const KubernetesVersion = envtest.KubernetesVersion

// Cluster is a running control plane: an envtest.Environment (its Config,
// Kubeconfig, UserConfig, Apply) with a token user and API-server restarts.
type Cluster struct {
	*envtest.Environment
	// certs serves StopAPIServer and StartAPIServer (restart.go).
	certs map[string][]byte
	// dirs are this package's temporary directories (restored
	// certificates, the token file), removed by Stop.
	dirs  []string
	token string // the admin token of TokenUser
}

// Start starts a fresh control plane on free loopback ports in temporary
// directories and stops it when the test ends (pass or fail). It fails the
// test if the binaries are missing or the control plane does not start.
func Start(t testing.TB, opts ...envtest.Option) *Cluster {
	t.Helper()
	c, err := StartDetached(opts...)
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
// (or this process dies), with envtest's options.
func StartDetached(opts ...envtest.Option) (*Cluster, error) {
	c := &Cluster{}
	tokens, err := c.tokenFile()
	if err != nil {
		c.removeDirs()
		return nil, err
	}
	base := []envtest.Option{envtest.WithAPIServerFlag("token-auth-file", tokens)}
	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		dir, err := AssetsDir()
		if err != nil {
			c.removeDirs()
			return nil, err
		}
		base = append(base, envtest.WithAssets(dir))
	}
	env, err := envtest.StartDetached(append(base, opts...)...)
	if err != nil {
		c.removeDirs()
		if errors.Is(err, envtest.ErrNoControllers) {
			err = fmt.Errorf("%w (in this repository, `make controlplane` builds them)", err)
		}
		return nil, err
	}
	c.Environment = env
	return c, nil
}

// Stop stops the control plane and removes its temporary directories.
func (c *Cluster) Stop() error {
	err := c.Environment.Stop()
	c.removeDirs()
	return err
}

// Kubeconfig writes the control plane's admin kubeconfig into
// dir/kubeconfig, for an operator run as a process, and returns its path;
// it fails the test if it cannot.
func (c *Cluster) Kubeconfig(t testing.TB, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "kubeconfig")
	if err := c.WriteKubeconfig(path); err != nil {
		t.Fatal(err)
	}
	return path
}

func (c *Cluster) removeDirs() {
	for _, dir := range c.dirs {
		_ = os.RemoveAll(dir)
	}
	c.dirs = nil
}

// AssetsDir finds the control-plane binaries: $KUBEBUILDER_ASSETS, or the
// repository's bin/k8s/<version>-<os>-<arch>.
func AssetsDir() (string, error) {
	if os.Getenv("KUBEBUILDER_ASSETS") != "" {
		return envtest.Assets()
	}
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(root, "bin", "k8s", fmt.Sprintf("%s-%s-%s", KubernetesVersion, runtime.GOOS, runtime.GOARCH))
	for _, name := range []string{"etcd", "kube-apiserver"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			return "", fmt.Errorf("control-plane binary %s is missing in %s (run `make controlplane` to build it): %w", name, dir, err)
		}
	}
	return dir, nil
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
