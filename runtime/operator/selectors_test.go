package operator

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/kopf-go/kopf/runtime/body"
	"github.com/kopf-go/kopf/runtime/causes"
	"github.com/kopf-go/kopf/runtime/filters"
	"github.com/kopf-go/kopf/runtime/kwargs"
	"github.com/kopf-go/kopf/runtime/registry"
	"github.com/kopf-go/kopf/runtime/resources"
	"github.com/kopf-go/kopf/runtime/settings"
)

func labelled(ms map[string]filters.Matcher) filters.Filter { return filters.Filter{Labels: ms} }

// The inferred selector keeps only what every handler requires of the
// labels, widened to admit what any of them matches.
func TestInferLabels(t *testing.T) {
	x, y := filters.IsEqual("x"), filters.IsEqual("y")
	callback := filters.Func(func(any, bool, *kwargs.Base) bool { return true })
	tests := []struct {
		name    string
		filters []filters.Filter
		want    string
	}{
		{"no handlers", nil, ""},
		{"one value", []filters.Filter{labelled(map[string]filters.Matcher{"app": x})}, "app=x"},
		{"present", []filters.Filter{labelled(map[string]filters.Matcher{"app": filters.IsPresent()})}, "app"},
		{"two keys", []filters.Filter{labelled(map[string]filters.Matcher{"app": x, "tier": y})}, "app=x,tier=y"},
		{"the same value twice", []filters.Filter{labelled(map[string]filters.Matcher{"app": x}), labelled(map[string]filters.Matcher{"app": x})}, "app=x"},
		{"two values: a set", []filters.Filter{labelled(map[string]filters.Matcher{"app": y}), labelled(map[string]filters.Matcher{"app": x})}, "app in (x,y)"},
		{"a value and present: present", []filters.Filter{labelled(map[string]filters.Matcher{"app": x}), labelled(map[string]filters.Matcher{"app": filters.IsPresent()})}, "app"},
		{"only the common keys", []filters.Filter{labelled(map[string]filters.Matcher{"app": x, "tier": y}), labelled(map[string]filters.Matcher{"app": x})}, "app=x"},
		{"one handler without filters: none", []filters.Filter{labelled(map[string]filters.Matcher{"app": x}), {}}, ""},
		{"absent: nothing required", []filters.Filter{labelled(map[string]filters.Matcher{"app": filters.IsAbsent()})}, ""},
		{"callback: nothing required", []filters.Filter{labelled(map[string]filters.Matcher{"app": callback})}, ""},
		{"a callback beside a value", []filters.Filter{labelled(map[string]filters.Matcher{"app": x, "tier": callback})}, "app=x"},
		{"annotations: nothing required", []filters.Filter{{Annotations: map[string]filters.Matcher{"app": x}}}, ""},
		{"a value that is not a string", []filters.Filter{labelled(map[string]filters.Matcher{"app": filters.IsEqual(1)})}, ""},
		{"an invalid label value", []filters.Filter{labelled(map[string]filters.Matcher{"app": filters.IsEqual("not a label")})}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := labels.NewSelector().Add(inferLabels(tt.filters)...).String()
			if got != tt.want {
				t.Errorf("inferred %q, want %q", got, tt.want)
			}
		})
	}
}

var examples = resources.Resource{Group: "kopf.dev", Version: "v1", Plural: "kopfexamples", Namespaced: true}

// nopIndex is an index function that indexes nothing.
type nopIndex struct{}

func (nopIndex) Index(context.Context, *kwargs.Index, string) error { return nil }
func (nopIndex) Discard(string)                                     {}

// Every kind of handler of the resource is an input: one without a label
// filter, of any kind, leaves the watch without an inferred selector.
func TestSelectorsOfEveryKindOfHandler(t *testing.T) {
	sel := resources.Selector{Group: "kopf.dev", Version: "v1", Name: "kopfexamples"}
	app := filters.Filter{Labels: map[string]filters.Matcher{"app": filters.IsEqual("x")}}
	kinds := map[string]func(*registry.Registry, filters.Filter) error{
		"changing": func(r *registry.Registry, f filters.Filter) error {
			return r.AddChanging(registry.ChangingHandler{ID: "c2", Selector: sel, Reasons: []causes.Reason{causes.Resume}, Filter: f,
				Fn: func(context.Context, *kwargs.Changing) (any, error) { return nil, nil }})
		},
		"event": func(r *registry.Registry, f filters.Filter) error {
			return r.AddEvent(registry.EventHandler{ID: "e", Selector: sel, Filter: f, Fn: func(context.Context, *kwargs.Event) error { return nil }})
		},
		"daemon": func(r *registry.Registry, f filters.Filter) error {
			return r.AddDaemon(registry.DaemonHandler{ID: "d", Selector: sel, Filter: f, Fn: func(context.Context, *kwargs.Daemon) (any, error) { return nil, nil }})
		},
		"timer": func(r *registry.Registry, f filters.Filter) error {
			return r.AddTimer(registry.TimerHandler{ID: "t", Selector: sel, Filter: f, Interval: time.Second, Fn: func(context.Context, *kwargs.Timer) (any, error) { return nil, nil }})
		},
		"index": func(r *registry.Registry, f filters.Filter) error {
			return r.AddIndex(registry.IndexHandler{ID: "i", Selector: sel, Filter: f, Fn: nopIndex{}})
		},
		"reconcile": func(r *registry.Registry, f filters.Filter) error {
			return r.AddReconcile(registry.ReconcileHandler{ID: "r", Selector: sel, Filter: f,
				Fn: func(context.Context, *kwargs.Reconcile) (registry.ReconcileResult, error) {
					return registry.ReconcileResult{}, nil
				}})
		},
	}
	for name, add := range kinds {
		for _, tt := range []struct {
			other filters.Filter
			want  string
		}{{app, "app=x"}, {filters.Filter{}, ""}} {
			reg := registry.New()
			err := reg.AddChanging(registry.ChangingHandler{ID: "c", Selector: sel, Reasons: []causes.Reason{causes.Delete}, Filter: app,
				Fn: func(context.Context, *kwargs.Changing) (any, error) { return nil, nil }})
			if err != nil {
				t.Fatal(err)
			}
			if err := add(reg, tt.other); err != nil {
				t.Fatal(err)
			}
			ws, err := selectorsOf(reg, examples, settings.Default().Watching)
			if err != nil {
				t.Fatal(err)
			}
			if got := ws.labelSelector(); got != tt.want {
				t.Errorf("with a %s handler filtered by %v: %q, want %q", name, tt.other.Labels, got, tt.want)
			}
		}
	}
}

