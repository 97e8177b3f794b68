// Package filters decides whether a handler applies to an object: Kopf's
// labels=, annotations=, field=, value=, old=, new= and when= filters.
//
// Filters are data, not code, so that the runtime can also use them where
// Kopf cannot (e.g. to compute a webhook's objectSelector); generated code
// fills them from the markers, and callbacks are plain Go functions.
package filters

import (
	"github.com/kopf-go/kopf/runtime/diffs"
	"github.com/kopf-go/kopf/runtime/kwargs"
)

// Op is what a Matcher checks.
type Op int

// The kinds of matchers, as in Kopf: an exact value, kopf.PRESENT,
// kopf.ABSENT, or a callback.
const (
	Equal Op = iota
	Present
	Absent
	Callback
)

// Matcher checks one value: a label, an annotation, or the value at a field.
type Matcher struct {
	Op Op
	// Value is compared with Equal (JSON-equal: numbers by value).
	Value any
	// Fn is called for Callback with the value (nil if absent), whether it
	// is present, and the handler's object arguments.
	Fn func(value any, present bool, kw *kwargs.Base) bool
}

// Match checks a value.
func (m Matcher) Match(value any, present bool, kw *kwargs.Base) bool {
	switch m.Op {
	case Present:
		return present
	case Absent:
		return !present
	case Callback:
		return m.Fn != nil && m.Fn(value, present, kw)
	default:
		return present && diffs.Equal(value, m.Value)
	}
}

// IsEqual returns a matcher of an exact value.
func IsEqual(v any) Matcher { return Matcher{Op: Equal, Value: v} }

// IsPresent returns a matcher of any present value.
func IsPresent() Matcher { return Matcher{Op: Present} }

// IsAbsent returns a matcher of an absent value.
func IsAbsent() Matcher { return Matcher{Op: Absent} }

// Func returns a matcher that calls fn.
func Func(fn func(value any, present bool, kw *kwargs.Base) bool) Matcher {
	return Matcher{Op: Callback, Fn: fn}
}

// Filter is the object-level filter of a handler. The zero Filter matches
// everything.
type Filter struct {
	Labels      map[string]Matcher
	Annotations map[string]Matcher
	// Value, Old and New check the value at the handler's field (see
	// registry). Nil checks nothing.
	Value, Old, New *Matcher
}

// HasCallbacks reports whether checking the filter calls user code: a
// Callback matcher of a label, an annotation, or value=, old=, new=.
func (f *Filter) HasCallbacks() bool {
	for _, ms := range []map[string]Matcher{f.Labels, f.Annotations} {
		for _, m := range ms {
			if m.Op == Callback {
				return true
			}
		}
	}
	for _, m := range []*Matcher{f.Value, f.Old, f.New} {
		if m != nil && m.Op == Callback {
			return true
		}
	}
	return false
}

// MatchMeta checks the labels and annotations of an object.
func (f *Filter) MatchMeta(kw *kwargs.Base) bool {
	return matchMap(f.Labels, kw.Labels, kw) && matchMap(f.Annotations, kw.Annotations, kw)
}

func matchMap(want map[string]Matcher, have map[string]string, kw *kwargs.Base) bool {
	for key, m := range want {
		v, ok := have[key]
		var value any
		if ok {
			value = v
		}
		if !m.Match(value, ok, kw) {
			return false
		}
	}
	return true
}

// MatchValues checks value=, old= and new= against the old and new value at
// the field (present flags say whether they exist). For update-like
// handlers value= matches if either side does (Kopf's semantics: the
// transition belongs to both states); otherwise it checks the new value.
func (f *Filter) MatchValues(old any, oldOK bool, new any, newOK bool, updating bool, kw *kwargs.Base) bool {
	if f.Value != nil {
		ok := f.Value.Match(new, newOK, kw)
		if updating && !ok {
			ok = f.Value.Match(old, oldOK, kw)
		}
		if !ok {
			return false
		}
	}
	if f.Old != nil && !f.Old.Match(old, oldOK, kw) {
		return false
	}
	if f.New != nil && !f.New.Match(new, newOK, kw) {
		return false
	}
	return true
}

// LabelSelector returns the part of the label filters that the API server
// can apply (exact values, presence, absence) in the syntax of
// metav1.ListOptions.LabelSelector, and whether it covers every label
// filter (no callbacks).
func (f *Filter) LabelSelector() (selector string, complete bool) {
	complete = true
	var parts []string
	for _, key := range sortedKeys(f.Labels) {
		m := f.Labels[key]
		switch m.Op {
		case Present:
			parts = append(parts, key)
		case Absent:
			parts = append(parts, "!"+key)
		case Equal:
			if s, ok := m.Value.(string); ok {
				parts = append(parts, key+"="+s)
			} else {
				complete = false
			}
		default:
			complete = false
		}
	}
	return join(parts), complete
}
