package operator

import (
	"fmt"
	"math"
	"slices"
	"strconv"
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
// settings.Watching.Selectors, and the field selector inferred from them
// (inferFields) ANDed with the explicit one. The zero value selects
// everything: the watches then send no selector.
type watchSelectors struct {
	labels labels.Selector // nil: none
	fields fields.Selector // nil: none
	// Where each part comes from: the handlers' filters (inferred), the
	// settings (explicit), or both.
	labelsFrom, fieldsFrom origin
}

// origin says where a selector comes from.
type origin struct{ inferred, explicit bool }

func (o origin) String() string {
	var from []string
	if o.inferred {
		from = append(from, "inferred from the handlers' filters")
	}
	if o.explicit {
		from = append(from, "set in settings.Watching.Selectors")
	}
	return strings.Join(from, "; ")
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
			set[req.Field] = fieldString(v)
		}
	}
	return ws.fields.Matches(set)
}

// fieldString is a field's value as the API server compares it with a
// field selector's: a CRD's selectable field is rendered with fmt.Sprint
// from the object as decoded (integers as int64), and null as "". A JSON
// number decoded here as a float64 is written as the integer it is.
func fieldString(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	default:
		return fmt.Sprint(v)
	}
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

// describe is the INFO line that says which selectors a watch uses and
// where they come from: once at the end when both come from the same
// place (or there is one), else after each.
func (ws watchSelectors) describe(where string) string {
	switch {
	case ws.fields == nil:
		return fmt.Sprintf("Watching %s with the label selector '%s' (%s).", where, ws.labels, ws.labelsFrom)
	case ws.labels == nil:
		return fmt.Sprintf("Watching %s with the field selector '%s' (%s).", where, ws.fields, ws.fieldsFrom)
	case ws.labelsFrom == ws.fieldsFrom:
		return fmt.Sprintf("Watching %s with the label selector '%s' and the field selector '%s' (%s).", where, ws.labels, ws.fields, ws.labelsFrom)
	default:
		return fmt.Sprintf("Watching %s with the label selector '%s' (%s) and the field selector '%s' (%s).", where, ws.labels, ws.labelsFrom, ws.fields, ws.fieldsFrom)
	}
}

