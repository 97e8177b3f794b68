package envtest_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	crenvtest "sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/kopf-go/kopf/envtest"
)

// WithAssets' binaries are the ones started, also when $KUBEBUILDER_ASSETS
// names others (controller-runtime's envtest would prefer those).
func TestWithAssetsWinsOverTheEnvironment(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"etcd", "kube-apiserver"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\nexit 1\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("KUBEBUILDER_ASSETS", t.TempDir())
	var env *crenvtest.Environment
	_, err := envtest.StartDetached(envtest.WithAssets(dir), envtest.WithEnvironment(func(e *crenvtest.Environment) {
		e.ControlPlaneStartTimeout = time.Second
		env = e
	}))
	if err == nil {
		t.Fatal("a control plane of binaries that exit 1 started")
	}
	if got, want := env.ControlPlane.Etcd.Path, filepath.Join(dir, "etcd"); got != want {
		t.Errorf("etcd is %s, want %s", got, want)
	}
	if got, want := env.ControlPlane.GetAPIServer().Path, filepath.Join(dir, "kube-apiserver"); got != want {
		t.Errorf("kube-apiserver is %s, want %s", got, want)
	}
}
