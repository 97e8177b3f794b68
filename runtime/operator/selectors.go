package operator

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"

	"github.com/kopf-go/kopf/runtime/body"
	"github.com/kopf-go/kopf/runtime/causes"
	"github.com/kopf-go/kopf/runtime/filters"
	"github.com/kopf-go/kopf/runtime/registry"
	"github.com/kopf-go/kopf/runtime/resources"
	"github.com/kopf-go/kopf/runtime/settings"
)

// watchSelectors are the selectors of a resource's watches (docs/filters.md,
// "Server-side selectors"): the label selector inferred from its handlers'
// filters (inferLabels) ANDed with the explicit one of
// settings.Watching.Selectors, and the explicit field selector. The zero
// value selects everything: the watches then send no selector.
type watchSelectors struct {
	labels   labels.Selector // nil: none
	fields   fields.Selector // nil: none
	inferred bool            // some of labels is inferred from the filters
	explicit bool            // some of labels or fields is the settings'
}

// any reports whether the watches send a selector.
func (ws watchSelectors) any() bool { return ws.labels != nil || ws.fields != nil }

// labelSelector and fieldSelector are the selectors in the syntax of
// metav1.ListOptions ("" for none).
func (ws watchSelectors) labelSelector() string {
	if ws.labels == nil {
		return ""
	}
	return ws.labels.String()
}

func (ws watchSelectors) fieldSelector() string {
	if ws.fields == nil {
		return ""
	}
	return ws.fields.String()
}

// selects reports whether the selectors select an object by its body: the
// reactor's Selects, which tells an object that left the selectors from
// a deleted one. A field of the field selector is read from the body at
// its dotted path (metadata.name, spec.x), as the API server reads it.
func (ws watchSelectors) selects(b body.Body) bool {
	if ws.labels != nil && !ws.labels.Matches(labels.Set(b.Meta().Labels())) {
		return false
	}
	if ws.fields == nil {
		return true
	}
	set := fields.Set{}
	for _, req := range ws.fields.Requirements() {
		if v, ok := lookup(b, strings.Split(req.Field, ".")); ok {
			set[req.Field] = fmt.Sprint(v)
		}
	}
	return ws.fields.Matches(set)
}

