package envtest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
)

// KubernetesVersion is the version of etcd's and kube-apiserver's control
// plane that kopf-go is tested with and that `kopf-gen envtest` builds by
// default.
const KubernetesVersion = "1.35.4"

// ErrNoAssets is wrapped by the errors of Assets (and so of Start and
// StartDetached) when the control-plane binaries are missing, so that a
// test may skip rather than fail:
//
//	if _, err := envtest.Assets(); errors.Is(err, envtest.ErrNoAssets) {
//		t.Skip(err)
//	}
var ErrNoAssets = errors.New("the control-plane binaries (etcd, kube-apiserver) are not found")

// Assets returns the directory of the control-plane binaries (etcd and
// kube-apiserver) that Start uses:
//
//   - $KUBEBUILDER_ASSETS if it is set, as controller-runtime's envtest and
//     setup-envtest have it;
//   - else CacheDir(KubernetesVersion): where `kopf-gen envtest` builds them.
//
// The error, if any, wraps ErrNoAssets and says how to get the binaries:
// `go run github.com/kopf-go/kopf/cmd/kopf-gen@latest envtest` builds them
// from the Go module proxy (no download of binaries) and prints the
// directory for KUBEBUILDER_ASSETS.
func Assets() (dir string, err error) {
	if dir := os.Getenv("KUBEBUILDER_ASSETS"); dir != "" {
		return dir, checkAssets(dir, "$KUBEBUILDER_ASSETS")
	}
	dir, err = CacheDir(KubernetesVersion)
	if err != nil {
		return "", fmt.Errorf("%w: KUBEBUILDER_ASSETS is not set and %w", ErrNoAssets, err)
	}
	return dir, checkAssets(dir, "kopf-gen envtest's cache; KUBEBUILDER_ASSETS is not set")
}

// CacheDir is where `kopf-gen envtest` builds the binaries of a Kubernetes
// version (e.g. "1.35.4") by default, in setup-envtest's layout:
// <the user's cache directory>/kopf-go/k8s/<version>-<GOOS>-<GOARCH>.
func CacheDir(version string) (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("finding the user's cache directory: %w", err)
	}
	return filepath.Join(cache, "kopf-go", "k8s", fmt.Sprintf("%s-%s-%s", version, runtime.GOOS, runtime.GOARCH)), nil
}

// checkAssets fails unless dir holds both binaries; from says where dir
// comes from.
func checkAssets(dir, from string) error {
	for _, name := range []string{"etcd", "kube-apiserver"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			return fmt.Errorf("%w: %s is missing in %s (%s). "+
				"Build them with `go run github.com/kopf-go/kopf/cmd/kopf-gen@latest envtest` "+
				"(or `kopf-gen envtest`) and set KUBEBUILDER_ASSETS to the directory it prints",
				ErrNoAssets, name, dir, from)
		}
	}
	return nil
}
