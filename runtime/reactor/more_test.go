package reactor

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/kopf-go/kopf/runtime/causes"
	"github.com/kopf-go/kopf/runtime/kwargs"
	"github.com/kopf-go/kopf/runtime/registry"
)

// TestStatusSubresourcePatches: with a status subresource, a cycle's patch
// is split, the status part sent first.
func TestStatusSubresourcePatches(t *testing.T) {
	type result struct {
		Message string `json:"message"`
	}
	h := newHarness(t, spec(map[string]any{"x": "y"}), func(reg *registry.Registry) {
		mustAdd(t, reg, handler("typed_fn", func(context.Context, *kwargs.Changing) (any, error) {
			return result{Message: "typed"}, nil
		}, causes.Create))
	})
	h.r.Resource.Subresources = []string{"status"}
	patches, err := h.cycle(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(patches) != 2 || patches[0].GetSubresource() != "status" || patches[1].GetSubresource() != "" {
		t.Fatalf("patches %v, want the status one, then the object's", patches)
	}
	if got, _ := resolve(patchData(t, patches[0]), "status", "typed_fn"); !reflect.DeepEqual(got, map[string]any{"message": "typed"}) {
		t.Errorf("the status patch %s lacks the typed result", patches[0].GetPatch())
	}
	if _, ok := resolve(patchData(t, patches[1]), "status"); ok {
		t.Errorf("the object's patch %s has the status", patches[1].GetPatch())
	}
}

// TestDeletionResumesAndReleases: an object being deleted when the
// operator starts runs its delete handler with the resume handlers that
// ask for deleted objects, and the finalizer is removed from the version
// that the cycle's own patch produced.
func TestDeletionResumesAndReleases(t *testing.T) {
	ctx := t.Context()
	var c calls
	obj := spec(map[string]any{"x": "y"})
	obj["metadata"] = map[string]any{"finalizers": []any{testFinalizer}, "deletionTimestamp": "2026-01-01T00:00:00Z"}
	h := newHarness(t, obj, func(reg *registry.Registry) {
		resumeDeleted := handler("resume_deleted", c.fn("resume_deleted", nil), causes.Resume)
		resumeDeleted.Deleted = true
		mustAdd(t, reg,
			handler("delete_fn", c.fn("delete_fn", func(*kwargs.Changing) (any, error) { return "gone", nil }), causes.Delete),
			handler("resume_fn", c.fn("resume_fn", nil), causes.Resume),
			resumeDeleted)
	})
	h.mem.noticedByListing = true
	all := h.settle(ctx, 5)
	if want := []string{"delete_fn", "resume_deleted"}; !reflect.DeepEqual(c.ids, want) {
		t.Errorf("handlers %v ran, want %v", c.ids, want)
	}
	last := all[len(all)-1]
	if want := `{"op":"test","path":"/metadata/resourceVersion","value":"1"}`; !strings.Contains(string(last.GetPatch()), want) {
		t.Errorf("the finalizer's removal %s is not guarded by the patched version", last.GetPatch())
	}
	if fs := h.object().Meta().Finalizers(); len(fs) != 0 {
		t.Errorf("finalizers = %v", fs)
	}
}

// TestSubhandlerFilters: sub-handlers' filters, callbacks included, see
// the parent's kwargs (user code's copy).
func TestSubhandlerFilters(t *testing.T) {
	var c calls
	h := newHarness(t, spec(map[string]any{"x": "y"}), func(reg *registry.Registry) {
		mustAdd(t, reg, handler("parent", func(ctx context.Context, kw *kwargs.Changing) (any, error) {
			kw.Spec["seen-by-children"] = true // the parent's copy: its children see it
			for _, id := range []string{"yes", "no"} {
				sub := registry.ChangingHandler{ID: id, Fn: c.fn(id, nil)}
				want := id == "yes"
				sub.When = func(kw *kwargs.Changing) bool { return kw.Spec["seen-by-children"] == want }
				if err := registry.Subhandler(ctx, sub); err != nil {
					return nil, err
				}
			}
			return nil, nil
		}, causes.Create))
	})
	h.settle(t.Context(), 5)
	if want := []string{"yes"}; !reflect.DeepEqual(c.ids, want) {
		t.Errorf("sub-handlers %v ran, want %v", c.ids, want)
	}
	if spec := h.object()["spec"].(map[string]any); spec["seen-by-children"] != nil {
		t.Errorf("the parent's change of its copy reached the object: %v", spec)
	}
}

// TestPatchesThroughREST: with REST set, patches go through it, by path,
// and the response is read for the resourceVersion only.
func TestPatchesThroughREST(t *testing.T) {
	var (
		mu   sync.Mutex
		seen []string
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, _ := io.ReadAll(r.Body)
		mu.Lock()
		seen = append(seen, r.Method+" "+r.URL.Path+" "+r.Header.Get("Content-Type")+" "+string(data))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"metadata": map[string]any{"resourceVersion": "42"}})
	}))
	t.Cleanup(srv.Close)
	cfg := dynamic.ConfigFor(&rest.Config{Host: srv.URL})
	cfg.GroupVersion, cfg.APIPath = nil, "/"
	rc, err := rest.UnversionedRESTClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, spec(map[string]any{"x": "y"}), func(reg *registry.Registry) {
		mustAdd(t, reg, handler("fn", func(context.Context, *kwargs.Changing) (any, error) { return "done", nil }, causes.Create))
	})
	h.r.REST = rc
	h.r.Settings.Networking.RequestTimeout = 0
	if patches, err := h.cycle(t.Context()); err != nil || len(patches) != 0 {
		t.Fatalf("cycle() = %v, %d patches through the client", err, len(patches))
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 1 || !strings.HasPrefix(seen[0], "PATCH /apis/kopf.dev/v1/namespaces/ns/kopfexamples/obj application/merge-patch+json {") {
		t.Errorf("requests %q, want one merge patch of the object", seen)
	}
}