// Explicit selectors are ANDed with the inferred one; the inference can be
// switched off.
func TestSelectorsExplicit(t *testing.T) {
	reg := registry.New()
	err := reg.AddChanging(registry.ChangingHandler{ID: "c", Selector: resources.Selector{Name: "kopfexamples"}, Reasons: []causes.Reason{causes.Create},
		Filter: filters.Filter{Labels: map[string]filters.Matcher{"app": filters.IsEqual("x")}},
		Fn:     func(context.Context, *kwargs.Changing) (any, error) { return nil, nil }})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name           string
		infer          bool
		selectors      map[string]settings.Selector
		labels, fields string
		describe       string
	}{
		{"inferred", true, nil, "app=x", "", "Watching kopfexamples.v1.kopf.dev with the label selector 'app=x' (inferred from the handlers' filters)."},
		{"off", false, nil, "", "", ""},
		{"explicit, by plural.group", false, map[string]settings.Selector{"kopfexamples.kopf.dev": {Labels: "tier"}}, "tier", "",
			"Watching kopfexamples.v1.kopf.dev with the label selector 'tier' (set in settings.Watching.Selectors)."},
		{"both", true, map[string]settings.Selector{"kopfexamples": {Labels: "tier", Fields: "metadata.name!=z"}}, "app=x,tier", "metadata.name!=z",
			"Watching kopfexamples.v1.kopf.dev with the label selector 'app=x,tier' and the field selector 'metadata.name!=z' (inferred from the handlers' filters; set in settings.Watching.Selectors)."},
		{"another resource's", true, map[string]settings.Selector{"pods": {Labels: "tier"}}, "app=x", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws, err := selectorsOf(reg, examples, settings.Watching{InferSelectors: tt.infer, Selectors: tt.selectors})
			if err != nil {
				t.Fatal(err)
			}
			if ws.labelSelector() != tt.labels || ws.fieldSelector() != tt.fields {
				t.Errorf("selectors %q and %q, want %q and %q", ws.labelSelector(), ws.fieldSelector(), tt.labels, tt.fields)
			}
			if tt.describe != "" && ws.describe(examples.String()) != tt.describe {
				t.Errorf("described as\n%s\nwant\n%s", ws.describe(examples.String()), tt.describe)
			}
		})
	}
	if _, err := selectorsOf(reg, examples, settings.Watching{Selectors: map[string]settings.Selector{"kopfexamples": {Labels: "a in b"}}}); err == nil {
		t.Errorf("a malformed selector is accepted")
	}
}

// selects tells an object that the selectors select by its body, fields
// included.
func TestSelects(t *testing.T) {
	ws, err := selectorsOf(registry.New(), examples, settings.Watching{Selectors: map[string]settings.Selector{
		"kopfexamples": {Labels: "app=x", Fields: "metadata.namespace!=kube-system,spec.phase=on"}}})
	if err != nil {
		t.Fatal(err)
	}
	obj := func(ns string, labels map[string]any, phase any) body.Body {
		b := body.Body{"metadata": map[string]any{"namespace": ns, "name": "a", "labels": labels}, "spec": map[string]any{}}
		if phase != nil {
			b["spec"].(map[string]any)["phase"] = phase
		}
		return b
	}
	tests := []struct {
		name string
		b    body.Body
		want bool
	}{
		{"selected", obj("ns", map[string]any{"app": "x"}, "on"), true},
		{"another label value", obj("ns", map[string]any{"app": "y"}, "on"), false},
		{"no labels", obj("ns", nil, "on"), false},
		{"an excluded namespace", obj("kube-system", map[string]any{"app": "x"}, "on"), false},
		{"another field value", obj("ns", map[string]any{"app": "x"}, "off"), false},
		{"no such field", obj("ns", map[string]any{"app": "x"}, nil), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ws.selects(tt.b); got != tt.want {
				t.Errorf("selects: %v, want %v", got, tt.want)
			}
		})
	}
}
