package reactor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kopf-go/kopf/runtime/causes"
	"github.com/kopf-go/kopf/runtime/execution"
	"github.com/kopf-go/kopf/runtime/filters"
	"github.com/kopf-go/kopf/runtime/kwargs"
	"github.com/kopf-go/kopf/runtime/progress"
	"github.com/kopf-go/kopf/runtime/registry"
	"github.com/kopf-go/kopf/runtime/watching"
)

// calls records which handlers ran, in order.
type calls struct{ ids []string }

// fn returns a handler function that records its id and returns ret().
func (c *calls) fn(id string, ret func(kw *kwargs.Changing) (any, error)) registry.ChangingFn {
	return func(_ context.Context, kw *kwargs.Changing) (any, error) {
		c.ids = append(c.ids, id)
		if ret == nil {
			return nil, nil
		}
		return ret(kw)
	}
}

// handler returns a changing handler of the test resource.
func handler(id string, fn registry.ChangingFn, reasons ...causes.Reason) registry.ChangingHandler {
	return registry.ChangingHandler{ID: id, Selector: testSelector, Reasons: reasons, Fn: fn}
}

func mustAdd(t *testing.T, reg *registry.Registry, hs ...registry.ChangingHandler) {
	t.Helper()
	for _, h := range hs {
		if err := reg.AddChanging(h); err != nil {
			t.Fatal(err)
		}
	}
}

func spec(fields map[string]any) map[string]any {
	return map[string]any{"metadata": map[string]any{}, "spec": fields}
}

// fourHandlers registers a create, an update, a resume and an optional
// delete handler that record their calls.
func fourHandlers(t *testing.T, c *calls) func(reg *registry.Registry) {
	return func(reg *registry.Registry) {
		del := handler("delete_fn", c.fn("delete_fn", nil), causes.Delete)
		del.Optional = true
		mustAdd(t, reg,
			handler("create_fn", c.fn("create_fn", nil), causes.Create),
			handler("update_fn", c.fn("update_fn", nil), causes.Update),
			handler("resume_fn", c.fn("resume_fn", nil), causes.Resume),
			del)
	}
}

// TestCauseChoosesTheHandlers: each cause runs the handlers of that cause
// only, and a handled cause is not handled again.
func TestCauseChoosesTheHandlers(t *testing.T) {
	ctx := t.Context()
	var c calls
	h := newHarness(t, spec(map[string]any{"field": 1.0}), fourHandlers(t, &c))

	h.settle(ctx, 5)
	if want := []string{"create_fn"}; !reflect.DeepEqual(c.ids, want) {
		t.Fatalf("on creation, handlers %v ran, want %v", c.ids, want)
	}
	c.ids = nil
	h.settle(ctx, 5)
	if len(c.ids) != 0 {
		t.Fatalf("with no change, handlers %v ran, want none", c.ids)
	}
	h.update(func(obj map[string]any) { obj["spec"].(map[string]any)["field"] = 2.0 })
	h.settle(ctx, 5)
	if want := []string{"update_fn"}; !reflect.DeepEqual(c.ids, want) {
		t.Fatalf("on a change, handlers %v ran, want %v", c.ids, want)
	}
	c.ids = nil
	// A change outside the essence (status) is no cause.
	h.update(func(obj map[string]any) { obj["status"] = map[string]any{"x": "y"} })
	h.settle(ctx, 5)
	if len(c.ids) != 0 {
		t.Fatalf("on a status change, handlers %v ran, want none", c.ids)
	}
	// A restarted operator sees the object in its first listing: resuming.
	h.mem = &memory{uid: "uid-1", memo: kwargs.Memo{}, noticedByListing: true}
	h.settle(ctx, 5)
	if want := []string{"resume_fn"}; !reflect.DeepEqual(c.ids, want) {
		t.Fatalf("on resuming, handlers %v ran, want %v", c.ids, want)
	}
	// The optional delete handler needs no finalizer, so none was added.
	if slices.Contains(h.object().Meta().Finalizers(), testFinalizer) {
		t.Errorf("the finalizer is added for an optional delete handler")
	}
	want := []string{
		"INFO Handler 'create_fn' succeeded.",
		"INFO Creation is processed: 1 succeeded; 0 failed.",
		"INFO Handler 'update_fn' succeeded.",
		"INFO " + causes.Update.Title() + " is processed: 1 succeeded; 0 failed.",
	}
	var infos []string
	for _, m := range h.messages() {
		if strings.HasPrefix(m, "INFO") && !strings.Contains(m, "resume") && !strings.Contains(m, "Resum") {
			infos = append(infos, m)
		}
	}
	if !reflect.DeepEqual(infos, want) {
		t.Errorf("INFO logs = %q\nwant %q", infos, want)
	}
}

