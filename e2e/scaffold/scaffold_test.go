// Package scaffold checks what `kopf-gen init` promises a new user, end to
// end: in a temporary directory, an operator scaffolded with this checkout
// of kopf-go passes its own `make test-e2e`, on etcd and kube-apiserver from
// `kopf-gen envtest`; and it runs as docs/first-operator.md says, with
// `make cluster` and `make run`. The scaffolds' `make test` (vet and unit
// tests), `make lint`, `make build` and `make generate`, which need no
// control plane, run in cmd/kopf-gen's TestInit, TestInitWebhooks and
// TestInitVariants.
package scaffold

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kopf-go/kopf/e2e/cluster"
	"github.com/kopf-go/kopf/kopftest"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"
)

// kopfGenBin is kopf-gen built from this checkout, once for the package
// (TestMain, with cluster.BuildKopfGen): every test's kopf-gen init runs
// it, and each scaffold gets a copy in its bin/.
var kopfGenBin string

func TestMain(m *testing.M) {
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	root, err := filepath.Abs("../..")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	tmp, err := os.MkdirTemp("", "e2e-scaffold-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(tmp)
	kopfGenBin = filepath.Join(tmp, "kopf-gen")
	if err := cluster.BuildKopfGen(root, kopfGenBin); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// scaffold runs kopf-gen init in a temporary directory with this checkout
// as kopf-go (--kopf-replace) and the flags added, and returns the
// scaffold's directory and init's output. The scaffold's bin/kopf-gen is a
// copy of kopfGenBin: the Makefile's `make kopf-gen` (a prerequisite of
// test-e2e, cluster, generate and verify) still runs its go build, which
// finds the binary current (its build ID) instead of linking it again, as
// on a user's second run.
func scaffold(t *testing.T, flags ...string) (dir, out string) {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	dir = filepath.Join(work, "widget-operator")
	out = run(t, work, nil, kopfGenBin, append([]string{"init", dir, "--module", "example.com/widget-operator",
		"--group", "example.com", "--version", "v1alpha1", "--kind", "Widget", "--kopf-replace", root}, flags...)...)
	if err := cluster.CopyExecutable(kopfGenBin, filepath.Join(dir, "bin", "kopf-gen")); err != nil {
		t.Fatal(err)
	}
	return dir, out
}

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

// TestScaffoldClusterNoStatus runs the end-to-end test of a scaffold of a
// cluster-scoped kind without a status subresource (kopf-gen init --scope
// Cluster --no-status) with make test-e2e: the operator serves objects
// without a namespace and stores the handlers' results in the object
// itself. (cmd/kopf-gen's TestInitVariants builds, vets, unit-tests and
// verifies it, with --webhooks.)
func TestScaffoldClusterNoStatus(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Fatalf("the scaffold's tests run with make: %v", err)
	}
	dir, out := scaffold(t, "--scope", "Cluster", "--no-status")
	t.Logf("kopf-gen init:\n%s", out)
	out = run(t, dir, append(envtestFlags(t), "KUBEBUILDER_ASSETS="), "make", "test-e2e")
	for _, want := range []string{"--- PASS: TestWidget", "ok  \texample.com/widget-operator/test/e2e"} {
		if !strings.Contains(out, want) {
			t.Errorf("make test-e2e lacks %q:\n%s", want, out)
		}
	}
}

// TestScaffold is issue 11's "done when": kopf-gen init with the local
// kopf-go, then the scaffold's make test-e2e passes (its make test, with
// make lint and make build, passes in cmd/kopf-gen's TestInit, on the same
// scaffold but for the module path); then docs/first-operator.md's make
// cluster and make run.
func TestScaffold(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Fatalf("the scaffold's tests run with make: %v", err)
	}
	dir, out := scaffold(t)
	t.Logf("kopf-gen init:\n%s", out)
	flags := envtestFlags(t)
	testE2E(t, dir, flags)

	// docs/first-operator.md's way to a running operator: make cluster in
	// the background, make run against its kubeconfig, the sample object.
	kubeconfig := filepath.Join(dir, "bin", "kubeconfig")
	cluster := start(t, dir, append(flags, "KUBEBUILDER_ASSETS="), "make", "cluster")
	waitFor(t, 3*time.Minute, "make cluster to write "+kubeconfig, cluster, func() bool {
		_, err := os.Stat(kubeconfig)
		return err == nil
	})
	operator := start(t, dir, []string{"KUBECONFIG=" + kubeconfig}, "make", "run")
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	widgets := dynamic.NewForConfigOrDie(cfg).Resource(schema.GroupVersionResource{Group: "example.com", Version: "v1alpha1", Resource: "widgets"}).Namespace("default")
	sample, err := os.ReadFile(filepath.Join(dir, "config", "samples", "widgets.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(sample, &obj.Object); err != nil {
		t.Fatal(err)
	}
	// The CRD is installed by make cluster; the API server may take a moment to serve it.
	waitFor(t, time.Minute, "the sample to be created", operator, func() bool {
		_, err := widgets.Create(t.Context(), obj, metav1.CreateOptions{})
		return err == nil
	})
	waitFor(t, 2*time.Minute, "the operator (make run) to say hello in status.create", operator, func() bool {
		got, err := widgets.Get(t.Context(), obj.GetName(), metav1.GetOptions{})
		if err != nil {
			return false
		}
		msg, _, _ := unstructured.NestedString(got.Object, "status", "create", "message")
		return msg == "Hello, "+obj.GetName()+"!"
	})
	operator.stop(t)
	cluster.stop(t)
	if out := cluster.out.String(); !strings.Contains(out, "export KUBECONFIG="+kubeconfig) || !strings.Contains(out, "Stopping the control plane.") {
		t.Errorf("make cluster's output:\n%s", out)
	}
}

// testE2E runs the default scaffold's make test-e2e: kopf-gen envtest
// (which finds the binaries), then the end-to-end test on them, required to
// run. With KUBEBUILDER_ASSETS (flags), in full mode (docs/testing.md), on
// the controllers that `make controlplane` built beside the API server,
// and not in fast mode as well: fast mode, make test-e2e's default, runs in
// TestScaffoldWebhooks and TestScaffoldClusterNoStatus, and on this same
// scaffold (published) in e2e/release's TestRelease. Without
// KUBEBUILDER_ASSETS, in fast mode: full mode would build the controllers
// into the user's cache, minutes of it.
func testE2E(t *testing.T, dir string, flags []string) {
	t.Helper()
	env, want := append(flags, "KUBEBUILDER_ASSETS="), []string{"--- PASS: TestWidget", "ok  \texample.com/widget-operator/test/e2e"}
	if flags != nil {
		env, want = append(env, "ENVTEST_CONTROLLERS=1"), append(want, "Full mode: with kube-controller-manager")
	}
	out := run(t, dir, env, "make", "test-e2e")
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("make test-e2e %v lacks %q:\n%s", env, w, out)
		}
	}
	if flags != nil && strings.Contains(out, "kopf-gen envtest: building") {
		t.Errorf("make test-e2e built binaries instead of using %s:\n%s", os.Getenv("KUBEBUILDER_ASSETS"), out)
	}
}

