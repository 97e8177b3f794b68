package reactor

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kopf-go/kopf/runtime/causes"
	"github.com/kopf-go/kopf/runtime/kwargs"
	"github.com/kopf-go/kopf/runtime/registry"
	"github.com/kopf-go/kopf/runtime/watching"
)

// reconcileRun is one call of a reconcile handler, as the tests see it.
type reconcileRun struct {
	at       time.Duration // since the test's start
	trigger  string
	retry    int
	deleting bool
}

// reconcileRecorder records the calls of a reconcile handler and answers
// them from a script (the last answer repeats).
type reconcileRecorder struct {
	start   time.Time
	runs    []reconcileRun
	answers []func(kw *kwargs.Reconcile) (registry.ReconcileResult, error)
}

func (rr *reconcileRecorder) fn(ctx context.Context, kw *kwargs.Reconcile) (registry.ReconcileResult, error) {
	rr.runs = append(rr.runs, reconcileRun{time.Since(rr.start), kw.Trigger, kw.Retry, kw.Deleting})
	i := min(len(rr.runs), len(rr.answers)) - 1
	if i < 0 {
		return registry.ReconcileResult{}, nil
	}
	return rr.answers[i](kw)
}

func requeueAfter(d time.Duration) func(*kwargs.Reconcile) (registry.ReconcileResult, error) {
	return func(*kwargs.Reconcile) (registry.ReconcileResult, error) {
		return registry.ReconcileResult{RequeueAfter: d}, nil
	}
}

func recFail(*kwargs.Reconcile) (registry.ReconcileResult, error) {
	return registry.ReconcileResult{}, errors.New("not yet")
}

func recOK(*kwargs.Reconcile) (registry.ReconcileResult, error) {
	return registry.ReconcileResult{}, nil
}

func mustAddReconcile(t *testing.T, reg *registry.Registry, h registry.ReconcileHandler) {
	t.Helper()
	h.Selector = testSelector
	if err := reg.AddReconcile(h); err != nil {
		t.Fatal(err)
	}
}

// A reconcile handler runs on the object's event, then as its results and
// errors ask: after RequeueAfter, at the Resync interval, and after an
// error with a doubling backoff that a success resets; Retry counts the
// failures in a row. Every timed run is a requeue of the object's stream
// (queueing.Drive plays the queue).
func TestReconcileTimedRuns(t *testing.T) {
	tests := []struct {
		name    string
		handler registry.ReconcileHandler
		answers []func(*kwargs.Reconcile) (registry.ReconcileResult, error)
		want    []reconcileRun
	}{
		{
			name:    "no requeue, no resync: once",
			answers: []func(*kwargs.Reconcile) (registry.ReconcileResult, error){recOK},
			want:    []reconcileRun{{0, "object", 0, false}},
		},
		{
			name:    "requeue after",
			answers: []func(*kwargs.Reconcile) (registry.ReconcileResult, error){requeueAfter(5 * time.Second), requeueAfter(3 * time.Second), recOK},
			want:    []reconcileRun{{0, "object", 0, false}, {5 * time.Second, "requeue", 0, false}, {8 * time.Second, "requeue", 0, false}},
		},
		{
			name:    "errors back off, doubling, then recOK",
			handler: registry.ReconcileHandler{Backoff: 2 * time.Second},
			answers: []func(*kwargs.Reconcile) (registry.ReconcileResult, error){recFail, recFail, recFail, recOK},
			want: []reconcileRun{
				{0, "object", 0, false}, {2 * time.Second, "retry", 1, false},
				{6 * time.Second, "retry", 2, false}, {14 * time.Second, "retry", 3, false},
			},
		},
		{
			name:    "resync, and the earlier requeue wins",
			handler: registry.ReconcileHandler{Resync: 10 * time.Second},
			answers: []func(*kwargs.Reconcile) (registry.ReconcileResult, error){requeueAfter(4 * time.Second), requeueAfter(time.Hour), recFail, recOK},
			want: []reconcileRun{
				{0, "object", 0, false}, {4 * time.Second, "requeue", 0, false},
				{14 * time.Second, "resync", 0, false}, {15 * time.Second, "retry", 1, false},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rr := &reconcileRecorder{start: time.Now(), answers: tt.answers}
				h := newHarness(t, spec(map[string]any{"x": 1.0}), func(reg *registry.Registry) {
					hd := tt.handler
					hd.ID, hd.Fn = "rec", rr.fn
					mustAddReconcile(t, reg, hd)
				})
				ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second) // ends the resync
				defer cancel()
				if patches := h.process(ctx, watching.Listed); len(patches) != 0 {
					t.Errorf("patches sent: %v", patches)
				}
				if !slices.Equal(rr.runs, tt.want) {
					t.Errorf("runs = %v, want %v", rr.runs, tt.want)
				}
			})
		})
	}
}

