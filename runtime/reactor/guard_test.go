package reactor

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/kopf-go/kopf/runtime/causes"
	"github.com/kopf-go/kopf/runtime/filters"
	"github.com/kopf-go/kopf/runtime/kwargs"
	"github.com/kopf-go/kopf/runtime/registry"
	"github.com/kopf-go/kopf/runtime/watching"
)

func panicking(*kwargs.Changing) bool { panic("when exploded") }

// TestPanickingFiltersDoNotMatch: a when=, label, annotation or value
// callback that panics makes its handler not match, with an ERROR once per
// object, handler and cause however many events come, and its stack at
// DEBUG; the other handlers run, and Process returns.
func TestPanickingFiltersDoNotMatch(t *testing.T) {
	boom := filters.Func(func(any, bool, *kwargs.Base) bool { panic("callback exploded") })
	for _, tt := range []struct {
		name      string
		configure func(h *registry.ChangingHandler)
		wantLog   string
	}{
		{"when=", func(h *registry.ChangingHandler) { h.When = panicking }, "panic: when exploded"},
		{"label callback", func(h *registry.ChangingHandler) { h.Filter.Labels = map[string]filters.Matcher{"app": boom} }, "panic: callback exploded"},
		{"annotation callback", func(h *registry.ChangingHandler) {
			h.Filter.Annotations = map[string]filters.Matcher{"note": boom}
		}, "panic: callback exploded"},
		{"value callback", func(h *registry.ChangingHandler) { h.Field = []string{"spec", "x"}; h.Filter.Value = &boom }, "panic: callback exploded"},
		{"a nil when=", func(h *registry.ChangingHandler) {
			var fn func(*kwargs.Changing) bool
			h.When = func(kw *kwargs.Changing) bool { return fn(kw) }
		}, "panic: runtime error: invalid memory address or nil pointer dereference"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx := t.Context()
			var c calls
			obj := map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app": "x"}, "annotations": map[string]any{"note": "y"}},
				"spec":     map[string]any{"x": "y"},
			}
			h := newHarness(t, obj, func(reg *registry.Registry) {
				bad := handler("bad", c.fn("bad", nil), causes.Create, causes.Update)
				tt.configure(&bad)
				badDelete := handler("bad_delete", c.fn("bad_delete", nil), causes.Delete)
				tt.configure(&badDelete)
				mustAdd(t, reg, bad, handler("good", c.fn("good", nil), causes.Create), badDelete)
			})
			for _, typ := range []watching.Type{watching.Added, watching.Modified, watching.Modified, watching.Modified} {
				h.process(ctx, typ)
			}
			if want := []string{"good"}; !reflect.DeepEqual(c.ids, want) {
				t.Errorf("handlers %v ran, want %v", c.ids, want)
			}
			for _, id := range []string{"bad", "bad_delete"} {
				want := "ERROR Handler '" + id + "' does not match: its filters have failed: "
				if n := h.countLogs(want); n != 1 {
					t.Errorf("%q is logged %d times, want once: %q", want, n, h.messages())
				}
			}
			if n := h.countLogs("its filters have failed: " + tt.wantLog); n != 2 {
				t.Errorf("the panic's value %q is logged %d times, want 2 (once per handler)", tt.wantLog, n)
			}
			if n := h.countLogs("DEBUG The stack of the panic: "); n != 2 {
				t.Errorf("%d stacks logged, want 2", n)
			}
			for _, r := range h.logs.records(t) {
				if strings.HasPrefix(r.Msg, "The stack of the panic: ") && !strings.Contains(r.Stack, "guard_test.go") {
					t.Errorf("the stack of %q is %q, want the panicking callback's", r.Msg, r.Stack)
				}
			}
			// A change is a new cause for the update handler: reported again.
			h.update(func(obj map[string]any) { obj["spec"].(map[string]any)["x"] = "z" })
			h.process(ctx, watching.Modified)
			if n := h.countLogs("ERROR Handler 'bad' does not match"); n != 2 {
				t.Errorf("the update cause's failure is logged %d times in all, want 2: %q", n, h.messages())
			}
			// The reports are forgotten with the object.
			h.process(ctx, watching.Deleted)
			h.r.filterReports.mu.Lock()
			left, failing := len(h.r.filterReports.failed), h.r.filterReports.objects.Load()
			h.r.filterReports.mu.Unlock()
			if left != 0 || failing != 0 {
				t.Errorf("reports of %d (%d) objects are left after the deletion", left, failing)
			}
		})
	}
}

