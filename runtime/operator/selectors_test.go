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
			"Watching kopfexamples.v1.kopf.dev with the label selector 'app=x,tier' (inferred from the handlers' filters; set in settings.Watching.Selectors) and the field selector 'metadata.name!=z' (set in settings.Watching.Selectors)."},
		{"fields only", false, map[string]settings.Selector{"kopfexamples": {Fields: "metadata.name!=z"}}, "", "metadata.name!=z",
			"Watching kopfexamples.v1.kopf.dev with the field selector 'metadata.name!=z' (set in settings.Watching.Selectors)."},
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

// The inferred field selector is the one exact value of one selectable
// field that every handler requires of the object as it is.
func TestInferFields(t *testing.T) {
	value := func(v any) *filters.Matcher { m := filters.IsEqual(v); return &m }
	phase := []string{"spec", "phase"}
	on := served{filter: filters.Filter{Value: value("on")}, field: phase}
	callback := filters.Func(func(any, bool, *kwargs.Base) bool { return true })
	selectable := []string{"metadata.name", "metadata.namespace", "spec.phase", "spec.size", "spec.ready"}
	tests := []struct {
		name string
		hs   []served
		want string
	}{
		{"no handlers", nil, ""},
		{"one value", []served{on}, "spec.phase=on"},
		{"the same value twice", []served{on, on}, "spec.phase=on"},
		{"two values: none", []served{on, {filter: filters.Filter{Value: value("off")}, field: phase}}, ""},
		{"one handler without the field: none", []served{on, {}}, ""},
		{"another field: none", []served{on, {filter: filters.Filter{Value: value("on")}, field: []string{"spec", "size"}}}, ""},
		{"not selectable: none", []served{{filter: filters.Filter{Value: value("on")}, field: []string{"spec", "other"}}}, ""},
		{"metadata.namespace", []served{{filter: filters.Filter{Value: value("prod")}, field: []string{"metadata", "namespace"}}}, "metadata.namespace=prod"},
		{"an integer", []served{{filter: filters.Filter{Value: value(3)}, field: []string{"spec", "size"}}}, "spec.size=3"},
		{"an integral float", []served{{filter: filters.Filter{Value: value(3.0)}, field: []string{"spec", "size"}}}, "spec.size=3"},
		{"a fraction: none", []served{{filter: filters.Filter{Value: value(2.5)}, field: []string{"spec", "size"}}}, ""},
		{"a boolean", []served{{filter: filters.Filter{Value: value(true)}, field: []string{"spec", "ready"}}}, "spec.ready=true"},
		{"a map: none", []served{{filter: filters.Filter{Value: value(map[string]any{})}, field: phase}}, ""},
		{"a value to escape", []served{{filter: filters.Filter{Value: value("a,b=c")}, field: phase}}, `spec.phase=a\,b\=c`},
		{"present: none", []served{{filter: filters.Filter{Value: &filters.Matcher{Op: filters.Present}}, field: phase}}, ""},
		{"absent: none", []served{{filter: filters.Filter{Value: &filters.Matcher{Op: filters.Absent}}, field: phase}}, ""},
		{"a callback: none", []served{{filter: filters.Filter{Value: &callback}, field: phase}}, ""},
		{"an update's value=: either side, none", []served{on, {filter: filters.Filter{Value: value("on")}, field: phase, updating: true}}, ""},
		{"an update's new=", []served{on, {filter: filters.Filter{Old: value("off"), New: value("on")}, field: phase, updating: true}}, "spec.phase=on"},
		{"an update's old= alone: none", []served{on, {filter: filters.Filter{Old: value("on")}, field: phase, updating: true}}, ""},
		{"a key with a dot: none", []served{{filter: filters.Filter{Value: value("on")}, field: []string{"metadata", "labels", "a.b"}}}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ""
			if sel := inferFields(tt.hs, selectable); sel != nil {
				got = sel.String()
			}
			if got != tt.want {
				t.Errorf("inferred %q, want %q", got, tt.want)
			}
		})
	}
}

