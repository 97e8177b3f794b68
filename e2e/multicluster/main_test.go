// Package multicluster tests a fleet operator (Options.Clusters, see
// docs/multicluster.md) on three control planes that it starts, each its
// own etcd and kube-apiserver: the handlers run in each cluster with its
// name and its client; one cluster's API server stopped and restarted
// while the others are served; clusters added and removed while the
// operator runs. The clusters come from a tiny provider of the tests' own
// (listProvider).
package multicluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kopf-go/kopf"
	"github.com/kopf-go/kopf/e2e/cluster"
	"github.com/kopf-go/kopf/envtest"
	"github.com/kopf-go/kopf/runtime/clusters"
	"github.com/kopf-go/kopf/runtime/operator"
)

var (
	gvr      = schema.GroupVersionResource{Group: "kopf.dev", Version: "v1", Resource: "kopfexamples"}
	selector = kopf.Selector{Group: "kopf.dev", Version: "v1", Name: "kopfexamples"}
)

// names are the clusters' names, in the order of fleet.
var names = []string{"east", "west", "north"}

// fleet are the three control planes, shared by the tests.
var fleet []*cluster.Cluster

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	crd := envtest.WithCRDs(filepath.Join("..", "..", "examples", "crd.yaml"))
	fleet = make([]*cluster.Cluster, len(names))
	errs := make([]error, len(names))
	var wg sync.WaitGroup
	for i := range names {
		wg.Go(func() { fleet[i], errs[i] = cluster.StartDetached(crd) })
	}
	wg.Wait()
	defer func() {
		for _, c := range fleet {
			if c != nil {
				if err := c.Stop(); err != nil {
					fmt.Fprintf(os.Stderr, "stopping a control plane: %v\n", err)
				}
			}
		}
	}()
	if err := errors.Join(errs...); err != nil {
		fmt.Fprintf(os.Stderr, "starting the control planes: %v\n", err)
		return 1
	}
	return m.Run()
}

// member is the fleet's i-th cluster as the provider gives it.
func member(i int) clusters.Cluster {
	return clusters.Cluster{Name: names[i], Config: rest.CopyConfig(fleet[i].Config)}
}

// listProvider is the tests' provider: the clusters it starts with, and
// those that the test adds and removes while it runs.
type listProvider struct {
	initial []clusters.Cluster
	started chan struct{} // closed once Run has engaged the initial clusters
	sink    clusters.Sink
}

func newProvider(initial ...clusters.Cluster) *listProvider {
	return &listProvider{initial: initial, started: make(chan struct{})}
}

func (p *listProvider) Run(ctx context.Context, sink clusters.Sink) error {
	for _, c := range p.initial {
		if err := sink.Engage(ctx, c); err != nil {
			return err
		}
	}
	p.sink = sink
	close(p.started)
	<-ctx.Done()
	return nil
}

// engage adds a cluster to the running operator.
func (p *listProvider) engage(t *testing.T, c clusters.Cluster) {
	t.Helper()
	p.wait(t)
	if err := p.sink.Engage(t.Context(), c); err != nil {
		t.Fatalf("engaging %s: %v", c.Name, err)
	}
}

// disengage removes a cluster from the running operator, and returns once
// it has stopped.
func (p *listProvider) disengage(t *testing.T, name string) {
	t.Helper()
	p.wait(t)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if err := p.sink.Disengage(ctx, name); err != nil {
		t.Fatalf("disengaging %s: %v", name, err)
	}
}

func (p *listProvider) wait(t *testing.T) {
	t.Helper()
	select {
	case <-p.started:
	case <-time.After(30 * time.Second):
		t.Fatal("the provider has not started")
	}
}

// withProvider makes the operator a fleet operator of p.
func withProvider(p clusters.Provider) kopf.Option {
	return func(o *operator.Options) { o.Clusters = p }
}

// namespace creates the namespace in every cluster of the fleet.
func namespace(t *testing.T, name string) string {
	t.Helper()
	for _, c := range fleet {
		cs, err := kubernetes.NewForConfig(c.Config)
		if err != nil {
			t.Fatal(err)
		}
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
		if _, err := cs.CoreV1().Namespaces().Create(t.Context(), ns, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	return name
}

// objects is the kopfexamples' client of the fleet's i-th cluster.
func objects(t *testing.T, i int, ns string) dynamic.ResourceInterface {
	t.Helper()
	dc, err := dynamic.NewForConfig(fleet[i].Config)
	if err != nil {
		t.Fatal(err)
	}
	return dc.Resource(gvr).Namespace(ns)
}

// create creates a kopfexample in the fleet's i-th cluster.
func create(t *testing.T, i int, ns, name string) {
	t.Helper()
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kopf.dev/v1", "kind": "KopfExample",
		"metadata": map[string]any{"name": name},
		"spec":     map[string]any{"field": "value"},
	}}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if _, err := objects(t, i, ns).Create(ctx, obj, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating %s/%s in %s: %v", ns, name, names[i], err)
	}
}

// eventually polls cond every 100 ms until it holds, failing the test
// after timeout with what and the last error.
func eventually(t *testing.T, timeout time.Duration, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	if err := cluster.WaitFor(t.Context(), timeout, cond); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// status returns the object's status.<field>, or nil if it has none yet.
func status(t *testing.T, ctx context.Context, i int, ns, name, field string) (map[string]any, error) {
	t.Helper()
	obj, err := objects(t, i, ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	v, _, _ := unstructured.NestedMap(obj.Object, "status", field)
	return v, nil
}
