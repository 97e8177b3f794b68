package indices

import (
	"context"
	"reflect"
	"testing"

	"github.com/kopf-go/kopf"
)

var (
	kopfexamples = kopf.Resource{Group: "kopf.dev", Version: "v1", Plural: "kopfexamples", Kind: "KopfExample", Namespaced: true}
	pods         = kopf.Resource{Version: "v1", Plural: "pods", Singular: "pod", Kind: "Pod", Namespaced: true}
)

func pod(name, phase string, labels map[string]any) kopf.Body {
	return kopf.Body{"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"namespace": "ns", "name": name, "labels": labels},
		"status":   map[string]any{"phase": phase}}
}

// The index functions fill the indices that every handler reads, through
// the generated kwargs.
func TestIndices(t *testing.T) {
	r := kopf.NewRegistry()
	if err := Register(r); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var ids []string
	for _, h := range r.IndexHandlers(pods) {
		ids = append(ids, h.ID)
		for _, p := range []kopf.Body{pod("a", "Running", map[string]any{"app": "x"}), pod("b", "Pending", map[string]any{"app": "x", "tier": "db"})} {
			kw := &kopf.IndexKwargs{Base: kopf.ResourceKwargs{Body: p, Name: p.Meta().Name(), Namespace: "ns", Labels: p.Meta().Labels()}}
			if err := h.Fn.Index(ctx, kw, "ns/"+kw.Name); err != nil {
				t.Fatalf("%s: %v", h.ID, err)
			}
		}
	}
	if want := []string{"by_label", "running"}; !reflect.DeepEqual(ids, want) {
		t.Errorf("pods' indices = %v, want %v", ids, want)
	}
	for _, h := range r.IndexHandlers(kopfexamples) {
		b := kopf.Body{"metadata": map[string]any{"name": "ex"}, "status": map[string]any{"phase": "on"}}
		if err := h.Fn.Index(ctx, &kopf.IndexKwargs{Base: kopf.ResourceKwargs{Body: b, Status: b.Status()}}, "ns/ex"); err != nil {
			t.Fatal(err)
		}
	}

	ex := kopf.Body{"metadata": map[string]any{"name": "ex"}}
	for _, h := range r.ChangingHandlers(kopfexamples, kopf.ReasonCreate) {
		kw := &kopf.ChangingKwargs{Base: kopf.ResourceKwargs{Body: ex}}
		if !h.When(kw) {
			t.Errorf("the when= callback did not see the index Phases")
		}
		if _, err := h.Fn(ctx, kw); err != nil {
			t.Fatal(err)
		}
	}
	for _, h := range r.EventHandlers(kopfexamples) {
		if err := h.Fn(ctx, &kopf.EventKwargs{Base: kopf.ResourceKwargs{Body: ex}}); err != nil {
			t.Fatal(err)
		}
	}
	for _, h := range r.DaemonHandlers(pods) {
		if !h.When(&kopf.DaemonKwargs{Base: kopf.ResourceKwargs{Body: pod("a", "Running", nil)}}) {
			t.Errorf("the typed when= callback did not see the index IsRunning")
		}
		if _, err := h.Fn(ctx, &kopf.DaemonKwargs{Base: kopf.ResourceKwargs{Body: pod("a", "Running", nil)}}); err != nil {
			t.Fatal(err)
		}
	}
	for _, h := range r.TimerHandlers(kopfexamples) {
		if _, err := h.Fn(ctx, &kopf.TimerKwargs{Base: kopf.ResourceKwargs{Body: ex}}); err != nil {
			t.Fatal(err)
		}
	}
	for _, h := range r.WebhookHandlers(kopf.WebhookValidating) {
		kw := &kopf.AdmissionKwargs{Base: kopf.ResourceKwargs{Body: pod("a", "Running", nil)}}
		if !h.When(kw) {
			t.Errorf("the when= callback of an admission handler did not see the index IsRunning")
		}
		if err := h.Fn(ctx, kw); err != nil {
			t.Fatal(err)
		}
	}
	// by_label: (app, x), (tier, db); running: 2 pods; phases: one value.
	if want := map[string]int{"names": 1, "create": 2, "watch": 2, "monitor": 2, "tick": 1, "admit": 2}; !reflect.DeepEqual(Seen, want) {
		t.Errorf("the handlers saw %v, want %v", Seen, want)
	}
}
