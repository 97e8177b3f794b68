package reactor

import (
	"context"
	"fmt"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kopf-go/kopf/runtime/causes"
	"github.com/kopf-go/kopf/runtime/registry"
)

// seam is a Patcher around the default, as sharding's fence is: it sees
// every write, and refuses them all while refuse is set.
type seam struct {
	next   Patcher
	seen   []string
	refuse bool
}

func (s *seam) Patch(ctx context.Context, namespace, name string, pt types.PatchType, data []byte, sub ...string) (string, error) {
	s.seen = append(s.seen, fmt.Sprintf("%s %s/%s %v", pt, namespace, name, sub))
	if s.refuse {
		return "", apierrors.NewConflict(schema.GroupResource{Group: "kopf.dev", Resource: "kopfexamples"}, name, fmt.Errorf("fenced"))
	}
	return s.next.Patch(ctx, namespace, name, pt, data, sub...)
}

// Every write of the reactor goes through its Patcher (the finalizer's
// JSON patch and the handlers' merge patches alike), and a write that the
// Patcher refuses is not made.
func TestPatcherSeesEveryWrite(t *testing.T) {
	var c calls
	h := newHarness(t, spec(map[string]any{"field": 1.0}), func(reg *registry.Registry) {
		mustAdd(t, reg,
			handler("create_fn", c.fn("create_fn", nil), causes.Create),
			handler("delete_fn", c.fn("delete_fn", nil), causes.Delete))
	})
	s := &seam{next: h.r.patcher()}
	h.r.Patcher = s
	sent := h.settle(t.Context(), 5)
	if len(sent) == 0 || len(s.seen) != len(sent) {
		t.Fatalf("the Patcher saw %q, the API %d patches", s.seen, len(sent))
	}
	want := []string{"application/json-patch+json ns/obj []", "application/merge-patch+json ns/obj []"}
	if s.seen[0] != want[0] || s.seen[1] != want[1] {
		t.Errorf("the Patcher saw %q, want first %q", s.seen, want)
	}

	s.refuse, s.seen = true, nil
	h.update(func(obj map[string]any) { obj["spec"] = map[string]any{"field": 2.0} })
	patches, err := h.cycle(t.Context())
	if len(patches) != 0 || len(s.seen) == 0 || !apierrors.IsConflict(err) {
		t.Errorf("a refused write: %d patches made, %d seen, error %v; want none made, a conflict", len(patches), len(s.seen), err)
	}
}