// reconcileBackoff doubles the first delay per failure, up to the cap.
func TestReconcileBackoff(t *testing.T) {
	for _, tt := range []struct {
		first time.Duration
		retry int
		want  time.Duration
	}{
		{0, 1, time.Second},
		{0, 3, 4 * time.Second},
		{time.Minute, 4, 5 * time.Minute},
		{time.Second, 100, 5 * time.Minute},
	} {
		if got := reconcileBackoff(tt.first, tt.retry); got != tt.want {
			t.Errorf("reconcileBackoff(%s, %d) = %s, want %s", tt.first, tt.retry, got, tt.want)
		}
	}
}

// The handler's Patch is sent, and nothing of Kopf's is: no progress, no
// diff-base, no finalizer (without Finalize). A panic is an error,
// retried; the filters and when= select the objects.
func TestReconcilePatchFiltersPanics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		calls := 0
		h := newHarness(t, spec(map[string]any{"x": 1.0}), func(reg *registry.Registry) {
			mustAddReconcile(t, reg, registry.ReconcileHandler{ID: "rec", Fn: func(ctx context.Context, kw *kwargs.Reconcile) (registry.ReconcileResult, error) {
				calls++
				if calls == 1 {
					panic("oops")
				}
				kw.Patch.Status()["seen"] = kw.Spec["x"]
				return registry.ReconcileResult{}, nil
			}})
			mustAddReconcile(t, reg, registry.ReconcileHandler{ID: "never", Fn: func(context.Context, *kwargs.Reconcile) (registry.ReconcileResult, error) {
				t.Error("a handler whose when= does not match runs")
				return registry.ReconcileResult{}, nil
			}, When: func(kw *kwargs.Reconcile) bool { return kw.Param == "match" }})
		})
		patches := h.process(t.Context(), watching.Added)
		if calls != 2 || len(patches) != 1 {
			t.Fatalf("%d calls, patches %v", calls, patches)
		}
		if got := string(patches[0].GetPatch()); got != `{"status":{"seen":1}}` {
			t.Errorf("patch = %s", got)
		}
		if h.countLogs("Reconcile handler 'rec' failed: panic: oops; retrying in 1 seconds.") != 1 || h.countLogs("Reconcile handler 'rec' succeeded.") != 1 {
			t.Errorf("logs: %v", h.messages())
		}
	})
}

// With Finalize, the finalizer is added (a resource with reconcile
// handlers only: by the reconcile step), the handler sees the deletion
// with Deleting until it succeeds, and the finalizer is released then.
// Without Finalize, a handler is not called for a deleted object.
func TestReconcileFinalize(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rr := &reconcileRecorder{start: time.Now(), answers: []func(*kwargs.Reconcile) (registry.ReconcileResult, error){recOK, recFail, recFail, recOK}}
		plain := 0
		h := newHarness(t, spec(map[string]any{"x": 1.0}), func(reg *registry.Registry) {
			mustAddReconcile(t, reg, registry.ReconcileHandler{ID: "rec", Fn: rr.fn, Finalize: true})
			mustAddReconcile(t, reg, registry.ReconcileHandler{ID: "plain", Fn: func(_ context.Context, kw *kwargs.Reconcile) (registry.ReconcileResult, error) {
				if kw.Deleting {
					t.Error("a handler without Finalize sees a deletion")
				}
				plain++
				return registry.ReconcileResult{}, nil
			}})
		})
		patches := h.process(t.Context(), watching.Listed)
		if len(patches) != 1 || !strings.Contains(string(patches[0].GetPatch()), testFinalizer) || len(rr.runs) != 0 {
			t.Fatalf("the finalizer is not added first: %v, runs %v", patches, rr.runs)
		}
		h.stream.Expect("")                       // the fake sends no event of the patch to wait for
		h.process(t.Context(), watching.Modified) // the finalizer's event
		h.update(func(obj map[string]any) {
			obj["metadata"].(map[string]any)["deletionTimestamp"] = "2026-01-01T00:00:00Z"
		})
		patches = h.process(t.Context(), watching.Modified)
		want := []reconcileRun{{0, "object", 0, false}, {0, "object", 0, true}, {time.Second, "retry", 1, true}, {3 * time.Second, "retry", 2, true}}
		if !slices.Equal(rr.runs, want) {
			t.Errorf("runs = %v, want %v", rr.runs, want)
		}
		if plain != 1 {
			t.Errorf("the plain handler ran %d times, want 1", plain)
		}
		if len(patches) != 1 || !strings.Contains(string(patches[0].GetPatch()), `"remove"`) {
			t.Errorf("the finalizer is not released: %v", patches)
		}
	})
}