// TestCreationPatch: the one merge patch of a creation cycle stores the
// handler's result, the diff-base, and no progress (purged when done).
func TestCreationPatch(t *testing.T) {
	var c calls
	h := newHarness(t, spec(map[string]any{"field": "value"}), func(reg *registry.Registry) {
		mustAdd(t, reg, handler("create_fn", c.fn("create_fn", func(*kwargs.Changing) (any, error) {
			return map[string]any{"message": "hello"}, nil
		}), causes.Create))
	})
	patches, err := h.cycle(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(patches) != 1 {
		t.Fatalf("%d patches sent, want 1", len(patches))
	}
	p := patches[0]
	if p.GetPatchType() != "application/merge-patch+json" || p.GetSubresource() != "" || p.GetName() != "obj" || p.GetNamespace() != "ns" {
		t.Errorf("patch %s of %s/%s (subresource %q), want a merge patch of ns/obj", p.GetPatchType(), p.GetNamespace(), p.GetName(), p.GetSubresource())
	}
	data := patchData(t, p)
	if got, _ := resolve(data, "status", "create_fn"); !reflect.DeepEqual(got, map[string]any{"message": "hello"}) {
		t.Errorf("status.create_fn = %v, want the handler's result; patch: %s", got, p.GetPatch())
	}
	base, _ := resolve(data, "metadata", "annotations", progress.DefaultPrefix+"/last-handled-configuration")
	if s, _ := base.(string); strings.TrimSpace(s) != `{"spec":{"field":"value"}}` {
		t.Errorf("the diff-base written is %v; patch: %s", base, p.GetPatch())
	}
	if got, _ := resolve(data, "metadata", "annotations", progress.DefaultPrefix+"/create_fn"); got != nil {
		t.Errorf("the progress is %v, want none (purged)", got)
	}
}

// TestFinalizer: a non-optional delete handler makes the finalizer be
// added in a cycle of its own, the delete handler run on deletion, and the
// finalizer removed afterwards; without such handlers it is removed.
func TestFinalizer(t *testing.T) {
	ctx := t.Context()
	var c calls
	h := newHarness(t, spec(map[string]any{"field": 1.0}), func(reg *registry.Registry) {
		mustAdd(t, reg,
			handler("create_fn", c.fn("create_fn", nil), causes.Create),
			handler("delete_fn", c.fn("delete_fn", nil), causes.Delete))
	})
	patches, err := h.cycle(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(patches) != 1 || patches[0].GetPatchType() != "application/json-patch+json" {
		t.Fatalf("the first cycle sent %v, want one JSON patch", patches)
	}
	want := `[{"op":"test","path":"/metadata/resourceVersion","value":"1"},{"op":"add","path":"/metadata/finalizers","value":["kopf.zalando.org/KopfFinalizerMarker"]}]`
	if got := string(patches[0].GetPatch()); got != want {
		t.Errorf("the finalizer patch is %s\nwant %s", got, want)
	}
	if len(c.ids) != 0 {
		t.Errorf("handlers %v ran in the finalizer's cycle", c.ids)
	}
	h.settle(ctx, 5)
	if want := []string{"create_fn"}; !reflect.DeepEqual(c.ids, want) {
		t.Fatalf("handlers %v ran, want %v", c.ids, want)
	}

	// Deletion: the handler runs, then the finalizer is removed.
	h.update(func(obj map[string]any) {
		obj["metadata"].(map[string]any)["deletionTimestamp"] = "2026-01-01T00:00:00Z"
	})
	all := h.settle(ctx, 5)
	if want := []string{"create_fn", "delete_fn"}; !reflect.DeepEqual(c.ids, want) {
		t.Fatalf("handlers %v ran, want %v", c.ids, want)
	}
	if fs := h.object().Meta().Finalizers(); slices.Contains(fs, testFinalizer) {
		t.Errorf("finalizers %v after the deletion is handled", fs)
	}
	last := all[len(all)-1]
	if !strings.Contains(string(last.GetPatch()), `"op":"remove","path":"/metadata/finalizers/0"`) {
		t.Errorf("the last patch is %s, want the finalizer's removal", last.GetPatch())
	}
	if !h.mem.released {
		t.Errorf("the object is not marked as released")
	}
	// Released: the next versions are free.
	if patches, err := h.cycle(ctx); err != nil || len(patches) != 0 {
		t.Errorf("a released object's cycle sent %d patches (%v)", len(patches), err)
	}
	if h.countLogs("Deletion, but we are done with it, and we do not care.") == 0 {
		t.Errorf("no log of the free cause")
	}

	// Without delete handlers, a finalizer found is removed.
	h2 := newHarness(t, map[string]any{"metadata": map[string]any{"finalizers": []any{"other", testFinalizer}}}, func(reg *registry.Registry) {
		mustAdd(t, reg, handler("create_fn", c.fn("x", nil), causes.Create))
	})
	patches, err = h2.cycle(ctx)
	if err != nil || len(patches) != 1 {
		t.Fatalf("cycle: %d patches, %v", len(patches), err)
	}
	if fs := h2.object().Meta().Finalizers(); !reflect.DeepEqual(fs, []string{"other"}) {
		t.Errorf("finalizers = %v, want [other]", fs)
	}
	if h2.countLogs("Removing the finalizer, as there are no handlers requiring it.") != 1 {
		t.Errorf("logs: %q", h2.messages())
	}
}

// TestFilters: labels, annotations, field value and when= select the
// handlers; a field handler runs only when its field changes.
func TestFilters(t *testing.T) {
	ctx := t.Context()
	var c calls
	obj := map[string]any{
		"metadata": map[string]any{"labels": map[string]any{"app": "x"}, "annotations": map[string]any{"note": "y"}},
		"spec":     map[string]any{"a": 1.0, "b": "keep"},
	}
	h := newHarness(t, obj, func(reg *registry.Registry) {
		withLabel := handler("labelled", c.fn("labelled", nil), causes.Create)
		withLabel.Filter.Labels = map[string]filters.Matcher{"app": filters.IsEqual("x")}
		otherLabel := handler("other_label", c.fn("other_label", nil), causes.Create)
		otherLabel.Filter.Labels = map[string]filters.Matcher{"app": filters.IsEqual("z")}
		absentAnn := handler("absent_annotation", c.fn("absent_annotation", nil), causes.Create)
		absentAnn.Filter.Annotations = map[string]filters.Matcher{"note": filters.IsAbsent()}
		presentAnn := handler("present_annotation", c.fn("present_annotation", nil), causes.Create)
		presentAnn.Filter.Annotations = map[string]filters.Matcher{"note": filters.IsPresent()}
		value := handler("value_cb", c.fn("value_cb", nil), causes.Create)
		value.Field = []string{"spec", "a"}
		value.Filter.Value = &filters.Matcher{Op: filters.Callback, Fn: func(v any, ok bool, _ *kwargs.Base) bool { return ok && fmt.Sprint(v) == "1" }}
		whenFalse := handler("when_false", c.fn("when_false", nil), causes.Create)
		whenFalse.When = func(*kwargs.Changing) bool { return false }
		fieldA := handler("field_a", c.fn("field_a", nil), causes.Update)
		fieldA.Field, fieldA.FieldHandler = []string{"spec", "a"}, true
		fieldB := handler("field_b", c.fn("field_b", nil), causes.Update)
		fieldB.Field, fieldB.FieldHandler = []string{"spec", "b"}, true
		mustAdd(t, reg, withLabel, otherLabel, absentAnn, presentAnn, value, whenFalse, fieldA, fieldB)
	})
	h.settle(ctx, 10)
	if want := []string{"labelled", "present_annotation", "value_cb"}; !reflect.DeepEqual(c.ids, want) {
		t.Fatalf("on creation, handlers %v ran, want %v", c.ids, want)
	}
	c.ids = nil
	h.update(func(obj map[string]any) { obj["spec"].(map[string]any)["a"] = 2.0 })
	h.settle(ctx, 10)
	if want := []string{"field_a"}; !reflect.DeepEqual(c.ids, want) {
		t.Fatalf("on a change of spec.a, handlers %v ran, want %v", c.ids, want)
	}
}

// TestSubhandlers: a handler's sub-handlers run one per cycle with their
// own progress; the parent succeeds when they all have.
func TestSubhandlers(t *testing.T) {
	ctx := t.Context()
	var c calls
	h := newHarness(t, spec(map[string]any{"items": []any{"a", "b"}}), func(reg *registry.Registry) {
		mustAdd(t, reg, handler("parent", func(ctx context.Context, kw *kwargs.Changing) (any, error) {
			c.ids = append(c.ids, "parent")
			for _, item := range kw.Spec["items"].([]any) {
				id := item.(string)
				if err := registry.Subhandler(ctx, registry.ChangingHandler{ID: id, Fn: c.fn("parent/"+id, nil)}); err != nil {
					return nil, err
				}
			}
			return nil, nil
		}, causes.Create))
	})
	h.settle(ctx, 10)
	// The parent runs again in each cycle to register its sub-handlers.
	if want := []string{"parent", "parent/a", "parent", "parent/b"}; !reflect.DeepEqual(c.ids, want) {
		t.Fatalf("calls = %v, want %v", c.ids, want)
	}
	if h.countLogs("INFO Handler 'parent' succeeded.") != 1 || h.countLogs("INFO Handler 'parent/a' succeeded.") != 1 {
		t.Errorf("logs: %q", h.messages())
	}
	if h.countLogs("Creation is processed: 1 succeeded; 0 failed.") != 1 {
		t.Errorf("logs: %q", h.messages())
	}
}

// TestErrorsModes: what each kind of error does to the handler's outcome,
// the retries persisted between cycles, and the backoff slept in between
// (in a synctest bubble: the delays pass at once).
func TestErrorsModes(t *testing.T) {
	boom := errors.New("boom")
	for _, tt := range []struct {
		name      string
		configure func(h *registry.ChangingHandler)
		errs      []error // returned by successive attempts, then success
		wantCalls int
		wantLog   string
		wantDone  string // the final "... is processed" counts
	}{
		{
			name: "temporary error, retried after its delay", errs: []error{execution.NewTemporaryError("later", 10*time.Second)},
			wantCalls: 2, wantLog: "ERROR Handler 'fn' failed temporarily: later", wantDone: "1 succeeded; 0 failed.",
		},
		{
			name: "permanent error, not retried", errs: []error{execution.NewPermanentError("never")},
			wantCalls: 1, wantLog: "ERROR Handler 'fn' failed permanently: never", wantDone: "0 succeeded; 1 failed.",
		},
		{
			name: "arbitrary error, retried with backoff", errs: []error{boom, boom},
			configure: func(h *registry.ChangingHandler) { h.Backoff = 5 * time.Second },
			wantCalls: 3, wantLog: "ERROR Handler 'fn' failed with an exception and will try again in 5 seconds: boom", wantDone: "1 succeeded; 0 failed.",
		},
		{
			name: "arbitrary error, errors=permanent", errs: []error{boom},
			configure: func(h *registry.ChangingHandler) { h.Errors = registry.ErrorsPermanent },
			wantCalls: 1, wantLog: "ERROR Handler 'fn' failed with an exception and will stop now: boom", wantDone: "0 succeeded; 1 failed.",
		},
		{
			name: "arbitrary error, errors=ignored", errs: []error{boom},
			configure: func(h *registry.ChangingHandler) { h.Errors = registry.ErrorsIgnored },
			wantCalls: 1, wantLog: "ERROR Handler 'fn' failed with an exception and will ignore it: boom", wantDone: "1 succeeded; 0 failed.",
		},
		{
			name: "retries exhausted", errs: []error{boom, boom, boom},
			configure: func(h *registry.ChangingHandler) { h.Retries = 2; h.Backoff = time.Second },
			wantCalls: 2, wantLog: "ERROR Handler 'fn' failed with an exception and will stop now (it would exceed 2 retries on the next attempt): boom", wantDone: "0 succeeded; 1 failed.",
		},
		{
			name: "a panic is an arbitrary error", errs: []error{nil},
			configure: func(h *registry.ChangingHandler) { h.Errors = registry.ErrorsPermanent },
			wantCalls: 1, wantLog: "ERROR Handler 'fn' failed with an exception and will stop now: panic: oops", wantDone: "0 succeeded; 1 failed.",
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				calls := 0
				h := newHarness(t, spec(map[string]any{"x": 1.0}), func(reg *registry.Registry) {
					hd := handler("fn", func(context.Context, *kwargs.Changing) (any, error) {
						calls++
						if calls <= len(tt.errs) {
							if tt.errs[calls-1] == nil {
								panic("oops")
							}
							return nil, tt.errs[calls-1]
						}
						return nil, nil
					}, causes.Create)
					if tt.configure != nil {
						tt.configure(&hd)
					}
					mustAdd(t, reg, hd)
				})
				start := time.Now()
				h.settle(t.Context(), 10)
				if calls != tt.wantCalls {
					t.Errorf("the handler was called %d times, want %d", calls, tt.wantCalls)
				}
				if h.countLogs(tt.wantLog) == 0 {
					t.Errorf("no log %q in %q", tt.wantLog, h.messages())
				}
				if h.countLogs("Creation is processed: "+tt.wantDone) != 1 {
					t.Errorf("no log of %q in %q", tt.wantDone, h.messages())
				}
				if tt.wantCalls > 1 && time.Since(start) == 0 {
					t.Errorf("the retries did not wait")
				}
			})
		})
	}
}

