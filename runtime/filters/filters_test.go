package filters

import (
	"testing"

	"github.com/kopf-go/kopf/runtime/kwargs"
)

func TestMatcher(t *testing.T) {
	kw := &kwargs.Base{Name: "obj"}
	for _, tt := range []struct {
		name    string
		m       Matcher
		value   any
		present bool
		want    bool
	}{
		{"equal string", IsEqual("a"), "a", true, true},
		{"equal, another value", IsEqual("a"), "b", true, false},
		{"equal, absent", IsEqual(nil), nil, false, false},
		{"equal numbers by value", IsEqual(1), 1.0, true, true},
		{"equal maps", IsEqual(map[string]any{"x": 1}), map[string]any{"x": int64(1)}, true, true},
		{"present", IsPresent(), "", true, true},
		{"present, absent", IsPresent(), nil, false, false},
		{"absent", IsAbsent(), nil, false, true},
		{"absent, present", IsAbsent(), "x", true, false},
		{"callback true", Func(func(v any, ok bool, kw *kwargs.Base) bool { return ok && v == "x" && kw.Name == "obj" }), "x", true, true},
		{"callback false", Func(func(any, bool, *kwargs.Base) bool { return false }), "x", true, false},
		{"callback without a function", Matcher{Op: Callback}, "x", true, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.m.Match(tt.value, tt.present, kw); got != tt.want {
				t.Errorf("Match(%v, %v) = %v, want %v", tt.value, tt.present, got, tt.want)
			}
		})
	}
}

func TestMatchMeta(t *testing.T) {
	kw := &kwargs.Base{
		Labels:      map[string]string{"app": "x", "tier": "web"},
		Annotations: map[string]string{"note": "y"},
	}
	for _, tt := range []struct {
		name string
		f    Filter
		want bool
	}{
		{"no filters", Filter{}, true},
		{"label equal", Filter{Labels: map[string]Matcher{"app": IsEqual("x")}}, true},
		{"label differs", Filter{Labels: map[string]Matcher{"app": IsEqual("z")}}, false},
		{"label absent", Filter{Labels: map[string]Matcher{"other": IsAbsent()}}, true},
		{"label present but required absent", Filter{Labels: map[string]Matcher{"app": IsAbsent()}}, false},
		{"all labels must match", Filter{Labels: map[string]Matcher{"app": IsEqual("x"), "tier": IsEqual("db")}}, false},
		{"annotation present", Filter{Annotations: map[string]Matcher{"note": IsPresent()}}, true},
		{"annotation missing", Filter{Annotations: map[string]Matcher{"other": IsPresent()}}, false},
		{"label matches, annotation does not", Filter{
			Labels: map[string]Matcher{"app": IsEqual("x")}, Annotations: map[string]Matcher{"note": IsEqual("n")},
		}, false},
		{"label callback sees the value", Filter{Labels: map[string]Matcher{"tier": Func(func(v any, ok bool, _ *kwargs.Base) bool { return ok && v == "web" })}}, true},
		{"label callback sees an absent value as nil", Filter{Labels: map[string]Matcher{"none": Func(func(v any, ok bool, _ *kwargs.Base) bool { return !ok && v == nil })}}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.f.MatchMeta(kw); got != tt.want {
				t.Errorf("MatchMeta() = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestMatchValues(t *testing.T) {
	one, two := IsEqual(1), IsEqual(2)
	absent := IsAbsent()
	for _, tt := range []struct {
		name             string
		f                Filter
		old              any
		oldOK            bool
		new              any
		newOK            bool
		updating, wanted bool
	}{
		{"nothing to check", Filter{}, nil, false, nil, false, false, true},
		{"value= the new value", Filter{Value: &one}, nil, false, 1, true, false, true},
		{"value= not the new value", Filter{Value: &one}, nil, false, 2, true, false, false},
		{"value= the old value, not updating", Filter{Value: &one}, 1, true, 2, true, false, false},
		{"value= the old value, updating", Filter{Value: &one}, 1, true, 2, true, true, true},
		{"value= neither side, updating", Filter{Value: &one}, 3, true, 2, true, true, false},
		{"old= matches", Filter{Old: &one}, 1, true, 2, true, true, true},
		{"old= differs", Filter{Old: &two}, 1, true, 2, true, true, false},
		{"new= matches", Filter{New: &two}, 1, true, 2, true, true, true},
		{"new= differs", Filter{New: &one}, 1, true, 2, true, true, false},
		{"old= absent on creation", Filter{Old: &absent, New: &one}, nil, false, 1, true, true, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.f.MatchValues(tt.old, tt.oldOK, tt.new, tt.newOK, tt.updating, &kwargs.Base{}); got != tt.wanted {
				t.Errorf("MatchValues() = %v, want %v", got, tt.wanted)
			}
		})
	}
}

func TestHasCallbacks(t *testing.T) {
	cb := Func(func(any, bool, *kwargs.Base) bool { return true })
	plain := IsEqual("x")
	for _, tt := range []struct {
		name string
		f    Filter
		want bool
	}{
		{"none", Filter{}, false},
		{"plain matchers", Filter{Labels: map[string]Matcher{"a": plain}, Annotations: map[string]Matcher{"b": IsPresent()}, Value: &plain, Old: &plain, New: &plain}, false},
		{"label", Filter{Labels: map[string]Matcher{"a": cb}}, true},
		{"annotation", Filter{Annotations: map[string]Matcher{"a": cb}}, true},
		{"value", Filter{Value: &cb}, true},
		{"old", Filter{Old: &cb}, true},
		{"new", Filter{New: &cb}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.f.HasCallbacks(); got != tt.want {
				t.Errorf("HasCallbacks() = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestLabelSelector(t *testing.T) {
	cb := Func(func(any, bool, *kwargs.Base) bool { return true })
	for _, tt := range []struct {
		name         string
		labels       map[string]Matcher
		want         string
		wantComplete bool
	}{
		{"none", nil, "", true},
		{"sorted, every kind", map[string]Matcher{"b": IsEqual("x"), "a": IsPresent(), "c": IsAbsent()}, "a,b=x,!c", true},
		{"a non-string value is left to the operator", map[string]Matcher{"a": IsEqual(1), "b": IsEqual("y")}, "b=y", false},
		{"a callback is left to the operator", map[string]Matcher{"a": cb, "b": IsPresent()}, "b", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := Filter{Labels: tt.labels}
			got, complete := f.LabelSelector()
			if got != tt.want || complete != tt.wantComplete {
				t.Errorf("LabelSelector() = %q, %v; want %q, %v", got, complete, tt.want, tt.wantComplete)
			}
		})
	}
}
