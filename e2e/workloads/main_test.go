// Package workloads_test checks, against a control plane with controllers
// (envtest.WithControllers: the garbage collector, the namespace,
// deployment and replicaset controllers, the scheduler and kwok's
// simulated node), what an operator run as a process does with the
// cluster's own machinery: internal/deployop runs WebApps as Deployments
// whose pods run, and reads their readiness back (deployments_test.go);
// its finalizers hold a deleted namespace until its deletion handlers
// have run, and only until then (namespaces_test.go).
//
// The tests share one control plane, started in TestMain, and each runs
// its own operator process in a namespace of its own, in parallel.
package workloads_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/kopf-go/kopf/e2e/cluster"
	"github.com/kopf-go/kopf/e2e/internal/proc"
	v1 "github.com/kopf-go/kopf/e2e/workloads/internal/deployop/api/v1"
	"github.com/kopf-go/kopf/envtest"
)

// finalizer is kopf-go's finalizer (Kopf's).
const finalizer = "kopf.zalando.org/KopfFinalizerMarker"

var (
	// shared is the control plane with controllers, with the WebApp CRD.
	shared *cluster.Cluster
	// deployop is the operator, built once.
	deployop = &proc.Binary{Pkg: "./internal/deployop"}
)

func TestMain(m *testing.M) {
	crd := filepath.Join("internal", "deployop", "config", "crd")
	code := cluster.Main(m, func(c *cluster.Cluster) error {
		shared = c
		return nil
	}, envtest.WithCRDs(crd), envtest.WithControllers())
	_ = deployop.Remove()
	os.Exit(code)
}

// clients are a test's clients of the shared control plane.
type clients struct {
	cs      kubernetes.Interface
	webapps dynamic.NamespaceableResourceInterface
}

func newClients() clients {
	return clients{
		cs:      kubernetes.NewForConfigOrDie(shared.Config),
		webapps: dynamic.NewForConfigOrDie(shared.Config).Resource(v1.SchemeGroupVersion.WithResource("webapps")),
	}
}

// namespace creates a namespace of the test's own, named prefix-xxxxx,
// and returns its name.
func namespace(t *testing.T, c clients, prefix string) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-"}}
	created, err := c.cs.CoreV1().Namespaces().Create(t.Context(), ns, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating a namespace %s-...: %v", prefix, err)
	}
	return created.Name
}

// startOperator runs deployop in a namespace, as deployed with a
// kubeconfig, its log in the test's directory (shown if the test fails).
func startOperator(t *testing.T, ns, name string) *proc.Process {
	t.Helper()
	dir := t.TempDir()
	return proc.Start(t, deployop.Path(t), proc.Options{
		Name: name,
		Log:  filepath.Join(dir, name+".log"),
		Args: []string{"run", "-n", ns, "--standalone", "-v", "--kubeconfig", shared.Kubeconfig(t, dir)},
	})
}

// createWebApp creates a WebApp.
func createWebApp(t *testing.T, c clients, ns, name string, replicas int32) {
	t.Helper()
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": v1.SchemeGroupVersion.String(),
		"kind":       "WebApp",
		"metadata":   map[string]any{"name": name},
		"spec":       map[string]any{"image": "nginx", "replicas": int64(replicas)},
	}}
	if _, err := c.webapps.Namespace(ns).Create(t.Context(), obj, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating the WebApp %s: %v", name, err)
	}
}

// getWebApp reads a WebApp, typed.
func getWebApp(ctx context.Context, c clients, ns, name string) (*v1.WebApp, error) {
	obj, err := c.webapps.Namespace(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	app := &v1.WebApp{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, app); err != nil {
		return nil, fmt.Errorf("decoding the WebApp %s: %w", name, err)
	}
	return app, nil
}

// waitFor polls cond until it holds, and fails the test with what it
// waited for and the last error after the timeout.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	if err := cluster.WaitFor(t.Context(), timeout, cond); err != nil {
		t.Fatalf("waiting %s for %s: %v", timeout, what, err)
	}
}
