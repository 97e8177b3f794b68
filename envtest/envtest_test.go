package envtest_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/kopf-go/kopf/envtest"
)

// The control plane starts with the CRDs of a directory and of a file
// served, answers with its version, gives working kubeconfigs and users,
// and stops without leaving its processes behind.
func TestStart(t *testing.T) {
	ctx := context.Background()
	started := time.Now()
	env := envtest.Start(t, envtest.WithCRDs(filepath.Join("testdata", "crds"), filepath.Join("testdata", "widget.yaml")))
	t.Logf("the control plane started in %v", time.Since(started).Round(time.Millisecond))
	cs := kubernetes.NewForConfigOrDie(env.Config)
	v, err := cs.Discovery().ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	if v.GitVersion != "v"+envtest.KubernetesVersion {
		t.Errorf("server version %q, want v%s", v.GitVersion, envtest.KubernetesVersion)
	}

	// Both CRDs are served at once: objects of them can be created.
	dyn := dynamic.NewForConfigOrDie(env.Config)
	for _, tt := range []struct {
		gvr       schema.GroupVersionResource
		kind      string
		namespace string
	}{
		{schema.GroupVersionResource{Group: "kopf.dev", Version: "v1", Resource: "kopfexamples"}, "KopfExample", "default"},
		{schema.GroupVersionResource{Group: "test.kopf.dev", Version: "v1", Resource: "widgets"}, "Widget", ""},
	} {
		obj := &unstructured.Unstructured{}
		obj.SetAPIVersion(tt.gvr.GroupVersion().String())
		obj.SetKind(tt.kind)
		obj.SetName("one")
		if _, err := dyn.Resource(tt.gvr).Namespace(tt.namespace).Create(ctx, obj, metav1.CreateOptions{}); err != nil {
			t.Errorf("creating a %s right after Start: %v", tt.kind, err)
		}
	}

	// Apply installs a CRD later, as served as those of WithCRDs.
	manifest := []byte(`
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gadgets.test.kopf.dev}
spec:
  scope: Namespaced
  group: test.kopf.dev
  names: {kind: Gadget, plural: gadgets, singular: gadget}
  versions:
    - name: v1
      served: true
      storage: true
      schema: {openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}}
---
apiVersion: test.kopf.dev/v1
kind: Gadget
metadata: {name: one}
`)
	if err := env.Apply(ctx, manifest); err != nil {
		t.Fatalf("applying a CRD and an object of it: %v", err)
	}
	gadgets := schema.GroupVersionResource{Group: "test.kopf.dev", Version: "v1", Resource: "gadgets"}
	if _, err := dyn.Resource(gadgets).Namespace("default").Get(ctx, "one", metav1.GetOptions{}); err != nil {
		t.Errorf("the applied Gadget (in the default namespace): %v", err)
	}

	// A user has no permissions but RBAC's.
	userCfg, err := env.UserConfig("someone")
	if err != nil {
		t.Fatal(err)
	}
	_, err = kubernetes.NewForConfigOrDie(userCfg).CoreV1().ConfigMaps("default").List(ctx, metav1.ListOptions{})
	if !apierrors.IsForbidden(err) {
		t.Errorf("a user without a role lists configmaps: %v, want Forbidden", err)
	}

	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := env.WriteKubeconfig(kubeconfig); err != nil {
		t.Fatal(err)
	}
	if path, err := exec.LookPath("kubectl"); err == nil {
		out, err := exec.Command(path, "--kubeconfig", kubeconfig, "get", "crd", "kopfexamples.kopf.dev", "-o", "name").CombinedOutput()
		if err != nil || !strings.Contains(string(out), "kopfexamples.kopf.dev") {
			t.Errorf("kubectl with the written kubeconfig: %v: %s", err, out)
		}
	}

	pids := controlPlanePIDs(t)
	if len(pids) == 0 {
		t.Fatalf("no etcd or kube-apiserver process is found while running")
	}
	if err := env.Stop(); err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		if _, err := os.Stat(filepath.Join("/proc", pid)); err == nil {
			t.Errorf("process %s is still running after Stop", pid)
		}
	}
}

// A missing CRD path fails the start: a typo is not an empty directory.
func TestStartWithMissingCRDs(t *testing.T) {
	if _, err := envtest.Assets(); err != nil {
		t.Fatal(err)
	}
	env, err := envtest.StartDetached(envtest.WithCRDs(filepath.Join("testdata", "no-such-dir")))
	if err == nil {
		_ = env.Stop()
		t.Fatal("StartDetached with a missing CRD path succeeds")
	}
}

// controlPlanePIDs lists this process's etcd and kube-apiserver children.
func controlPlanePIDs(t *testing.T) []string {
	t.Helper()
	return childPIDs(t, "etcd", "kube-apiserver")
}

// childPIDs lists this process's children that run one of the commands.
func childPIDs(t *testing.T, commands ...string) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatalf("no /proc to inspect processes: %v", err)
	}
	self := strings.Fields(readFile("/proc/self/stat"))[0]
	var out []string
	for _, e := range entries {
		stat := readFile(filepath.Join("/proc", e.Name(), "stat"))
		fields := strings.Fields(stat)
		if len(fields) < 4 || fields[3] != self {
			continue
		}
		for _, command := range commands {
			// The kernel's name of the command is its first 15 bytes.
			if strings.Contains(stat, "("+command[:min(len(command), 15)]+")") {
				out = append(out, e.Name())
			}
		}
	}
	return out
}

func readFile(path string) string {
	data, _ := os.ReadFile(path)
	return string(data)
}