// TestDelayedHandlerTouches: when nothing is written but a handler is
// delayed, the cycle ends with a requeue after the delay, and the
// requeue touches the object.
func TestDelayedHandlerTouches(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		calls := 0
		h := newHarness(t, spec(map[string]any{"x": 1.0}), func(reg *registry.Registry) {
			mustAdd(t, reg, handler("fn", func(context.Context, *kwargs.Changing) (any, error) {
				calls++
				if calls == 1 {
					return nil, execution.NewTemporaryError("not yet", 30*time.Second)
				}
				return nil, nil
			}, causes.Create))
		})
		if _, err := h.cycle(t.Context()); err != nil { // runs, fails temporarily, writes the delay
			t.Fatal(err)
		}
		h.stream.Expect("") // the fake sends no event of the patch to wait for
		start := time.Now()
		patches := h.process(t.Context(), watching.Modified) // nothing due: requeued, then touches
		if waited := time.Since(start); waited != 30*time.Second {
			t.Errorf("touched after %s, want 30s", waited)
		}
		if len(patches) != 1 || !strings.Contains(string(patches[0].GetPatch()), "touch-dummy") {
			t.Errorf("patches %v, want the touch", patches)
		}
		if h.countLogs("DEBUG Sleeping for 30 seconds for the delayed handlers.") != 1 {
			t.Errorf("logs: %q", h.messages())
		}
		h.settle(t.Context(), 5)
		if calls != 2 {
			t.Errorf("calls = %d, want 2", calls)
		}
	})
}

