// Package port checks what `kopf-gen port` promises a Kopf user, end to
// end (issue 28's "done when"): a Kopf operator written in Python for this
// test (testdata/operator.py, with its CRD) is ported with this checkout of
// kopf-go, the output builds as written, and its binary, run as a process
// against a real kube-apiserver, behaves as Kopf would: the create
// handler's returned dict lands in status.create_fn, the field handler's
// patch in the status, the deletion handler logs its line and the
// finalizer is released. An operator of built-in resources only
// (testdata/builtin.py, no CRD) passes its ported repository's own tests,
// the end-to-end one included.
//
// kopf-gen port parses Python with python3's ast module: without python3
// the tests skip, and fail under CI (CI=true), which has Debian's.
package port

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/kopf-go/kopf/e2e/cluster"
	"github.com/kopf-go/kopf/e2e/internal/proc"
	"github.com/kopf-go/kopf/envtest"
)

const timeout = time.Minute

var widgets = schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}

// python is the interpreter that parses: $KOPF_PYTHON, else Debian's
// /usr/bin/python3 (as e2e/peering's), else python3 on PATH. Without one,
// the test skips, or fails under CI.
func python(t *testing.T) string {
	t.Helper()
	for _, p := range []string{os.Getenv("KOPF_PYTHON"), "/usr/bin/python3", "python3"} {
		if p == "" {
			continue
		}
		if exe, err := exec.LookPath(p); err == nil {
			return exe
		}
	}
	if ci, _ := strconv.ParseBool(os.Getenv("CI")); ci {
		t.Fatal("no python3, and under CI kopf-gen port's end-to-end test must run")
	}
	t.Skip("no python3: kopf-gen port parses Python with it (CI fails instead of skipping)")
	return ""
}

// run runs a command in dir with env added to the test's environment, and
// fails the test with its output if it fails.
func run(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s in %s: %v\n%s", name, strings.Join(args, " "), dir, err, out.String())
	}
	return out.String()
}

// port builds kopf-gen from this checkout and ports the Python files (and
// CRDs) into a new repository named name, which requires this checkout
// (--kopf-replace); it returns the repository's directory.
func port(t *testing.T, name string, crds []string, files ...string) string {
	t.Helper()
	root, err := cluster.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	kopfGen := filepath.Join(work, "kopf-gen")
	if err := cluster.BuildKopfGen(root, kopfGen); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(work, name)
	args := []string{"port", "--python", python(t), "--out", dir, "--module", "example.com/" + name, "--kopf-replace", root}
	for _, c := range crds {
		abs, _ := filepath.Abs(c)
		args = append(args, "--crd", abs)
	}
	for _, f := range files {
		abs, _ := filepath.Abs(f)
		args = append(args, abs)
	}
	out := run(t, work, nil, kopfGen, args...)
	t.Logf("kopf-gen port:\n%s", out)
	if !allTranslated(out) {
		t.Errorf("kopf-gen port left statements untranslated:\n%s", out)
	}
	return dir
}

// allTranslated: every handler's line in kopf-gen port's summary says
// "  0 left".
func allTranslated(out string) bool {
	for _, line := range strings.Split(out, "\n") {
		if strings.HasSuffix(line, "left (TODO(port))") && !strings.Contains(line, " 0 left") {
			return false
		}
	}
	return true
}

