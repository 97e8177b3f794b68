package cluster

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/kopf-go/kopf/envtest"
)

// ShardedKubernetesVersion is the release of the kube-apiserver with
// sharded list and watch (KEP-5866, alpha in 1.36) that `make
// controlplane` builds beside KubernetesVersion's (the Makefile's
// K8S_SHARDED_VERSION), with KubernetesVersion's etcd.
const ShardedKubernetesVersion = "1.36.3"

// ShardedAssetsDir finds the binaries of ShardedKubernetesVersion:
// $KOPF_SHARDED_ASSETS, or the repository's
// bin/k8s/<version>-<os>-<arch>.
func ShardedAssetsDir() (string, error) {
	dir := os.Getenv("KOPF_SHARDED_ASSETS")
	if dir == "" {
		root, err := RepoRoot()
		if err != nil {
			return "", err
		}
		dir = filepath.Join(root, "bin", "k8s", fmt.Sprintf("%s-%s-%s", ShardedKubernetesVersion, runtime.GOOS, runtime.GOARCH))
	}
	for _, name := range []string{"etcd", "kube-apiserver"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			return "", fmt.Errorf("kube-apiserver %s with sharded list and watch: %s is missing in %s (`make controlplane` builds it): %w", ShardedKubernetesVersion, name, dir, err)
		}
	}
	return dir, nil
}

// ShardedOptions are the options of a control plane of
// ShardedKubernetesVersion with the ShardedListAndWatch feature gate on,
// for Start, StartDetached or Main.
func ShardedOptions(dir string) []envtest.Option {
	return []envtest.Option{envtest.WithAssets(dir), envtest.WithAPIServerFlag("feature-gates", "ShardedListAndWatch=true")}
}

// StartSharded is Start with ShardedOptions, and opts. Without the
// binaries, it fails the test under CI (CI=true, as .ci/run sets it) and
// skips it elsewhere.
func StartSharded(t *testing.T, opts ...envtest.Option) *Cluster {
	t.Helper()
	dir, err := ShardedAssetsDir()
	if err != nil {
		NeedSharded(t, err)
	}
	return Start(t, append(ShardedOptions(dir), opts...)...)
}

// NeedSharded ends a test that needs the binaries of
// ShardedKubernetesVersion, which are missing (err says why): it fails
// under CI and skips elsewhere.
func NeedSharded(t *testing.T, err error) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatal(err)
	}
	t.Skip(err)
}
