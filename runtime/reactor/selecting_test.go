package reactor

import (
	"context"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kopf-go/kopf/runtime/body"
	"github.com/kopf-go/kopf/runtime/causes"
	"github.com/kopf-go/kopf/runtime/filters"
	"github.com/kopf-go/kopf/runtime/kwargs"
	"github.com/kopf-go/kopf/runtime/registry"
	"github.com/kopf-go/kopf/runtime/watching"
)

// A Deleted event of a selecting watch is checked by reading the object
// again: one that exists unselected has left the selector (released, no
// handler), one selected again is a change, one gone or being deleted is
// a deletion. (The real watch's part is e2e/selectors'.)
func TestDeletedBySelector(t *testing.T) {
	app := filters.Filter{Labels: map[string]filters.Matcher{"app": filters.IsEqual("x")}}
	tests := []struct {
		name           string
		labels         map[string]any
		deleting, gone bool
		released       bool // our finalizer removed
		forgotten      bool // the reactor's memory of the object dropped
		deletions      int  // runs of the delete handler
	}{
		{name: "left the selector", labels: nil, released: true, forgotten: true},
		{name: "selected again", labels: map[string]any{"app": "x"}},
		{name: "being deleted, unselected", deleting: true, released: true},
		{name: "being deleted, selected", labels: map[string]any{"app": "x"}, deleting: true, released: true, deletions: 1},
		{name: "gone", gone: true, forgotten: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			meta := map[string]any{"finalizers": []any{testFinalizer}}
			if tt.labels != nil {
				meta["labels"] = tt.labels
			}
			if tt.deleting {
				meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
			}
			deletions := 0
			h := newHarness(t, map[string]any{"metadata": meta, "spec": map[string]any{}}, func(reg *registry.Registry) {
				err := reg.AddChanging(registry.ChangingHandler{ID: "del", Selector: testSelector, Reasons: []causes.Reason{causes.Delete}, Filter: app,
					Fn: func(context.Context, *kwargs.Changing) (any, error) { deletions++; return nil, nil }})
				if err != nil {
					t.Fatal(err)
				}
			})
			h.r.Selects = func(b body.Body) bool { return b.Meta().Labels()["app"] == "x" }
			ev := watching.Event{Type: watching.Deleted, Key: h.key(), Object: h.object()}
			if tt.gone {
				if err := h.client.Resource(testGVR).Namespace(h.ns).Delete(t.Context(), h.name, metav1.DeleteOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			h.r.Process(t.Context(), ev, h.stream)
			has := func() bool { return slices.Contains(h.object().Meta().Finalizers(), testFinalizer) }
			for i := 0; i < 5 && !tt.gone && has() == tt.released; i++ { // the cycles the object's own patches would wake
				h.r.Process(t.Context(), watching.Event{Type: watching.Modified, Key: h.key(), Object: h.object()}, h.stream)
			}
			if !tt.gone {
				if has() == tt.released {
					t.Errorf("the finalizer is there: %v, want %v", has(), !tt.released)
				}
			}
			h.r.mu.Lock()
			_, remembered := h.r.memories[h.key()]
			h.r.mu.Unlock()
			if remembered == tt.forgotten {
				t.Errorf("the object is remembered: %v, want %v", remembered, !tt.forgotten)
			}
			if deletions != tt.deletions {
				t.Errorf("the delete handler ran %d times, want %d", deletions, tt.deletions)
			}
		})
	}
}