// TestPortedOperator is issue 28's end-to-end test of a ported operator:
// the binary built from kopf-gen port's output as written handles widgets
// on a real API server as the Python would.
func TestPortedOperator(t *testing.T) {
	dir := port(t, "widgets", []string{"testdata/crd.yaml"}, "testdata/operator.py")
	bin := filepath.Join(dir, "bin", "operator")
	run(t, dir, nil, "go", "build", "-o", bin, ".")

	c := cluster.Start(t, envtest.WithCRDs("testdata/crd.yaml"))
	home := t.TempDir()
	op := proc.Start(t, bin, proc.Options{
		Name: "the ported operator",
		Log:  filepath.Join(home, "operator.log"),
		Env:  []string{"KUBECONFIG=" + c.Kubeconfig(t, home), "HOME=" + home},
		Args: []string{"run", "--all-namespaces", "--standalone"},
	})
	client := dynamic.NewForConfigOrDie(c.Config).Resource(widgets).Namespace("default")
	ctx := t.Context()
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w1"},
		"spec":     map[string]any{"size": int64(2)},
	}}
	if _, err := client.Create(ctx, obj, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// The create handler's dict is its result, in status.create_fn; the
	// field handler's patch sees None -> 2 (the object's creation).
	waitStatus(ctx, t, client, "w1", map[string]string{
		"create_fn.message": "hello w1",
		"create_fn.size":    "2",
		"resized":           "None -> 2",
	})
	op.WaitLog(t, "Creating 'w1' of size 2.", timeout)
	got, err := client.Get(ctx, "w1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if fins := got.GetFinalizers(); len(fins) != 1 || fins[0] != "kopf.zalando.org/KopfFinalizerMarker" {
		t.Errorf("finalizers %v, want Kopf's one (a deletion handler is registered)", fins)
	}

	// The field handler, on an update of spec.size.
	patch := []byte(`{"spec": {"size": 5}}`)
	if _, err := client.Patch(ctx, "w1", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	waitStatus(ctx, t, client, "w1", map[string]string{"resized": "2 -> 5"})

	// The deletion handler runs, logs, and releases the finalizer.
	if err := client.Delete(ctx, "w1", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	op.WaitLog(t, "Deleting 'w1': bye.", timeout)
	err = cluster.WaitFor(ctx, timeout, func(ctx context.Context) (bool, error) {
		_, err := client.Get(ctx, "w1", metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		t.Fatalf("w1 still exists (the finalizer not released): %v", err)
	}
	if logs := op.Logs(); regexp.MustCompile(`Handler '[^']*' failed|\[ERROR`).MatchString(logs) {
		t.Errorf("a handler failed:\n%s", logs)
	}
}

// waitStatus polls the object until its status has every dotted field
// with the value printed by fmt's %v, and fails the test if it does not
// within timeout.
func waitStatus(ctx context.Context, t *testing.T, client dynamic.ResourceInterface, name string, want map[string]string) {
	t.Helper()
	var last map[string]any
	err := cluster.WaitFor(ctx, timeout, func(ctx context.Context) (bool, error) {
		obj, err := client.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		last = obj.Object
		for path, value := range want {
			got, ok, _ := unstructured.NestedFieldNoCopy(obj.Object, append([]string{"status"}, strings.Split(path, ".")...)...)
			if !ok || fmt.Sprint(got) != value {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		t.Fatalf("status of %s: want %v, have %v: %v", name, want, last["status"], err)
	}
}

// TestPortedBuiltinOnly: an operator of built-in resources only has no
// CRD (config/crd holds kopf-gen's kustomization.yaml alone); its ported repository's own tests (unit and
// end-to-end, the latter required to run: KOPF_E2E) pass as written.
func TestPortedBuiltinOnly(t *testing.T) {
	dir := port(t, "configmaps", nil, "testdata/builtin.py")
	if crds, _ := filepath.Glob(filepath.Join(dir, "config", "crd", "*_*.yaml")); len(crds) > 0 {
		t.Fatalf("config/crd holds %v; this test is of a repository without CRDs", crds)
	}
	assets, err := cluster.AssetsDir()
	if err != nil {
		t.Fatal(err)
	}
	out := run(t, dir, []string{"KUBEBUILDER_ASSETS=" + assets, "KOPF_E2E=1"}, "go", "test", "-count=1", "./...")
	for _, want := range []string{"ok  \texample.com/configmaps/internal/handlers", "ok  \texample.com/configmaps/test/e2e"} {
		if !strings.Contains(out, want) {
			t.Errorf("go test ./... lacks %q:\n%s", want, out)
		}
	}
}