// TestRejectedPatch: a patch that the API server rejects as invalid is
// not retried, and the same essence is not handled again.
func TestRejectedPatch(t *testing.T) {
	ctx := t.Context()
	var c calls
	h := newHarness(t, spec(map[string]any{"x": 1.0}), func(reg *registry.Registry) {
		mustAdd(t, reg, handler("fn", c.fn("fn", nil), causes.Create))
	})
	h.client.PrependReactor("patch", "kopfexamples", func(k8stesting.Action) (bool, runtimeObject, error) {
		return true, nil, apierrors.NewInvalid(schema.GroupKind{Group: "kopf.dev", Kind: "KopfExample"}, "obj", nil)
	})
	_, err := h.cycle(ctx)
	var invalid *invalidPatchError
	if !errors.As(err, &invalid) {
		t.Fatalf("cycle() = %v, want an invalid patch error", err)
	}
	if h.mem.rejected == "" {
		t.Fatalf("the essence is not remembered as rejected")
	}
	if patches, err := h.cycle(ctx); err != nil || len(patches) != 0 || len(c.ids) != 1 {
		t.Errorf("the rejected essence is handled again: %d patches, %v, calls %v", len(patches), err, c.ids)
	}
	if h.countLogs("The object could not be patched for this essence before; waiting for it to change.") != 1 {
		t.Errorf("logs: %q", h.messages())
	}
	// Process: the error is logged and not retried.
	h.process(ctx, watching.Modified)
	h.mem.rejected = ""
	h.process(ctx, watching.Modified)
	if h.countLogs("ERROR The object cannot be patched; it will be processed again when it changes") != 1 {
		t.Errorf("logs: %q", h.messages())
	}
}

