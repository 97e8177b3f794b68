package registry

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/kopf-go/kopf/runtime/causes"
	"github.com/kopf-go/kopf/runtime/filters"
	"github.com/kopf-go/kopf/runtime/kwargs"
	"github.com/kopf-go/kopf/runtime/resources"
)

var (
	examples = resources.Selector{Group: "kopf.dev", Version: "v1", Name: "kopfexamples"}
	pods     = resources.Selector{Version: "v1", Name: "pods", Core: true}
	exRes    = resources.Resource{Group: "kopf.dev", Version: "v1", Plural: "kopfexamples", Kind: "KopfExample", Namespaced: true}
	podRes   = resources.Resource{Version: "v1", Plural: "pods", Kind: "Pod", Namespaced: true}
)

func fn(context.Context, *kwargs.Changing) (any, error) { return nil, nil }
func evFn(context.Context, *kwargs.Event) error         { return nil }

func TestAddChangingValidates(t *testing.T) {
	for _, tt := range []struct {
		name    string
		h       ChangingHandler
		wantErr string
	}{
		{"valid", ChangingHandler{ID: "a", Selector: examples, Reasons: []causes.Reason{causes.Create}, Fn: fn}, ""},
		{"no id", ChangingHandler{Selector: examples, Reasons: []causes.Reason{causes.Create}, Fn: fn}, "handler has no id"},
		{"no function", ChangingHandler{ID: "a", Reasons: []causes.Reason{causes.Create}}, `handler "a" has no function`},
		{"no reasons", ChangingHandler{ID: "a", Fn: fn}, `handler "a" has no reasons`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := New().AddChanging(tt.h)
			if (err == nil) != (tt.wantErr == "") || (err != nil && err.Error() != tt.wantErr) {
				t.Errorf("AddChanging() = %v, want %q", err, tt.wantErr)
			}
		})
	}
	r := New()
	h := ChangingHandler{ID: "a", Selector: examples, Reasons: []causes.Reason{causes.Create}, Fn: fn}
	if err := r.AddChanging(h); err != nil {
		t.Fatal(err)
	}
	if err := r.AddChanging(h); err == nil || !strings.Contains(err.Error(), "registered twice") {
		t.Errorf("a duplicate = %v, want an error", err)
	}
	h.Selector = pods
	if err := r.AddChanging(h); err != nil {
		t.Errorf("the same id for another resource = %v, want no error", err)
	}
}

// TestAddChangingStackedOneID: Kopf's decorators stacked on one function
// with one id (and other options) are registrations of that id, accepted
// for one Func and distinct reasons; one id for two functions is not.
func TestAddChangingStackedOneID(t *testing.T) {
	reg := func(f string, retries int, reasons ...causes.Reason) ChangingHandler {
		return ChangingHandler{ID: "x", Selector: examples, Reasons: reasons, Fn: fn, Func: f, Retries: retries}
	}
	for _, tt := range []struct {
		name    string
		first   ChangingHandler
		second  ChangingHandler
		wantErr string
	}{
		{"one function, other reasons", reg("op.F", 3, causes.Create), reg("op.F", 0, causes.Update), ""},
		{"one function, several reasons", reg("op.F", 3, causes.Create, causes.Resume), reg("op.F", 0, causes.Update, causes.Delete), ""},
		{"one function, a reason in common", reg("op.F", 3, causes.Create, causes.Resume), reg("op.F", 0, causes.Resume),
			`handler "x" is registered twice for kopf.dev/v1/kopfexamples`},
		{"two functions", reg("op.F", 3, causes.Create), reg("op.G", 0, causes.Update),
			`handler "x" is registered twice for kopf.dev/v1/kopfexamples, by op.F and by op.G: one id is one function's`},
		{"unnamed functions", reg("", 3, causes.Create), reg("", 0, causes.Update),
			`handler "x" is registered twice for kopf.dev/v1/kopfexamples`},
		{"a named and an unnamed function", reg("op.F", 3, causes.Create), reg("", 0, causes.Update),
			`handler "x" is registered twice for kopf.dev/v1/kopfexamples, by op.F and by an unnamed function: one id is one function's`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := New()
			if err := r.AddChanging(tt.first); err != nil {
				t.Fatal(err)
			}
			err := r.AddChanging(tt.second)
			if (err == nil) != (tt.wantErr == "") || (err != nil && err.Error() != tt.wantErr) {
				t.Fatalf("AddChanging() = %v, want %q", err, tt.wantErr)
			}
			if err != nil {
				return
			}
			for _, reason := range tt.second.Reasons { // each reason gets its own registration's options
				got := r.ChangingHandlers(exRes, reason)
				if len(got) != 1 || got[0].ID != "x" || got[0].Retries != tt.second.Retries {
					t.Errorf("ChangingHandlers(%s) = %v, want the second registration of x", reason, got)
				}
			}
		})
	}
}

