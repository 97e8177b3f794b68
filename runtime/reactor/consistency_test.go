package reactor

import (
	"context"
	"errors"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kopf-go/kopf/runtime/causes"
	"github.com/kopf-go/kopf/runtime/kwargs"
	"github.com/kopf-go/kopf/runtime/registry"
	"github.com/kopf-go/kopf/runtime/watching"
)

// When the object's own patch does not come back through the watch within
// the consistency timeout (a lagging or frozen watch), the reactor reads
// the object instead of judging it by the older version it was given: a
// create handler that has succeeded does not run again. A failed read
// processes nothing and requeues the event.
func TestConsistencyTimeoutReadsTheObject(t *testing.T) {
	tests := []struct {
		name     string
		listErr  error
		requeued bool
	}{
		{name: "read"},
		{name: "read fails", listErr: errors.New("connection refused"), requeued: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runs := 0
			h := newHarness(t, map[string]any{"spec": map[string]any{"field": "value"}}, func(reg *registry.Registry) {
				err := reg.AddChanging(registry.ChangingHandler{ID: "create", Selector: testSelector, Reasons: []causes.Reason{causes.Create},
					Fn: func(context.Context, *kwargs.Changing) (any, error) { runs++; return nil, nil }})
				if err != nil {
					t.Fatal(err)
				}
			})
			stale := h.object() // as first listed: no finalizer, no diff-base
			h.settle(t.Context(), 10)
			if runs != 1 {
				t.Fatalf("the create handler ran %d times, want 1", runs)
			}
			h.stream.Expect("999") // a patch of ours that the watch has not brought yet
			if tt.listErr != nil {
				h.client.PrependReactor("list", "*", func(k8stesting.Action) (bool, runtime.Object, error) { return true, nil, tt.listErr })
			}
			h.r.Process(t.Context(), watching.Event{Type: watching.Modified, Key: h.key(), Object: stale}, h.stream)
			if runs != 1 {
				t.Errorf("the create handler ran again on the older version: %d runs", runs)
			}
			if retried := h.countLogs("reading the object has failed: connection refused; trying again") == 1; retried != tt.requeued {
				t.Errorf("the failed read is logged to be tried again: %v, want %v", retried, tt.requeued)
			}
		})
	}
}