// A field is selectable if it is metadata.name, metadata.namespace of a
// namespaced resource, or declared for the resource's version; the
// inferred field selector is ANDed with the explicit one, and switched off
// with the labels'.
func TestSelectorsOfFields(t *testing.T) {
	sel := resources.Selector{Name: "kopfexamples"}
	fn := func(context.Context, *kwargs.Changing) (any, error) { return nil, nil }
	registered := func(t *testing.T, field []string, declared ...registry.SelectableFields) *registry.Registry {
		t.Helper()
		reg := registry.New()
		m := filters.IsEqual("on")
		err := reg.AddChanging(registry.ChangingHandler{ID: "c", Selector: sel, Reasons: []causes.Reason{causes.Create}, Fn: fn, Field: field,
			Filter: filters.Filter{Labels: map[string]filters.Matcher{"app": filters.IsEqual("x")}, Value: &m}})
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range declared {
			if err := reg.AddSelectableFields(d); err != nil {
				t.Fatal(err)
			}
		}
		return reg
	}
	v1 := registry.SelectableFields{Selector: resources.Selector{Group: "kopf.dev", Version: "v1", Name: "kopfexamples"}, Fields: []string{".spec.phase"}}
	v2 := registry.SelectableFields{Selector: resources.Selector{Group: "kopf.dev", Version: "v2", Name: "kopfexamples"}, Fields: []string{"spec.phase"}}
	cluster := examples
	cluster.Namespaced = false
	tests := []struct {
		name     string
		reg      *registry.Registry
		res      resources.Resource
		ws       settings.Watching
		want     string
		describe string
	}{
		{"declared", registered(t, []string{"spec", "phase"}, v1), examples, settings.Default().Watching, "spec.phase=on",
			"Watching kopfexamples.v1.kopf.dev with the label selector 'app=x' and the field selector 'spec.phase=on' (inferred from the handlers' filters)."},
		{"not declared", registered(t, []string{"spec", "phase"}), examples, settings.Default().Watching, "", ""},
		{"declared for another version", registered(t, []string{"spec", "phase"}, v2), examples, settings.Default().Watching, "", ""},
		{"metadata.namespace", registered(t, []string{"metadata", "namespace"}), examples, settings.Default().Watching, "metadata.namespace=on", ""},
		{"metadata.namespace of a cluster-wide resource", registered(t, []string{"metadata", "namespace"}), cluster, settings.Default().Watching, "", ""},
		{"metadata.name", registered(t, []string{"metadata", "name"}), cluster, settings.Default().Watching, "metadata.name=on", ""},
		{"ANDed with the explicit one", registered(t, []string{"spec", "phase"}, v1), examples,
			settings.Watching{InferSelectors: true, Selectors: map[string]settings.Selector{"kopfexamples": {Fields: "metadata.name!=z"}}}, "metadata.name!=z,spec.phase=on",
			"Watching kopfexamples.v1.kopf.dev with the label selector 'app=x' (inferred from the handlers' filters) and the field selector 'metadata.name!=z,spec.phase=on' (inferred from the handlers' filters; set in settings.Watching.Selectors)."},
		{"inference off", registered(t, []string{"spec", "phase"}, v1), examples, settings.Watching{}, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws, err := selectorsOf(tt.reg, tt.res, tt.ws)
			if err != nil {
				t.Fatal(err)
			}
			if got := ws.fieldSelector(); got != tt.want {
				t.Errorf("field selector %q, want %q", got, tt.want)
			}
			if tt.describe != "" && ws.describe(tt.res.String()) != tt.describe {
				t.Errorf("described as\n%s\nwant\n%s", ws.describe(tt.res.String()), tt.describe)
			}
		})
	}
}

// fieldString renders values as the API server compares them.
func TestFieldString(t *testing.T) {
	for v, want := range map[any]string{nil: "", "on": "on", true: "true", int64(3): "3", 3.0: "3", 1e21: "1000000000000000000000", 2.5: "2.5"} {
		if got := fieldString(v); got != want {
			t.Errorf("fieldString(%#v) = %q, want %q", v, got, want)
		}
	}
}
