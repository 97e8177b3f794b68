package metrics

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/kopf-go/kopf/runtime/causes"
	"github.com/kopf-go/kopf/runtime/execution"
	"github.com/kopf-go/kopf/runtime/kwargs"
	"github.com/kopf-go/kopf/runtime/queueing"
	"github.com/kopf-go/kopf/runtime/reactor"
	"github.com/kopf-go/kopf/runtime/registry"
	"github.com/kopf-go/kopf/runtime/resources"
	"github.com/kopf-go/kopf/runtime/settings"
	"github.com/kopf-go/kopf/runtime/watching"
)

// nopClient accepts every patch at once: the benchmark measures the
// reactor's and the metrics' work, not a client's.
type nopClient struct {
	dynamic.NamespaceableResourceInterface
}

func (c nopClient) Namespace(string) dynamic.ResourceInterface { return c }

func (nopClient) Patch(context.Context, string, types.PatchType, []byte, metav1.PatchOptions, ...string) (*unstructured.Unstructured, error) {
	return &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"resourceVersion": "2"}}}, nil
}

// BenchmarkProcess measures the processing of one event of a 2 KB object
// whose create handler runs (and the patch that stores its outcome),
// with the metrics off and on: b.N events of one object, each a creation
// again (the nop client changes nothing). The ratio of the two is the
// metrics' cost on the hot path.
func BenchmarkProcess(b *testing.B) {
	for _, on := range []bool{false, true} {
		b.Run(fmt.Sprintf("metrics=%v", on), func(b *testing.B) {
			reg := registry.New()
			sel := resources.Selector{Group: "kopf.dev", Version: "v1", Name: "kopfexamples"}
			err := reg.AddChanging(registry.ChangingHandler{ID: "create_fn", Selector: sel, Reasons: []causes.Reason{causes.Create},
				Fn: func(context.Context, *kwargs.Changing) (any, error) { return nil, nil }})
			if err != nil {
				b.Fatal(err)
			}
			res := resources.Resource{Group: "kopf.dev", Version: "v1", Plural: "kopfexamples", Kind: "KopfExample", Namespaced: true}
			s := settings.Default()
			s.Persistence.ConsistencyTimeout = 0 // the nop client's version never comes back
			r := &reactor.Reactor{Resource: res, Client: nopClient{}, Registry: reg, Settings: s,
				Logger: slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelInfo}))}
			if on {
				mr := New().Resource(res.String(), nil, r.InProgress)
				r.Observe, r.ObserveProcessed = mr.Observe, mr.Processed
			}
			ev := watching.Event{Type: watching.Added, Key: "ns/obj", Object: benchObject()}
			stream := &queueing.Stream{}
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				r.Process(ctx, ev, stream)
			}
		})
	}
}

// benchObject is a KopfExample of about 2 KB of JSON.
func benchObject() map[string]any {
	items := []any{}
	for i := range 20 {
		items = append(items, map[string]any{"name": fmt.Sprintf("item-%d", i), "value": float64(i), "tags": []any{"a", "b"}})
	}
	return map[string]any{
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

// BenchmarkObserve measures what the metrics add to one event whose
// handler runs: the watch's count, the attempt's and the processing's.
func BenchmarkObserve(b *testing.B) {
	r := New().Resource("kopfexamples.v1.kopf.dev", nil, nil)
	w := r.Watch("ns")
	now := time.Now()
	obs := reactor.Observation{Handler: "create_fn", Kind: reactor.KindChanging, Outcome: execution.Outcome{Success: true},
		Arrived: now, Started: now, Duration: time.Millisecond}
	p := reactor.Processed{Result: reactor.ResultSuccess, Arrived: now, Started: now, Elapsed: time.Millisecond}
	b.ReportAllocs()
	for b.Loop() {
		w.Event()
		r.Observe(obs)
		r.Processed(p)
	}
}
