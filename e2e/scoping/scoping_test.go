// Package scoping tests which objects an operator serves: namespace
// patterns (-n with globs and negations), cluster-scoped resources and
// built-in resources, on the real API server.
package scoping

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/kopf-go/kopf"
	"github.com/kopf-go/kopf/e2e/cluster"
	"github.com/kopf-go/kopf/envtest"
	"github.com/kopf-go/kopf/kopftest"
	"github.com/kopf-go/kopf/runtime/causes"
	"github.com/kopf-go/kopf/runtime/kwargs"
	"github.com/kopf-go/kopf/runtime/registry"
	"github.com/kopf-go/kopf/runtime/resources"
)

const clusterCRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: clusterthings.scoping.kopf.dev
spec:
  scope: Cluster
  group: scoping.kopf.dev
  names: {kind: ClusterThing, plural: clusterthings, singular: clusterthing}
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          x-kubernetes-preserve-unknown-fields: true
`

// register adds a creation handler for a resource that records the
// objects it saw.
func register(sel resources.Selector, seen chan<- string) func(*registry.Registry) error {
	return func(r *registry.Registry) error {
		return r.AddChanging(registry.ChangingHandler{
			ID: "seen", Selector: sel, Reasons: []causes.Reason{causes.Create},
			Fn: func(ctx context.Context, kw *kwargs.Changing) (any, error) {
				seen <- kw.Namespace + "/" + kw.Name
				return "seen", nil
			},
		})
	}
}

func TestNamespacePatterns(t *testing.T) {
	ctx := context.Background()
	c := cluster.Start(t)
	cs := kubernetes.NewForConfigOrDie(c.Config)
	for _, ns := range []string{"ns-1", "ns-2", "other"} {
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	seen := make(chan string, 100)
	kopftest.Start(t, c.Config, register(resources.Selector{Version: "v1", Name: "configmaps", Core: true}, seen), kopf.WithNamespaces("ns-*,!ns-2"))
	for _, ns := range []string{"other", "ns-2", "ns-1"} {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm", Namespace: ns}}
		if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// ns-1 is served; give the others the same time to be (wrongly) served.
	select {
	case got := <-seen:
		if got != "ns-1/cm" {
			t.Fatalf("served %s, want ns-1/cm first and only", got)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("ns-1/cm is not served")
	}
	select {
	case got := <-seen:
		t.Errorf("served %s outside the namespace patterns", got)
	case <-time.After(2 * time.Second):
	}
	for _, ns := range []string{"other", "ns-2"} {
		cm, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "cm", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(cm.Annotations) != 0 {
			t.Errorf("%s/cm was written to: %v", ns, cm.Annotations)
		}
	}
}

func TestExactNamespaces(t *testing.T) {
	ctx := context.Background()
	c := cluster.Start(t)
	cs := kubernetes.NewForConfigOrDie(c.Config)
	for _, ns := range []string{"a", "b", "c"} {
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	seen := make(chan string, 100)
	kopftest.Start(t, c.Config, register(resources.Selector{Version: "v1", Name: "configmaps", Core: true}, seen), kopf.WithNamespaces("a", "c"))
	for _, ns := range []string{"a", "b", "c"} {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm", Namespace: ns}}
		if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	got := map[string]bool{}
	for len(got) < 2 {
		select {
		case s := <-seen:
			got[s] = true
		case <-time.After(30 * time.Second):
			t.Fatalf("served only %v", got)
		}
	}
	if !got["a/cm"] || !got["c/cm"] {
		t.Errorf("served %v, want a/cm and c/cm", got)
	}
	select {
	case s := <-seen:
		t.Errorf("served %s outside the namespaces", s)
	case <-time.After(2 * time.Second):
	}
}

// Cluster-scoped objects are served whatever -n says, with their result
// and diff-base written as for namespaced ones.
func TestClusterScoped(t *testing.T) {
	ctx := context.Background()
	c := cluster.Start(t)
	if _, err := envtest.Apply(ctx, c.Config, []byte(clusterCRD)); err != nil {
		t.Fatal(err)
	}
	seen := make(chan string, 100)
	kopftest.Start(t, c.Config, register(resources.Selector{Name: "clusterthings"}, seen), kopf.WithNamespaces("default"))
	gvr := schema.GroupVersionResource{Group: "scoping.kopf.dev", Version: "v1", Resource: "clusterthings"}
	dyn := dynamic.NewForConfigOrDie(c.Config)
	for i := range 3 {
		obj := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "scoping.kopf.dev/v1", "kind": "ClusterThing",
			"metadata": map[string]any{"name": fmt.Sprintf("thing-%d", i)},
			"spec":     map[string]any{"i": int64(i)},
		}}
		if _, err := dyn.Resource(gvr).Create(ctx, obj, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	objs := kopftest.NewObjects(t, c.Config, gvr, "")
	for i := range 3 {
		obj := objs.WaitFor(fmt.Sprintf("thing-%d", i), 30*time.Second, func(o *unstructured.Unstructured) bool {
			_, ok := o.GetAnnotations()["kopf.zalando.org/last-handled-configuration"]
			return ok
		})
		if v, _, _ := unstructured.NestedString(obj.Object, "status", "seen"); v != "seen" {
			t.Errorf("%s: status.seen = %q, want %q", obj.GetName(), v, "seen")
		}
	}
	if n := len(seen); n != 3 {
		t.Errorf("the handler ran %d times, want 3", n)
	}
}
