package reactor

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/kopf-go/kopf/runtime/causes"
	"github.com/kopf-go/kopf/runtime/diffs"
	"github.com/kopf-go/kopf/runtime/filters"
	"github.com/kopf-go/kopf/runtime/kwargs"
	"github.com/kopf-go/kopf/runtime/progress"
	"github.com/kopf-go/kopf/runtime/registry"
	"github.com/kopf-go/kopf/runtime/watching"
)

// vandalize changes everything that user code can reach of an object.
func vandalize(res *kwargs.Base) {
	res.Body["spec"] = map[string]any{"field": "vandalized"}
	res.Body["status"] = map[string]any{"vandalized": true}
	for _, m := range []map[string]any{res.Spec, res.Status} {
		if m != nil {
			m["field"] = "vandalized"
			m["extra"] = map[string]any{"x": 1}
		}
	}
	if res.Meta != nil {
		res.Meta["resourceVersion"] = "999"
		res.Meta["deletionTimestamp"] = "2000-01-01T00:00:00Z"
		res.Meta["finalizers"] = []any{"vandalized"}
		if ann, ok := res.Meta["annotations"].(map[string]any); ok {
			for k := range ann {
				ann[k] = `{"spec":{"field":"vandalized"}}`
			}
			ann["vandalized"] = "yes"
		}
		if labels, ok := res.Meta["labels"].(map[string]any); ok {
			labels["vandalized"] = "yes"
		}
	}
	res.Labels["vandalized"] = "yes"
	res.Annotations[progress.DefaultPrefix+"/last-handled-configuration"] = "garbage"
	res.Memo["seen"] = true // the memo is theirs to change
}

// vandalizeChange changes everything a changing handler or its when= can
// reach of the change.
func vandalizeChange(kw *kwargs.Changing) {
	vandalize(&kw.Base)
	for _, v := range []any{kw.Old, kw.New} {
		if m, ok := v.(map[string]any); ok {
			m["spec"] = map[string]any{"field": "vandalized"}
		}
	}
	for i := range kw.Diff {
		if m, ok := kw.Diff[i].New.(map[string]any); ok {
			m["field"] = "vandalized"
		}
		kw.Diff[i].Old, kw.Diff[i].New = "vandalized", "vandalized"
		kw.Diff[i].Path = append(kw.Diff[i].Path[:0], "vandalized")
	}
}

// TestUserCodeCannotCorruptTheState: on.event handlers, when= and filter
// callbacks and changing handlers that change every map they get cause no
// spurious cause: the update handler never runs, the diff-base stored is
// the object's, and the object the reactor keeps is unchanged.
func TestUserCodeCannotCorruptTheState(t *testing.T) {
	ctx := t.Context()
	var updates []diffs.Diff
	created := 0
	obj := map[string]any{
		"metadata": map[string]any{"labels": map[string]any{"app": "x"}, "annotations": map[string]any{"note": "y"}},
		"spec":     map[string]any{"field": "value", "nested": map[string]any{"list": []any{"a", map[string]any{"b": "c"}}}},
		"status":   map[string]any{"phase": "ok"},
	}
	h := newHarness(t, obj, func(reg *registry.Registry) {
		labelCallback := filters.Func(func(value any, present bool, res *kwargs.Base) bool {
			vandalize(res)
			return true
		})
		create := handler("create_fn", func(_ context.Context, kw *kwargs.Changing) (any, error) {
			created++
			vandalizeChange(kw)
			return nil, nil
		}, causes.Create)
		create.Filter.Labels = map[string]filters.Matcher{"app": labelCallback}
		create.When = func(kw *kwargs.Changing) bool { vandalizeChange(kw); return true }
		update := handler("update_fn", func(_ context.Context, kw *kwargs.Changing) (any, error) {
			updates = append(updates, kw.Diff)
			return nil, nil
		}, causes.Update)
		update.When = func(kw *kwargs.Changing) bool { vandalizeChange(kw); return true }
		update.Filter.Annotations = map[string]filters.Matcher{"note": labelCallback}
		field := handler("field_fn", func(_ context.Context, kw *kwargs.Changing) (any, error) {
			updates = append(updates, kw.Diff)
			return nil, nil
		}, causes.Update)
		field.Field, field.FieldHandler = []string{"spec", "nested"}, true
		field.Filter.Value = &filters.Matcher{Op: filters.Callback, Fn: func(v any, _ bool, res *kwargs.Base) bool {
			if m, ok := v.(map[string]any); ok {
				m["list"] = "vandalized"
			}
			vandalize(res)
			return true
		}}
		// The finalizer's check calls the delete handler's when= on every cycle.
		del := handler("delete_fn", func(context.Context, *kwargs.Changing) (any, error) { return nil, nil }, causes.Delete)
		del.When = func(kw *kwargs.Changing) bool { vandalizeChange(kw); return true }
		mustAdd(t, reg, create, update, field, del)
		for _, id := range []string{"event_fn", "event_when"} {
			ev := registry.EventHandler{ID: id, Selector: testSelector, Fn: func(_ context.Context, kw *kwargs.Event) error {
				vandalize(&kw.Base)
				kw.Event["object"].(map[string]any)["spec"] = "vandalized"
				kw.Event["type"] = "DELETED"
				return nil
			}}
			if id == "event_when" {
				ev.When = func(kw *kwargs.Event) bool { vandalize(&kw.Base); return true }
				ev.Filter.Labels = map[string]filters.Matcher{"app": labelCallback}
			}
			if err := reg.AddEvent(ev); err != nil {
				t.Fatal(err)
			}
		}
	})
	original := h.object().DeepCopy()

	for i := 0; i < 6; i++ { // the finalizer, the creation, then nothing
		typ := watching.Modified
		if i == 0 {
			typ = watching.Added
		}
		before := h.object().DeepCopy()
		ev := watching.Event{Type: typ, Key: h.key(), Object: h.object()}
		h.r.Process(ctx, ev, h.stream)
		// The reactor's own copy of the event's object is intact.
		if !reflect.DeepEqual(map[string]any(ev.Object), map[string]any(before)) {
			t.Fatalf("event %d: the object processed is changed by user code:\n%v\nwas\n%v", i, ev.Object, before)
		}
	}
	if created != 1 {
		t.Errorf("the create handler ran %d times, want 1", created)
	}
	if len(updates) != 0 {
		t.Errorf("update handlers ran for changes that never happened: %v", updates)
	}
	got := h.object()
	if !reflect.DeepEqual(got["spec"], original["spec"]) {
		t.Errorf("spec = %v, want %v", got["spec"], original["spec"])
	}
	stored, _ := got.Meta().Annotations()[progress.DefaultPrefix+"/last-handled-configuration"]
	if !strings.Contains(stored, `"nested":{"list":["a",{"b":"c"}]}`) || strings.Contains(stored, "vandalized") {
		t.Errorf("the diff-base stored is %s", stored)
	}
	if fs := got.Meta().Finalizers(); !reflect.DeepEqual(fs, []string{testFinalizer}) {
		t.Errorf("finalizers = %v", fs)
	}
	if h.mem.memo["seen"] != true {
		t.Errorf("the memo is not shared with user code")
	}
	if n := h.countLogs("ERROR"); n != 0 {
		t.Errorf("%d errors logged: %q", n, h.messages())
	}
}