// TestProcessRetriesAFailedPatch: a patch that fails after its request's
// own retries (none here) repeats the cycle after the queueing error
// delays.
func TestProcessRetriesAFailedPatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var c calls
		h := newHarness(t, spec(map[string]any{"x": 1.0}), func(reg *registry.Registry) {
			mustAdd(t, reg, handler("fn", c.fn("fn", nil), causes.Create))
		})
		h.r.Settings.Queueing.ErrorJitter = 0 // exact delays here; retry_test.go covers the jitter
		h.r.Settings.Networking.ErrorBackoffs = nil
		failures := 2
		h.client.PrependReactor("patch", "kopfexamples", func(k8stesting.Action) (bool, runtimeObject, error) {
			if failures > 0 {
				failures--
				return true, nil, apierrors.NewServiceUnavailable("down")
			}
			return false, nil, nil
		})
		start := time.Now()
		h.process(t.Context(), watching.Added)
		if failures != 0 {
			t.Errorf("%d failures left", failures)
		}
		if got := time.Since(start); got != 2*time.Second { // the error delays 1s, 1s
			t.Errorf("retried after %s, want 2s", got)
		}
		if h.countLogs("ERROR Throttling for 1 seconds due to an unexpected error") != 2 || h.countLogs("INFO Throttling is over. Switching back to normal operations.") != 2 {
			t.Errorf("logs: %q", h.messages())
		}
		// The handler ran in each attempt: its outcome was never stored.
		if len(c.ids) != 3 {
			t.Errorf("calls = %v, want 3", c.ids)
		}
	})
}