// Reconcile handlers coexist with Kopf's: the create handler runs with
// its progress, the reconcile handler after it in the same cycle; on
// deletion, the finalizer is released only when both the delete handler
// and the Finalize reconcile handler are done, whichever is last.
func TestReconcileWithChangingHandlers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var order []string
		rr := &reconcileRecorder{start: time.Now(), answers: []func(*kwargs.Reconcile) (registry.ReconcileResult, error){recOK, recFail, recOK}}
		h := newHarness(t, spec(map[string]any{"x": 1.0}), func(reg *registry.Registry) {
			mustAdd(t, reg, handler("create", func(context.Context, *kwargs.Changing) (any, error) {
				order = append(order, "create")
				return nil, nil
			}, causes.Create))
			mustAdd(t, reg, handler("delete", func(context.Context, *kwargs.Changing) (any, error) {
				order = append(order, "delete")
				return nil, nil
			}, causes.Delete))
			mustAddReconcile(t, reg, registry.ReconcileHandler{ID: "rec", Finalize: true, Fn: func(ctx context.Context, kw *kwargs.Reconcile) (registry.ReconcileResult, error) {
				order = append(order, "reconcile")
				return rr.fn(ctx, kw)
			}})
		})
		h.settle(t.Context(), 5) // the finalizer, then the create handler: Kopf's cycles alone
		h.process(t.Context(), watching.Modified)
		h.update(func(obj map[string]any) {
			obj["metadata"].(map[string]any)["deletionTimestamp"] = "2026-01-01T00:00:00Z"
		})
		patches := h.process(t.Context(), watching.Modified)
		wantOrder := []string{"create", "reconcile", "delete", "reconcile", "reconcile"}
		if !slices.Equal(order, wantOrder) {
			t.Errorf("order = %v, want %v", order, wantOrder)
		}
		removals := 0
		for _, p := range patches {
			if strings.Contains(string(p.GetPatch()), `"remove"`) {
				removals++
			}
		}
		if removals != 1 {
			t.Errorf("the finalizer is released %d times: %v", removals, patches)
		}
	})
}

// Trigger asks for a handler's run because of another object: the object
// is requeued as a wakeup with its latest body, and only the triggered
// handler runs, with the trigger given; an object not seen yet is left
// alone.
func TestReconcileTrigger(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := &reconcileRecorder{start: time.Now()}
		b := &reconcileRecorder{start: time.Now()}
		h := newHarness(t, spec(map[string]any{"x": 1.0}), func(reg *registry.Registry) {
			mustAddReconcile(t, reg, registry.ReconcileHandler{ID: "a", Fn: a.fn})
			mustAddReconcile(t, reg, registry.ReconcileHandler{ID: "b", Fn: b.fn})
		})
		var requeued []watching.Event
		h.r.Requeue = func(ev watching.Event) { requeued = append(requeued, ev) }
		h.r.Trigger("ns/unknown", "a", "owned v1/configmaps ns/c")
		h.r.Trigger(h.key(), "a", "owned v1/configmaps ns/c") // known, but no body yet
		if len(requeued) != 0 {
			t.Fatalf("requeued %v", requeued)
		}
		h.process(t.Context(), watching.Listed)
		h.r.Trigger(h.key(), "a", "owned v1/configmaps ns/c")
		if len(requeued) != 1 || !requeued[0].Wakeup || requeued[0].Key != h.key() {
			t.Fatalf("requeued %v", requeued)
		}
		queueingDrive(t, h, requeued[0])
		wantA := []reconcileRun{{0, "object", 0, false}, {0, "owned v1/configmaps ns/c", 0, false}}
		if !slices.Equal(a.runs, wantA) || len(b.runs) != 1 {
			t.Errorf("a ran %v, want %v; b ran %v", a.runs, wantA, b.runs)
		}
	})
}

// queueingDrive processes one event on the harness's stream.
func queueingDrive(t *testing.T, h *harness, ev watching.Event) {
	t.Helper()
	h.r.Process(t.Context(), ev, h.stream)
}