// TestUserCopyOnlyWhenNeeded: a cycle whose handlers are all finished, and
// filters without callbacks, make no copy of the object.
func TestUserCopyOnlyWhenNeeded(t *testing.T) {
	h := newHarness(t, spec(map[string]any{"x": "y"}), func(reg *registry.Registry) {
		mustAdd(t, reg, handler("create_fn", func(context.Context, *kwargs.Changing) (any, error) { return nil, nil }, causes.Create))
	})
	c := h.r.newCycle(h.object(), h.mem, h.stream, h.r.Logger)
	if !h.r.detect(c) {
		t.Fatal("detect() skipped the cycle")
	}
	h.r.selectHandlers(c)
	if c.userKw != nil {
		t.Errorf("filters without callbacks made a copy")
	}
	if kw := c.handlersKwargs(h.r); kw != c.user() {
		t.Errorf("a handler will run, but it gets the reactor's own kwargs")
	}
	if c.userKw.Body["spec"] == nil || reflect.ValueOf(c.userKw.Body["spec"]).Pointer() == reflect.ValueOf(c.base.Body["spec"]).Pointer() {
		t.Errorf("the copy shares the spec with the reactor's body")
	}

	h.settle(t.Context(), 5)
	h.update(func(obj map[string]any) { obj["status"] = map[string]any{"s": int64(1)} })
	c = h.r.newCycle(h.object(), h.mem, h.stream, h.r.Logger)
	h.r.detect(c)
	h.r.selectHandlers(c)
	if len(c.handlers) != 0 || c.userKw != nil {
		t.Errorf("a noop cycle has handlers %v or a copy", c.handlers)
	}
}

type typedExample struct {
	Spec struct {
		X string `json:"x"`
	} `json:"spec"`
}

// A typed handler, its when= callback and its sub-handler get the object
// decoded once, in the cycle's copy for user code: the same *T, never the
// reactor's own data.
func TestTypedDecodedOncePerCycle(t *testing.T) {
	type call struct {
		who string
		obj *typedExample
	}
	var calls []call
	record := func(who string, kw kwargs.TypedChanging[typedExample]) {
		calls = append(calls, call{who, kw.Object})
	}
	h := newHarness(t, spec(map[string]any{"x": "y"}), func(reg *registry.Registry) {
		hd := handler("create_fn", registry.TypedChangingFunc(func(ctx context.Context, kw kwargs.TypedChanging[typedExample]) (any, error) {
			record("handler", kw)
			kw.Object.Spec.X = "changed by the handler" // its own copy
			return nil, registry.Subhandler(ctx, registry.ChangingHandler{
				ID: "sub",
				Fn: registry.TypedChangingFunc(registry.NoResult(func(ctx context.Context, kw kwargs.TypedChanging[typedExample]) error {
					record("sub", kw)
					return nil
				})),
			})
		}), causes.Create)
		hd.When = registry.TypedChangingWhen(func(kw kwargs.TypedChanging[typedExample]) bool {
			record("when", kw)
			return true
		})
		mustAdd(t, reg, hd)
	})
	h.settle(t.Context(), 5)
	if len(calls) < 3 || calls[0].who != "when" || calls[1].who != "handler" || calls[2].who != "sub" {
		t.Fatalf("calls: %+v", calls)
	}
	if calls[0].obj != calls[1].obj || calls[1].obj != calls[2].obj {
		t.Errorf("the first cycle decoded the object more than once: %p %p %p", calls[0].obj, calls[1].obj, calls[2].obj)
	}
	if got := h.object()["spec"].(map[string]any)["x"]; got != "y" {
		t.Errorf("the handler's change of its typed object reached the reactor's data: spec.x = %v", got)
	}
}
