package markers

import (
	"errors"
	"go/scanner"
	"go/token"
	"reflect"
	"testing"
)

// FuzzParse checks that the parser never panics, that every error it
// reports is positioned inside the marker comment, and that whatever it
// accepts renders (Marker.String) to text that parses to the same values.
// The seed corpus is in testdata/fuzz/FuzzParse.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		"//kopf:on.create kopf.dev/v1/kopfexamples",
		"//kopf:on.delete v1/pods optional=true id=\"x y\" errors=permanent",
		"//kopf:test.values labels={a: b, \"c\": [d]} ops=[a,b,]",
		"//kopf:on.field ex field=[spec, \"a.b\"] old=1.5 new=fn:isOk labels={a: PRESENT, b: \"ABSENT\", c: fn:c} when=w",
		"//kopf:on.event * value=-0 field=a",
		"//kopf:on.mutate kex operations=[CREATE, DELETE,] subresource=* labels={a: b} ignore_failures=true",
		"//kopf:on.validate kex operations=[\"UPDATE\"] field=spec.x value=ABSENT persistent=false",
	} {
		f.Add(seed)
	}
	tbl := testTable(f)
	pos := token.Position{Filename: "fuzz.go", Offset: 40, Line: 7, Column: 3}
	f.Fuzz(func(t *testing.T, text string) {
		if _, near := tbl.NearMiss(text); near && IsMarker(text) {
			t.Fatalf("NearMiss(%q): a marker is not a near miss", text)
		}
		m, err := tbl.Parse(text, pos)
		if err != nil {
			if m != nil {
				t.Fatalf("Parse(%q) returned both a marker and an error", text)
			}
			var list scanner.ErrorList
			if !errors.As(err, &list) || len(list) == 0 {
				t.Fatalf("Parse(%q) error %v is not a non-empty scanner.ErrorList", text, err)
			}
			for _, e := range list {
				p := e.Pos
				if p.Filename != pos.Filename || p.Line != pos.Line ||
					p.Column < pos.Column || p.Column > pos.Column+len(text) ||
					p.Offset-pos.Offset != p.Column-pos.Column || e.Msg == "" {
					t.Fatalf("Parse(%q): error %q is not positioned within the marker", text, e.Error())
				}
			}
			return
		}
		if m == nil || m.Def == nil || len(m.Positional) != len(m.Def.Positional) {
			t.Fatalf("Parse(%q) = %+v: incomplete marker without error", text, m)
		}
		again, err := tbl.Parse(m.String(), pos)
		if err != nil {
			t.Fatalf("Parse(%q) rendered as %q, which fails: %v", text, m.String(), err)
		}
		if !reflect.DeepEqual(values(again), values(m)) {
			t.Fatalf("Parse(%q) rendered as %q, which parses differently", text, m.String())
		}
	})
}
