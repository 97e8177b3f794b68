package reactor

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/kopf-go/kopf/runtime/body"
	"github.com/kopf-go/kopf/runtime/causes"
	"github.com/kopf-go/kopf/runtime/kwargs"
	"github.com/kopf-go/kopf/runtime/queueing"
	"github.com/kopf-go/kopf/runtime/registry"
	"github.com/kopf-go/kopf/runtime/resources"
	"github.com/kopf-go/kopf/runtime/settings"
)

// nopClient accepts every patch at once: the benchmarks measure the
// reactor's own work, not a client's.
type nopClient struct {
	dynamic.NamespaceableResourceInterface
}

func (c nopClient) Namespace(string) dynamic.ResourceInterface { return c }

func (nopClient) Patch(context.Context, string, types.PatchType, []byte, metav1.PatchOptions, ...string) (*unstructured.Unstructured, error) {
	return &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"resourceVersion": "2"}}}, nil
}

// benchObject is a KopfExample of about 2 KB of JSON.
func benchObject() body.Body {
	items := []any{}
	for i := range 20 {
		items = append(items, map[string]any{"name": fmt.Sprintf("item-%d", i), "value": float64(i), "tags": []any{"a", "b"}})
	}
	return body.Body{
		"apiVersion": "kopf.dev/v1", "kind": "KopfExample",
		"metadata": map[string]any{
			"name": "obj", "namespace": "ns", "uid": "uid-1", "resourceVersion": "1",
			"labels":      map[string]any{"app": "bench", "tier": "backend"},
			"annotations": map[string]any{"note": "benchmark"},
		},
		"spec":   map[string]any{"field": "value", "items": items, "nested": map[string]any{"a": map[string]any{"b": "c"}}},
		"status": map[string]any{"phase": "Running"},
	}
}

func benchReactor(b *testing.B, hs ...registry.ChangingHandler) *Reactor {
	b.Helper()
	reg := registry.New()
	for _, h := range hs {
		h.Selector = resources.Selector{Group: "kopf.dev", Version: "v1", Name: "kopfexamples"}
		if err := reg.AddChanging(h); err != nil {
			b.Fatal(err)
		}
	}
	res := resources.Resource{Group: "kopf.dev", Version: "v1", Plural: "kopfexamples", Kind: "KopfExample", Namespaced: true}
	return &Reactor{Resource: res, Client: nopClient{}, Registry: reg, Settings: settings.Default(),
		Logger: slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelInfo}))}
}

func nop(context.Context, *kwargs.Changing) (any, error) { return nil, nil }

// BenchmarkCycle measures one processing cycle of a 2 KB object: a
// creation whose handler runs (the handler's copy is made), and the cycle
// of an object already handled (catch-up after a restart: no handler runs,
// no copy), with and without a when= callback (which gets a copy).
func BenchmarkCycle(b *testing.B) {
	handled := func(r *Reactor) body.Body {
		obj := benchObject()
		ann := obj.Meta()["annotations"].(map[string]any)
		essence := r.Settings.Persistence.DiffBaseStorage.Build(obj, nil)
		p := map[string]any{}
		r.Settings.Persistence.DiffBaseStorage.Store(obj, p, essence)
		for k, v := range p["metadata"].(map[string]any)["annotations"].(map[string]any) {
			ann[k] = v
		}
		obj.Meta()["finalizers"] = []any{r.Settings.Persistence.Finalizer}
		return obj
	}
	always := func(*kwargs.Changing) bool { return true }
	for _, bc := range []struct {
		name     string
		handlers []registry.ChangingHandler
		handled  bool
	}{
		{"create", []registry.ChangingHandler{{ID: "create_fn", Reasons: []causes.Reason{causes.Create}, Fn: nop}}, false},
		{"handled", []registry.ChangingHandler{{ID: "create_fn", Reasons: []causes.Reason{causes.Create}, Fn: nop}}, true},
		// The finalizer's check calls the delete handler's when= every cycle.
		{"handled-with-when", []registry.ChangingHandler{{ID: "delete_fn", Reasons: []causes.Reason{causes.Delete}, Fn: nop, When: always}}, true},
	} {
		b.Run(bc.name, func(b *testing.B) {
			r := benchReactor(b, bc.handlers...)
			obj := benchObject()
			if bc.handled {
				obj = handled(r)
			}
			ctx := context.Background()
			s := &queueing.Stream{}
			b.ReportAllocs()
			for b.Loop() {
				mem := &memory{uid: "uid-1", memo: kwargs.Memo{}}
				if err := r.cycle(ctx, obj, mem, s, r.Logger); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