// TestProcessRetriesTheRequestNotTheHandler: a patch that fails for want
// of an answer is sent again as it is, after Networking.ErrorBackoffs, so
// the handler whose outcome it carries runs once.
func TestProcessRetriesTheRequestNotTheHandler(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var c calls
		h := newHarness(t, spec(map[string]any{"x": 1.0}), func(reg *registry.Registry) {
			mustAdd(t, reg, handler("fn", c.fn("fn", nil), causes.Create))
		})
		h.r.Settings.Queueing.ErrorJitter = 0
		var sent [][]byte
		failures := 2
		h.client.PrependReactor("patch", "kopfexamples", func(a k8stesting.Action) (bool, runtimeObject, error) {
			sent = append(sent, a.(k8stesting.PatchAction).GetPatch())
			if failures > 0 {
				failures--
				return true, nil, apierrors.NewServiceUnavailable("down")
			}
			return false, nil, nil
		})
		start := time.Now()
		h.process(t.Context(), watching.Added)
		if got := time.Since(start); got != 2*time.Second { // the backoffs 1s, 1s
			t.Errorf("the patch succeeded after %s, want 2s", got)
		}
		if len(c.ids) != 1 {
			t.Errorf("calls = %v, want the handler once", c.ids)
		}
		if len(sent) != 3 || !bytes.Equal(sent[0], sent[2]) {
			t.Errorf("patches sent: %q, want the same one 3 times", sent)
		}
		if h.countLogs("ERROR Request attempt #1/9 failed; will retry: PATCH /apis/kopf.dev/v1/namespaces/ns/kopfexamples/obj -> ") != 1 ||
			h.countLogs("ERROR Request attempt #2/9 failed; will retry: ") != 1 ||
			h.countLogs("DEBUG Request attempt #3/9 succeeded: ") != 1 ||
			h.countLogs("Throttling") != 0 {
			t.Errorf("logs: %q", h.messages())
		}
	})
}