func TestAddEventValidates(t *testing.T) {
	r := New()
	for _, tt := range []struct {
		h       EventHandler
		wantErr string
	}{
		{EventHandler{Fn: evFn}, "handler has no id"},
		{EventHandler{ID: "e"}, `handler "e" has no function`},
		{EventHandler{ID: "e", Selector: examples, Fn: evFn}, ""},
		{EventHandler{ID: "e", Selector: examples, Fn: evFn}, `handler "e" is registered twice for kopf.dev/v1/kopfexamples`},
	} {
		err := r.AddEvent(tt.h)
		if (err == nil) != (tt.wantErr == "") || (err != nil && err.Error() != tt.wantErr) {
			t.Errorf("AddEvent(%q) = %v, want %q", tt.h.ID, err, tt.wantErr)
		}
	}
}

func ids[T any](hs []*T, id func(*T) string) []string {
	var out []string
	for _, h := range hs {
		out = append(out, id(h))
	}
	return out
}

func TestQueries(t *testing.T) {
	r := New()
	for _, h := range []ChangingHandler{
		{ID: "create", Selector: examples, Reasons: []causes.Reason{causes.Create}, Fn: fn},
		{ID: "both", Selector: examples, Reasons: []causes.Reason{causes.Create, causes.Update}, Fn: fn},
		{ID: "field", Selector: examples, Reasons: []causes.Reason{causes.Update}, Fn: fn, Field: []string{"spec", "x"}, FieldHandler: true},
		{ID: "pod", Selector: pods, Reasons: []causes.Reason{causes.Create}, Fn: fn, Field: []string{"status", "phase"}},
	} {
		if err := r.AddChanging(h); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.AddEvent(EventHandler{ID: "ev", Selector: resources.Selector{Name: "configmaps"}, Fn: evFn}); err != nil {
		t.Fatal(err)
	}
	changingID := func(h *ChangingHandler) string { return h.ID }
	for _, tt := range []struct {
		res    resources.Resource
		reason causes.Reason
		want   []string
	}{
		{exRes, causes.Create, []string{"create", "both"}},
		{exRes, causes.Update, []string{"both", "field"}},
		{exRes, causes.Delete, nil},
		{podRes, causes.Create, []string{"pod"}},
	} {
		if got := ids(r.ChangingHandlers(tt.res, tt.reason), changingID); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ChangingHandlers(%s, %s) = %v, want %v", tt.res.Plural, tt.reason, got, tt.want)
		}
	}
	if got := r.ExtraFields(exRes); !reflect.DeepEqual(got, [][]string{{"spec", "x"}}) {
		t.Errorf("ExtraFields = %v", got)
	}
	if !r.HasChanging(exRes) || !r.HasChanging(podRes) {
		t.Errorf("HasChanging is false for a served resource")
	}
	cms := resources.Resource{Version: "v1", Plural: "configmaps", Kind: "ConfigMap"}
	if r.HasChanging(cms) {
		t.Errorf("HasChanging is true for a resource with event handlers only")
	}
	if got := ids(r.EventHandlers(cms), func(h *EventHandler) string { return h.ID }); !reflect.DeepEqual(got, []string{"ev"}) {
		t.Errorf("EventHandlers = %v", got)
	}
	if got := r.Selectors(); !reflect.DeepEqual(got, []resources.Selector{examples, pods, {Name: "configmaps"}}) {
		t.Errorf("Selectors = %v", got)
	}
}