// TestFailedFilterReportsReArm: a filter that works again re-arms its
// report, so that a later failure is logged again.
func TestFailedFilterReportsReArm(t *testing.T) {
	fail := true
	h := newHarness(t, spec(nil), nil)
	hd := &registry.ChangingHandler{ID: "fn", When: func(*kwargs.Changing) bool {
		if fail {
			panic("boom")
		}
		return true
	}}
	c := h.r.newCycle(h.object(), h.mem, h.stream, h.r.Logger)
	c.base = kwargs.Changing{Base: kwargs.FromBody(testResource, c.b, nil, h.r.Logger, h.mem.memo), Reason: causes.Create}
	for i, want := range []bool{false, false, true, false} {
		fail = !want
		if got := h.r.matches(hd, c, h.r.Logger); got != want {
			t.Errorf("matches() #%d = %v, want %v", i, got, want)
		}
	}
	if n := h.countLogs("ERROR Handler 'fn' does not match"); n != 2 {
		t.Errorf("logged %d times, want 2: %q", n, h.messages())
	}
}

// TestPanickingEventHandlers: an on.event handler or its when= that panics
// is logged and ignored; the other event handlers and the changing
// handlers still run.
func TestPanickingEventHandlers(t *testing.T) {
	ctx := t.Context()
	var c calls
	var events []string
	h := newHarness(t, spec(map[string]any{"x": "y"}), func(reg *registry.Registry) {
		mustAdd(t, reg, handler("create_fn", c.fn("create_fn", nil), causes.Create))
		for _, ev := range []registry.EventHandler{
			{ID: "panics", Fn: func(context.Context, *kwargs.Event) error { panic("handler exploded") }},
			{ID: "when_panics", Fn: func(context.Context, *kwargs.Event) error { events = append(events, "when_panics"); return nil },
				When: func(*kwargs.Event) bool { panic("when exploded") }},
			{ID: "works", Fn: func(context.Context, *kwargs.Event) error { events = append(events, "works"); return nil }},
		} {
			ev.Selector = testSelector
			if err := reg.AddEvent(ev); err != nil {
				t.Fatal(err)
			}
		}
	})
	h.process(ctx, watching.Added)
	h.process(ctx, watching.Modified)
	if want := []string{"works", "works"}; !reflect.DeepEqual(events, want) {
		t.Errorf("event handlers %v ran, want %v", events, want)
	}
	if want := []string{"create_fn"}; !reflect.DeepEqual(c.ids, want) {
		t.Errorf("changing handlers %v ran, want %v", c.ids, want)
	}
	if n := h.countLogs("ERROR Handler 'panics' failed with an exception and will ignore it: panic: handler exploded"); n != 2 {
		t.Errorf("the handler's panic is logged %d times, want once per event: %q", n, h.messages())
	}
	if n := h.countLogs("ERROR Handler 'when_panics' does not match: its filters have failed: panic: when exploded"); n != 1 {
		t.Errorf("the when= panic is logged %d times, want once: %q", n, h.messages())
	}
}

// exploding is a handler's result whose encoding panics.
type exploding struct{}

func (exploding) MarshalJSON() ([]byte, error) { panic("marshal exploded") }

// TestPanickingResultEncoding: a result whose MarshalJSON panics is
// reported as a result that cannot be stored; the handler succeeds.
func TestPanickingResultEncoding(t *testing.T) {
	h := newHarness(t, spec(map[string]any{"x": "y"}), func(reg *registry.Registry) {
		mustAdd(t, reg, handler("fn", func(context.Context, *kwargs.Changing) (any, error) { return exploding{}, nil }, causes.Create))
	})
	h.settle(t.Context(), 5)
	if n := h.countLogs("ERROR Handler 'fn' returned a result that cannot be stored: panic: marshal exploded"); n != 1 {
		t.Errorf("logs: %q", h.messages())
	}
	if n := h.countLogs("Creation is processed: 1 succeeded; 0 failed."); n != 1 {
		t.Errorf("logs: %q", h.messages())
	}
	for _, m := range h.messages() {
		if strings.Contains(m, "exploding") && strings.HasPrefix(m, "ERROR") {
			t.Errorf("the stack is in an ERROR record: %q", m)
		}
	}
}
