// Package scaffold checks what `kopf-gen init` promises a new user, end to
// end: in a temporary directory, an operator scaffolded with this checkout
// of kopf-go passes its own `make test` and `make test-e2e`, the latter on
// etcd and kube-apiserver from `kopf-gen envtest`.
package scaffold

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// run runs a command in dir with env added to the test's environment, and
// fails the test with its output if it fails.
func run(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s in %s: %v\n%s", name, strings.Join(args, " "), dir, err, out.String())
	}
	return out.String()
}

// envtestFlags are the scaffold's make variables that make kopf-gen
// envtest find the binaries of KUBEBUILDER_ASSETS (`make e2e` sets it to
// bin/k8s/<version>-<GOOS>-<GOARCH>, which `make controlplane` built with
// kopf-gen envtest) instead of building them again in the user's cache.
// Without it, kopf-gen envtest uses (and if need be fills) the user's cache.
func envtestFlags(t *testing.T) []string {
	t.Helper()
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if assets == "" {
		t.Log("KUBEBUILDER_ASSETS is not set: kopf-gen envtest uses the user's cache")
		return nil
	}
	version, ok := strings.CutSuffix(filepath.Base(assets), "-"+runtime.GOOS+"-"+runtime.GOARCH)
	if !ok {
		t.Fatalf("KUBEBUILDER_ASSETS=%s is not in kopf-gen envtest's layout (DIR/<version>-%s-%s)", assets, runtime.GOOS, runtime.GOARCH)
	}
	return []string{"ENVTEST_BIN_DIR=" + filepath.Dir(assets), "ENVTEST_K8S_VERSION=" + version}
}

// TestScaffold is issue 11's "done when": kopf-gen init with the local
// kopf-go, then the scaffold's make test and make test-e2e pass.
func TestScaffold(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Fatalf("the scaffold's tests run with make: %v", err)
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	kopfGen := filepath.Join(work, "kopf-gen")
	run(t, filepath.Join(root, "cmd", "kopf-gen"), nil, "go", "build", "-o", kopfGen, ".")

	dir := filepath.Join(work, "widget-operator")
	out := run(t, work, nil, kopfGen, "init", dir, "--module", "example.com/widget-operator",
		"--group", "example.com", "--version", "v1alpha1", "--kind", "Widget", "--kopf-replace", root)
	t.Logf("kopf-gen init:\n%s", out)

	flags := envtestFlags(t)
	// make test: vet and the unit tests. The end-to-end test runs here
	// only if it finds a control plane by itself; without
	// KUBEBUILDER_ASSETS it looks in the user's cache.
	out = run(t, dir, []string{"KUBEBUILDER_ASSETS="}, "make", "test")
	if !strings.Contains(out, "ok  \texample.com/widget-operator/internal/handlers") {
		t.Errorf("make test did not test the handlers:\n%s", out)
	}

	// make test-e2e: kopf-gen envtest (which finds the binaries), then the
	// end-to-end test on them, required to run.
	out = run(t, dir, append(flags, "KUBEBUILDER_ASSETS="), "make", "test-e2e")
	for _, want := range []string{"--- PASS: TestWidget", "ok  \texample.com/widget-operator/test/e2e"} {
		if !strings.Contains(out, want) {
			t.Errorf("make test-e2e lacks %q:\n%s", want, out)
		}
	}
	if flags != nil && strings.Contains(out, "kopf-gen envtest: building") {
		t.Errorf("make test-e2e built the control plane again instead of using %s:\n%s", os.Getenv("KUBEBUILDER_ASSETS"), out)
	}
}
