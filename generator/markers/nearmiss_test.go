package markers

import "testing"

func TestNearMiss(t *testing.T) {
	tbl := Kopf()
	const (
		space = "markers have no space after //"
		plus  = "markers have no '+' (that is kubebuilder's style)"
		lower = "markers are lower case"
		colon = "markers have no space around the colon"
	)
	tests := []struct {
		text string
		want string // "" for no warning
	}{
		// Near misses: the fix, and why.
		{"// kopf:on.create kopfexamples", "not a marker: did you mean //kopf:on.create? " + space},
		{"//\tkopf:on.create kopfexamples", "not a marker: did you mean //kopf:on.create? " + space},
		{"//  kopf:on.update ex field=spec.a", "not a marker: did you mean //kopf:on.update? " + space},
		{"//+kopf:on.create kopfexamples", "not a marker: did you mean //kopf:on.create? " + plus},
		{"// +kopf:on.delete ex", "not a marker: did you mean //kopf:on.delete? " + space + "; " + plus},
		{"//Kopf:on.create ex", "not a marker: did you mean //kopf:on.create? " + lower},
		{"//KOPF:on.event ex", "not a marker: did you mean //kopf:on.event? " + lower},
		{"//kopf :on.create ex", "not a marker: did you mean //kopf:on.create? " + colon},
		{"// kopf : on.create ex", "not a marker: did you mean //kopf:on.create? " + space + "; " + colon},
		{"// kopf:on.craete ex", "not a marker: did you mean //kopf:on.create? " + space},
		{"// kopf:resource kopf.dev/v1/kopfexamples", "not a marker: did you mean //kopf:resource? " + space},
		{"// kopf:daemon ex", "not a marker: did you mean //kopf:daemon? " + space},
		{"// kopf:on.field", "not a marker: did you mean //kopf:on.field? " + space},
		{"// kopf:on.validate kex", "not a marker: did you mean //kopf:on.validate? " + space},
		{"//+kopf:on.mutate kex", "not a marker: did you mean //kopf:on.mutate? markers have no '+' (that is kubebuilder's style)"},

		// Not near misses: markers, prose, quotes, markers commented out.
		{"//kopf:on.create ex", ""},
		{"//kopf: on.create ex", ""}, // a marker with an error, reported by Parse
		{"// kopf: this is great", ""},
		{"// kopf: on", ""},
		{"// kopf:", ""},
		{"// kopf", ""},
		{"// Kopf's on.create handlers run once", ""},
		{"// kopf.on.create in Python", ""},
		{"// see //kopf:on.create", ""},
		{"// //kopf:on.create ex", ""},
		{"//\t//kopf:on.create ex", ""},
		{"// kopfexamples are watched", ""},
		{"// kopf:frobnicate", ""},
		{"/* kopf:on.create ex */", ""},
		{"//go:generate kopf-gen", ""},
		{"//+kubebuilder:object:root=true", ""},
		{"", ""},
	}
	for _, tt := range tests {
		got, ok := tbl.NearMiss(tt.text)
		if got != tt.want || ok != (tt.want != "") {
			t.Errorf("NearMiss(%q) = %q, %v; want %q", tt.text, got, ok, tt.want)
		}
	}
}

func TestSuggest(t *testing.T) {
	names := []string{"on.create", "on.update", "on.delete", "timeout", "kopfexamples"}
	tests := []struct {
		s, want string
	}{
		{"on.craete", "on.create"}, // a transposition is one edit
		{"on.creat", "on.create"},
		{"on.creaet", "on.create"},
		{"tiemout", "timeout"},
		{"timeuot", "timeout"},
		{"kopfexmaples", "kopfexamples"},
		{"kopfexampels", "kopfexamples"},
		{"timeout", ""}, // s itself is never suggested
		{"frobnicate", ""},
		{"ab", ""},
		{"", ""},
	}
	for _, tt := range tests {
		if got := Suggest(tt.s, names); got != tt.want {
			t.Errorf("Suggest(%q) = %q, want %q", tt.s, got, tt.want)
		}
	}
	for _, tt := range []struct {
		s     string
		limit int
		want  string
	}{
		{"widgets", 1, ""}, // gadgets is 2 edits away
		{"widgets", 2, "gadgets"},
		{"widget", 2, ""}, // beyond a third of 6 bytes
		{"gadgest", 1, "gadgets"},
		{"kopfexmaples", 1, "kopfexamples"},
		{"kopfxemaples", 1, ""},
		{"kopfxemaples", 2, "kopfexamples"},
	} {
		if got := SuggestWithin(tt.s, []string{"gadgets", "kopfexamples"}, tt.limit); got != tt.want {
			t.Errorf("SuggestWithin(%q, %d) = %q, want %q", tt.s, tt.limit, got, tt.want)
		}
	}
	for _, tt := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"a", "", 1}, {"", "abc", 3}, {"abc", "abc", 0},
		{"ab", "ba", 1}, {"abc", "acb", 1}, {"ca", "abc", 3}, {"kitten", "sitting", 3},
	} {
		if got := distance(tt.a, tt.b); got != tt.want {
			t.Errorf("distance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
		if got := distance(tt.b, tt.a); got != tt.want {
			t.Errorf("distance(%q, %q) = %d, want %d", tt.b, tt.a, got, tt.want)
		}
	}
}
