package scope

import (
	"reflect"
	"testing"
)

func TestMatches(t *testing.T) {
	tests := []struct {
		patterns []string
		ns       string
		want     bool
	}{
		{nil, "anything", true},
		{[]string{"default"}, "default", true},
		{[]string{"default"}, "other", false},
		{[]string{"ns-*"}, "ns-1", true},
		{[]string{"ns-*"}, "other", false},
		{[]string{"ns-*,!ns-2"}, "ns-2", false},
		{[]string{"ns-*", "!ns-2"}, "ns-1", true},
		{[]string{"!kube-*"}, "default", true},
		{[]string{"!kube-*"}, "kube-system", false},
		{[]string{"a?c"}, "abc", true},
		{[]string{"[ab]x"}, "bx", true},
		{[]string{"[ab]x"}, "cx", false},
	}
	for _, tt := range tests {
		s, err := Parse(tt.patterns)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tt.patterns, err)
		}
		if got := s.Matches(tt.ns); got != tt.want {
			t.Errorf("%q matches %q = %v, want %v", tt.patterns, tt.ns, got, tt.want)
		}
	}
}

func TestExactNamespaces(t *testing.T) {
	tests := []struct {
		patterns []string
		want     []string
		ok       bool
	}{
		{[]string{"a", "b,c"}, []string{"a", "b", "c"}, true},
		{[]string{"a", "b*"}, nil, false},
		{[]string{"a", "!b"}, nil, false},
		{nil, nil, false},
	}
	for _, tt := range tests {
		s, _ := Parse(tt.patterns)
		got, ok := s.ExactNamespaces()
		if ok != tt.ok || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%q: got %q, %v; want %q, %v", tt.patterns, got, ok, tt.want, tt.ok)
		}
	}
}

func TestParseRejectsBadGlobs(t *testing.T) {
	if _, err := Parse([]string{"ns-["}); err == nil {
		t.Error("a malformed glob is accepted")
	}
}