func TestHasCallbacks(t *testing.T) {
	cb := filters.Func(func(any, bool, *kwargs.Base) bool { return true })
	plain := filters.IsEqual("x")
	for _, tt := range []struct {
		name string
		c    ChangingHandler
		e    EventHandler
		w    WebhookHandler
		i    IndexHandler
		want bool
	}{
		{"none", ChangingHandler{}, EventHandler{}, WebhookHandler{}, IndexHandler{}, false},
		{"plain filters", ChangingHandler{Filter: filters.Filter{Labels: map[string]filters.Matcher{"a": filters.IsPresent()}}},
			EventHandler{Filter: filters.Filter{Value: &plain}}, WebhookHandler{Filter: filters.Filter{Annotations: map[string]filters.Matcher{"a": filters.IsAbsent()}}},
			IndexHandler{Filter: filters.Filter{Labels: map[string]filters.Matcher{"a": filters.IsEqual("b")}}}, false},
		{"when", ChangingHandler{When: func(*kwargs.Changing) bool { return true }}, EventHandler{When: func(*kwargs.Event) bool { return true }},
			WebhookHandler{When: func(*kwargs.Admission) bool { return true }}, IndexHandler{When: func(*kwargs.Index) bool { return true }}, true},
		{"filter", ChangingHandler{Filter: filters.Filter{Value: &cb}}, EventHandler{Filter: filters.Filter{New: &cb}},
			WebhookHandler{Filter: filters.Filter{Labels: map[string]filters.Matcher{"a": cb}}}, IndexHandler{Filter: filters.Filter{Annotations: map[string]filters.Matcher{"a": cb}}}, true},
	} {
		if got := tt.c.HasCallbacks(); got != tt.want {
			t.Errorf("%s: ChangingHandler.HasCallbacks() = %v", tt.name, got)
		}
		if got := tt.e.HasCallbacks(); got != tt.want {
			t.Errorf("%s: EventHandler.HasCallbacks() = %v", tt.name, got)
		}
		if got := tt.w.HasCallbacks(); got != tt.want {
			t.Errorf("%s: WebhookHandler.HasCallbacks() = %v", tt.name, got)
		}
		if got := tt.i.HasCallbacks(); got != tt.want {
			t.Errorf("%s: IndexHandler.HasCallbacks() = %v", tt.name, got)
		}
	}
}

func TestSubhandler(t *testing.T) {
	if err := Subhandler(context.Background(), ChangingHandler{ID: "a", Fn: fn}); !errors.Is(err, ErrNotInHandler) {
		t.Errorf("outside a handler: %v, want ErrNotInHandler", err)
	}
	ctx, subs := WithSubhandlers(context.Background())
	for _, tt := range []struct {
		h       ChangingHandler
		wantErr string
	}{
		{ChangingHandler{ID: "a", Fn: fn}, ""},
		{ChangingHandler{ID: "b", Fn: fn}, ""},
		{ChangingHandler{ID: "a", Fn: fn}, "sub-handler a is registered twice"},
		{ChangingHandler{Fn: fn}, "a sub-handler needs an id and a function"},
		{ChangingHandler{ID: "c"}, "a sub-handler needs an id and a function"},
	} {
		err := Subhandler(ctx, tt.h)
		if (err == nil) != (tt.wantErr == "") || (err != nil && err.Error() != tt.wantErr) {
			t.Errorf("Subhandler(%q) = %v, want %q", tt.h.ID, err, tt.wantErr)
		}
	}
	list := subs.List()
	if got := ids(list, func(h *ChangingHandler) string { return h.ID }); !reflect.DeepEqual(got, []string{"a", "b"}) {
		t.Errorf("List() = %v", got)
	}
	list[0] = nil
	if subs.List()[0] == nil {
		t.Errorf("List() returns the collector's own slice")
	}
}

// AddReconcile refuses incomplete or duplicate handlers and filters that
// need a field; the resource of a reconcile handler is among the
// Selectors, so that it is watched.
func TestAddReconcile(t *testing.T) {
	fn := ReconcileFunc(func(context.Context, kwargs.Reconcile) (ReconcileResult, error) { return ReconcileResult{}, nil })
	sel := resources.Selector{Group: "kopf.dev", Name: "kopfexamples"}
	for _, tt := range []struct {
		name string
		h    ReconcileHandler
	}{
		{"no id", ReconcileHandler{Selector: sel, Fn: fn}},
		{"no fn", ReconcileHandler{ID: "a", Selector: sel}},
		{"negative resync", ReconcileHandler{ID: "a", Selector: sel, Fn: fn, Resync: -1}},
		{"value filter", ReconcileHandler{ID: "a", Selector: sel, Fn: fn, Filter: filters.Filter{Value: &filters.Matcher{}}}},
		{"empty watch", ReconcileHandler{ID: "a", Selector: sel, Fn: fn, Watches: []Watch{{}}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if err := New().AddReconcile(tt.h); err == nil {
				t.Error("no error")
			}
		})
	}
	r := New()
	h := ReconcileHandler{ID: "a", Selector: sel, Fn: fn, Finalize: true}
	if err := r.AddReconcile(h); err != nil {
		t.Fatal(err)
	}
	if err := r.AddReconcile(h); err == nil {
		t.Error("a duplicate is accepted")
	}
	if got := r.Selectors(); len(got) != 1 || got[0] != sel {
		t.Errorf("Selectors() = %v", got)
	}
	res := resources.Resource{Group: "kopf.dev", Version: "v1", Plural: "kopfexamples"}
	if !r.HasReconcile(res) || !r.ReconcileFinalizes(res) || len(r.ReconcileAll()) != 1 {
		t.Error("the handler is not found for its resource")
	}
}