// TestCycleSteps addresses the steps of a cycle one by one.
func TestCycleSteps(t *testing.T) {
	t.Run("free", func(t *testing.T) {
		for _, tt := range []struct {
			name                         string
			deleting, finalizer, release bool
			want                         bool
		}{
			{"alive", false, true, false, false},
			{"deleting, no finalizer of ours", true, false, false, true},
			{"deleting, our finalizer", true, true, false, false},
			{"deleting, released", true, true, true, true},
		} {
			meta := map[string]any{}
			if tt.deleting {
				meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
			}
			if tt.finalizer {
				meta["finalizers"] = []any{testFinalizer}
			}
			h := newHarness(t, map[string]any{"metadata": meta}, nil)
			h.mem.released = tt.release
			c := h.r.newCycle(h.object(), h.mem, h.stream, h.r.Logger)
			if got := c.free(); got != tt.want {
				t.Errorf("%s: free() = %v, want %v", tt.name, got, tt.want)
			}
		}
	})
	t.Run("idle", func(t *testing.T) {
		for _, tt := range []struct {
			reason   causes.Reason
			handlers int
			want     bool
		}{
			{causes.Noop, 0, true},
			{causes.Resume, 0, true},
			{causes.Noop, 1, false},
			{causes.Create, 0, false},
			{causes.Update, 0, false},
		} {
			h := newHarness(t, spec(nil), nil)
			c := h.r.newCycle(h.object(), h.mem, h.stream, h.r.Logger)
			c.detected.Reason = tt.reason
			c.handlers = make([]*registry.ChangingHandler, tt.handlers)
			if got := c.idle(t.Context()); got != tt.want || h.mem.resumed != tt.want {
				t.Errorf("%s with %d handlers: idle() = %v, resumed %v; want %v", tt.reason, tt.handlers, got, h.mem.resumed, tt.want)
			}
		}
	})
	t.Run("finalizerStep", func(t *testing.T) {
		for _, tt := range []struct {
			name                         string
			deleteHandler, has, deleting bool
			wantDone                     bool
			wantOp                       string
		}{
			{"required and absent: added", true, false, false, true, `"op":"add"`},
			{"required and present", true, true, false, false, ""},
			{"not required and present: removed", false, true, false, true, `"op":"remove"`},
			{"not required and absent", false, false, false, false, ""},
			{"deleting: left to the release", false, true, true, false, ""},
		} {
			meta := map[string]any{}
			if tt.has {
				meta["finalizers"] = []any{testFinalizer}
			}
			if tt.deleting {
				meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
			}
			h := newHarness(t, map[string]any{"metadata": meta}, func(reg *registry.Registry) {
				if tt.deleteHandler {
					mustAdd(t, reg, handler("delete_fn", func(context.Context, *kwargs.Changing) (any, error) { return nil, nil }, causes.Delete))
				}
			})
			c := h.r.newCycle(h.object(), h.mem, h.stream, h.r.Logger)
			h.r.detect(c)
			h.r.selectHandlers(c)
			before := len(h.client.Actions())
			done, err := h.r.finalizerStep(t.Context(), c)
			patches := h.patchesSince(before)
			if err != nil || done != tt.wantDone || (len(patches) == 1) != (tt.wantOp != "") {
				t.Errorf("%s: finalizerStep() = %v, %v with %d patches; want %v", tt.name, done, err, len(patches), tt.wantDone)
				continue
			}
			if tt.wantOp != "" && !strings.Contains(string(patches[0].GetPatch()), tt.wantOp) {
				t.Errorf("%s: the patch is %s, want %s", tt.name, patches[0].GetPatch(), tt.wantOp)
			}
		}
	})
}