func lookup(b body.Body, path []string) (any, bool) {
	var cur any = map[string]any(b)
	for _, p := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = m[p]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// describe is the INFO line that says which selectors a watch uses.
func (ws watchSelectors) describe(where string) string {
	var parts []string
	if ws.labels != nil {
		parts = append(parts, fmt.Sprintf("the label selector '%s'", ws.labels))
	}
	if ws.fields != nil {
		parts = append(parts, fmt.Sprintf("the field selector '%s'", ws.fields))
	}
	var from []string
	if ws.inferred {
		from = append(from, "inferred from the handlers' filters")
	}
	if ws.explicit {
		from = append(from, "set in settings.Watching.Selectors")
	}
	return fmt.Sprintf("Watching %s with %s (%s).", where, strings.Join(parts, " and "), strings.Join(from, "; "))
}

// selectorsOf builds the selectors of res's watches: the inferred label
// requirements (unless settings.Watching.InferSelectors is off) ANDed with
// the explicit selectors of the resource.
func selectorsOf(reg *registry.Registry, res resources.Resource, ws settings.Watching) (watchSelectors, error) {
	var out watchSelectors
	explicit, ok := explicitSelector(ws.Selectors, res)
	if ok && explicit.Labels != "" {
		sel, err := labels.Parse(explicit.Labels)
		if err != nil {
			return out, fmt.Errorf("the label selector of %s in settings.Watching.Selectors: %w", res, err)
		}
		out.labels, out.explicit = sel, true
	}
	if ok && explicit.Fields != "" {
		sel, err := fields.ParseSelector(explicit.Fields)
		if err != nil {
			return out, fmt.Errorf("the field selector of %s in settings.Watching.Selectors: %w", res, err)
		}
		out.fields, out.explicit = sel, true
	}
	if !ws.InferSelectors {
		return out, nil
	}
	if reqs := inferLabels(handlerFilters(reg, res)); len(reqs) > 0 {
		if out.labels == nil {
			out.labels = labels.NewSelector()
		}
		out.labels, out.inferred = out.labels.Add(reqs...), true
	}
	return out, nil
}

// explicitSelector finds the resource's entry of settings.Watching.Selectors:
// by its full name (kopfexamples.v1.kopf.dev), plural.group
// (kopfexamples.kopf.dev) or plural alone (pods).
func explicitSelector(sels map[string]settings.Selector, res resources.Resource) (settings.Selector, bool) {
	names := []string{res.String(), res.Plural}
	if res.Group != "" {
		names = append(names, res.Plural+"."+res.Group)
	}
	for _, name := range names {
		if s, ok := sels[name]; ok {
			return s, true
		}
	}
	return settings.Selector{}, false
}

// handlerFilters are the filters of every handler that watches res, one
// per handler: the input of inferLabels. A kind of handler that watches a
// resource is one more loop here; a handler missing from it would be
// starved by the inferred selector.
func handlerFilters(reg *registry.Registry, res resources.Resource) []filters.Filter {
	var out []filters.Filter
	var changing []*registry.ChangingHandler
	for _, reason := range []causes.Reason{causes.Create, causes.Update, causes.Delete, causes.Resume} {
		for _, h := range reg.ChangingHandlers(res, reason) {
			if !slices.Contains(changing, h) {
				changing = append(changing, h)
				out = append(out, h.Filter)
			}
		}
	}
	for _, h := range reg.EventHandlers(res) {
		out = append(out, h.Filter)
	}
	for _, h := range reg.DaemonHandlers(res) {
		out = append(out, h.Filter)
	}
	for _, h := range reg.TimerHandlers(res) {
		out = append(out, h.Filter)
	}
	for _, h := range reg.IndexHandlers(res) {
		out = append(out, h.Filter)
	}
	for _, h := range reg.ReconcileHandlers(res) {
		out = append(out, h.Filter)
	}
	return out
}

// inferLabels returns the label requirements that every one of the
// filters implies, so that a label selector made of them never hides an
// object from a handler that would match it: a key that each filter
// requires (a value, or kopf.PRESENT), selected as "key" if any filter
// accepts any value, else as "key in (the values of all the filters)".
// ABSENT, callbacks and values that are not strings (or not valid label
// values) require nothing here; a key that one filter does not require
// is left out, and so is everything when there are no filters.
func inferLabels(fs []filters.Filter) labels.Requirements {
	if len(fs) == 0 {
		return nil
	}
	common := required(fs[0])
	for _, f := range fs[1:] {
		req := required(f)
		for key, values := range common {
			other, ok := req[key]
			switch {
			case !ok:
				delete(common, key)
			case values == nil || other == nil:
				common[key] = nil
			default:
				common[key] = append(values, other...)
			}
		}
	}
	var out labels.Requirements
	for _, key := range sortedKeys(common) {
		values := common[key]
		op, vals := selection.Exists, []string(nil)
		if values != nil {
			slices.Sort(values)
			op, vals = selection.In, slices.Compact(values)
			if len(vals) == 1 {
				op = selection.Equals
			}
		}
		if r, err := labels.NewRequirement(key, op, vals); err == nil {
			out = append(out, *r)
		}
	}
	return out
}

// required is what one filter requires of the labels: a key's values, or
// nil for any value (kopf.PRESENT).
func required(f filters.Filter) map[string][]string {
	out := map[string][]string{}
	for key, m := range f.Labels {
		switch m.Op {
		case filters.Present:
			out[key] = nil
		case filters.Equal:
			if s, ok := m.Value.(string); ok {
				out[key] = []string{s}
			}
		}
	}
	return out
}

func sortedKeys(m map[string][]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
