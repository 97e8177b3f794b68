package reconcile

import (
	"context"
	"reflect"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/kopf-go/kopf"
)

var (
	kopfexamples = kopf.Resource{Group: "kopf.dev", Version: "v1", Plural: "kopfexamples", Kind: "KopfExample", Namespaced: true}
	deployments  = kopf.Resource{Group: "apps", Version: "v1", Plural: "deployments", Kind: "Deployment", Namespaced: true}
	services     = kopf.Resource{Version: "v1", Plural: "services", Kind: "Service", Namespaced: true}
)

// TestReconcileHandlers checks that every marker's options reach its
// registration.
func TestReconcileHandlers(t *testing.T) {
	r := kopf.NewRegistry()
	if err := Register(r); err != nil {
		t.Fatal(err)
	}
	type reg struct {
		ID       string
		Selector kopf.Selector
		Param    any
		Resync   time.Duration
		Finalize bool
		Backoff  time.Duration
		Owns     []kopf.Selector
		Watches  []kopf.Selector
		Mapped   bool
		When     bool
		Labels   int
	}
	for _, tt := range []struct {
		res  kopf.Resource
		want reg
	}{
		{kopfexamples, reg{ID: "reconcile_example", Selector: kopf.Selector{Group: "kopf.dev", Version: "v1", Name: "kopfexamples"},
			Resync: 10 * time.Minute, Finalize: true, Backoff: 2 * time.Second,
			Owns: []kopf.Selector{{Group: "apps", Name: "deployments"}, {Version: "v1", Name: "pods", Core: true}}}},
		{deployments, reg{ID: "deployments", Selector: kopf.Selector{Group: "apps", Name: "deployments"}, Param: "p",
			Watches: []kopf.Selector{{Version: "v1", Name: "configmaps", Core: true}}, Mapped: true, When: true, Labels: 1}},
		{services, reg{ID: "reconcile_service", Selector: kopf.Selector{Version: "v1", Name: "services", Core: true},
			Watches: []kopf.Selector{{Version: "v1", Name: "endpoints", Core: true}, {Version: "v1", Name: "secrets", Core: true}}}},
	} {
		hs := r.ReconcileHandlers(tt.res)
		if len(hs) != 1 {
			t.Fatalf("%s: %d reconcile handlers, want 1", tt.res.Plural, len(hs))
		}
		h := hs[0]
		got := reg{ID: h.ID, Selector: h.Selector, Param: h.Param, Resync: h.Resync, Finalize: h.Finalize, Backoff: h.Backoff,
			Owns: h.Owns, When: h.When != nil, Labels: len(h.Filter.Labels)}
		for _, w := range h.Watches {
			got.Watches = append(got.Watches, w.Selector)
			got.Mapped = got.Mapped || w.Map != nil
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", tt.res.Plural, got, tt.want)
		}
	}
}

// TestReconcileCalls calls the registered functions through their
// adapters: the result, the error-only form and the map function.
func TestReconcileCalls(t *testing.T) {
	r := kopf.NewRegistry()
	if err := Register(r); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	res, err := r.ReconcileHandlers(kopfexamples)[0].Fn(ctx, &kopf.ReconcileKwargs{})
	if err != nil || res.RequeueAfter != time.Minute {
		t.Errorf("ReconcileExample = %v, %v; want a requeue after 1m", res, err)
	}
	dep := r.ReconcileHandlers(deployments)[0]
	kw := &kopf.ReconcileKwargs{Base: kopf.ResourceKwargs{Body: kopf.Body{"spec": map[string]any{"replicas": int64(2)}}}}
	kw.ShareDecoded()
	if res, err := dep.Fn(ctx, kw); err != nil || res != (kopf.ReconcileResult{}) {
		t.Errorf("ReconcileDeployment = %v, %v; want the zero result", res, err)
	}
	cm := kopf.Body{"metadata": map[string]any{"namespace": "ns", "labels": map[string]any{"deployment": "web"}}}
	if got, want := dep.Watches[0].Map(ctx, cm), []types.NamespacedName{{Namespace: "ns", Name: "web"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("Map = %v, want %v", got, want)
	}
}