// TestScaffoldWebhooks: kopf-gen init --webhooks, then the scaffold's make
// test-e2e passes: its end-to-end test has the API server call its
// admission webhooks (a refusal with the Validate handler's message, the
// Default handler's mutation stored) through the configurations the
// operator manages. (cmd/kopf-gen's TestInitWebhooks builds, vets,
// unit-tests and verifies the same scaffold.)
func TestScaffoldWebhooks(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Fatalf("the scaffold's tests run with make: %v", err)
	}
	dir, out := scaffold(t, "--webhooks")
	for _, want := range []string{"generated   config/webhook/service.yaml\n", "generated   config/rbac/webhook_role.yaml\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("kopf-gen init --webhooks lacks %q:\n%s", want, out)
		}
	}
	out = run(t, dir, append(envtestFlags(t), "KUBEBUILDER_ASSETS="), "make", "test-e2e")
	for _, want := range []string{"--- PASS: TestWidget", "ok  \texample.com/widget-operator/test/e2e"} {
		if !strings.Contains(out, want) {
			t.Errorf("make test-e2e lacks %q:\n%s", want, out)
		}
	}
}

// process is a command started in a process group of its own, so that it
// and its children (make, go run, the program, etcd, kube-apiserver) stop
// together.
type process struct {
	cmd  *exec.Cmd
	out  *kopftest.Buffer
	done chan struct{}
	err  error
}

// start starts a command in dir; the test's cleanup stops it.
func start(t *testing.T, dir string, env []string, name string, args ...string) *process {
	t.Helper()
	p := &process{out: &kopftest.Buffer{}, done: make(chan struct{})}
	p.cmd = exec.Command(name, args...)
	p.cmd.Dir = dir
	p.cmd.Env = append(os.Environ(), env...)
	p.cmd.Stdout = p.out
	p.cmd.Stderr = p.out
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() { p.stop(t) })
	return p
}

// stop interrupts the process group, as Ctrl-C does, and kills it if it
// has not exited after 30 seconds.
func (p *process) stop(t *testing.T) {
	t.Helper()
	select {
	case <-p.done:
		return
	default:
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGINT)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
		t.Errorf("%s did not stop on SIGINT within 30s:\n%s", p.cmd, p.out.String())
	}
}

// waitFor polls cond until it holds, and fails the test after timeout or
// when the process p exits first.
func waitFor(t *testing.T, timeout time.Duration, what string, p *process, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		select {
		case <-p.done:
			t.Fatalf("waiting for %s: %s exited (%v):\n%s", what, p.cmd, p.err, p.out.String())
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("waiting for %s: not within %s; %s says:\n%s", what, timeout, p.cmd, p.out.String())
		}
	}
}