// selectorsOf builds the selectors of res's watches: the inferred label
// and field requirements (unless settings.Watching.InferSelectors is off)
// ANDed with the explicit selectors of the resource.
func selectorsOf(reg *registry.Registry, res resources.Resource, ws settings.Watching) (watchSelectors, error) {
	var out watchSelectors
	explicit, ok := explicitSelector(ws.Selectors, res)
	if ok && explicit.Labels != "" {
		sel, err := labels.Parse(explicit.Labels)
		if err != nil {
			return out, fmt.Errorf("the label selector of %s in settings.Watching.Selectors: %w", res, err)
		}
		out.labels, out.labelsFrom.explicit = sel, true
	}
	if ok && explicit.Fields != "" {
		sel, err := fields.ParseSelector(explicit.Fields)
		if err != nil {
			return out, fmt.Errorf("the field selector of %s in settings.Watching.Selectors: %w", res, err)
		}
		out.fields, out.fieldsFrom.explicit = sel, true
	}
	if !ws.InferSelectors {
		return out, nil
	}
	hs := handlersOf(reg, res)
	fs := make([]filters.Filter, len(hs))
	for i, h := range hs {
		fs[i] = h.filter
	}
	if reqs := inferLabels(fs); len(reqs) > 0 {
		if out.labels == nil {
			out.labels = labels.NewSelector()
		}
		out.labels, out.labelsFrom.inferred = out.labels.Add(reqs...), true
	}
	if term := inferFields(hs, selectable(reg, res)); term != nil {
		if out.fields != nil {
			term = fields.AndSelectors(out.fields, term)
		}
		out.fields, out.fieldsFrom.inferred = term, true
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

// served is one handler of a resource as the inference reads it: its
// filters, its field= (nil: none), and whether value= matches either side
// of a change (on.update and on.field: Kopf's semantics), so that it
// requires nothing of the object as it is.
type served struct {
	filter   filters.Filter
	field    []string
	updating bool
}

// handlersOf are the handlers that watch res, one entry per handler: the
// input of inferLabels and inferFields. A kind of handler that watches a
// resource is one more loop here; a handler missing from it would be
// starved by the inferred selectors.
func handlersOf(reg *registry.Registry, res resources.Resource) []served {
	var out []served
	var changing []*registry.ChangingHandler
	for _, reason := range []causes.Reason{causes.Create, causes.Update, causes.Delete, causes.Resume} {
		for _, h := range reg.ChangingHandlers(res, reason) {
			if !slices.Contains(changing, h) {
				changing = append(changing, h)
				updating := h.FieldHandler || slices.Contains(h.Reasons, causes.Update)
				out = append(out, served{h.Filter, h.Field, updating})
			}
		}
	}
	for _, h := range reg.EventHandlers(res) {
		out = append(out, served{filter: h.Filter, field: h.Field})
	}
	for _, h := range reg.DaemonHandlers(res) {
		out = append(out, served{filter: h.Filter, field: h.Field})
	}
	for _, h := range reg.TimerHandlers(res) {
		out = append(out, served{filter: h.Filter, field: h.Field})
	}
	for _, h := range reg.IndexHandlers(res) {
		out = append(out, served{filter: h.Filter, field: h.Field})
	}
	for _, h := range reg.ReconcileHandlers(res) {
		out = append(out, served{filter: h.Filter}) // no field=: no value filters
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

// selectable are the fields of res that its API server selects on:
// metadata.name, metadata.namespace if it is namespaced, and those
// declared in the registry (a CRD's selectableFields, from kopf-gen or a
// hand-written registration).
func selectable(reg *registry.Registry, res resources.Resource) []string {
	out := []string{"metadata.name"}
	if res.Namespaced {
		out = append(out, "metadata.namespace")
	}
	return append(out, reg.SelectableFields(res)...)
}

// inferFields returns the field selector "path=value" that every handler
// implies, or nil: each one's field= is the same selectable path, and each
// requires the same exact value of it as the object is (value=, or new=;
// for an updating handler, value= matches either side of the change and
// requires nothing). A field selector has no "in", so two handlers that
// require two values require nothing here; PRESENT and ABSENT are left out
// too: the API server compares a missing field as "", so "path!=" would
// hide an object whose field is present but empty (or null) from a
// handler that matches it. Callbacks require nothing, and neither does a
// value that the API server cannot render (not a string, a boolean or an
// integer).
func inferFields(hs []served, selectable []string) fields.Selector {
	var path, value string
	for i, h := range hs {
		p, v, ok := requiredField(h)
		if !ok || !slices.Contains(selectable, p) || i > 0 && (p != path || v != value) {
			return nil
		}
		path, value = p, v
	}
	if path == "" {
		return nil
	}
	return fields.OneTermEqualSelector(path, value)
}

// requiredField is the field and the value that one handler requires of
// the object as it is, rendered as the API server renders it.
func requiredField(h served) (path, value string, ok bool) {
	if len(h.field) == 0 || slices.ContainsFunc(h.field, func(s string) bool { return s == "" || strings.Contains(s, ".") }) {
		return "", "", false
	}
	m := h.filter.New
	if m == nil && !h.updating {
		m = h.filter.Value
	}
	if m == nil || m.Op != filters.Equal {
		return "", "", false
	}
	switch v := m.Value.(type) {
	case string:
		value = v
	case bool:
		value = strconv.FormatBool(v)
	case int:
		value = strconv.Itoa(v)
	case int64:
		value = strconv.FormatInt(v, 10)
	case float64:
		if v != math.Trunc(v) || math.Abs(v) > 1<<53 {
			return "", "", false
		}
		value = strconv.FormatFloat(v, 'f', -1, 64)
	default:
		return "", "", false
	}
	return strings.Join(h.field, "."), value, true
}