// TestProcessEventHandlers: on.event handlers get every event with its
// type, and a deletion forgets the object.
func TestProcessEventHandlers(t *testing.T) {
	ctx := t.Context()
	var got []string
	h := newHarness(t, spec(map[string]any{"x": 1.0}), func(reg *registry.Registry) {
		err := reg.AddEvent(registry.EventHandler{ID: "ev", Selector: testSelector, Fn: func(_ context.Context, kw *kwargs.Event) error {
			got = append(got, kw.Type+":"+kw.Name)
			if typ := kw.Event["type"]; (kw.Type == "") != (typ == nil) {
				t.Errorf("event type %v for %q", typ, kw.Type)
			}
			return nil
		}})
		if err != nil {
			t.Fatal(err)
		}
		skipped := registry.EventHandler{ID: "skipped", Selector: testSelector, Fn: func(context.Context, *kwargs.Event) error {
			t.Error("a handler that does not match is called")
			return nil
		}}
		skipped.Field = []string{"spec", "x"}
		skipped.Filter.Value = &filters.Matcher{Op: filters.Equal, Value: 2.0}
		if err := reg.AddEvent(skipped); err != nil {
			t.Fatal(err)
		}
	})
	for _, typ := range []watching.Type{watching.Listed, watching.Added, watching.Modified, watching.Deleted} {
		if patches := h.process(ctx, typ); len(patches) != 0 {
			t.Errorf("an event handler caused %d patches", len(patches))
		}
	}
	if want := []string{":obj", "ADDED:obj", "MODIFIED:obj", "DELETED:obj"}; !reflect.DeepEqual(got, want) {
		t.Errorf("events = %v, want %v", got, want)
	}
	h.r.mu.Lock()
	_, remembered := h.r.memories[h.key()]
	h.r.mu.Unlock()
	if remembered {
		t.Errorf("the deleted object is still remembered")
	}
}
