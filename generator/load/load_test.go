package load

import (
	"go/scanner"
	"go/token"
	"reflect"
	"testing"

	"golang.org/x/tools/go/packages"
)

func TestParsePos(t *testing.T) {
	for s, want := range map[string]token.Position{
		"":                     {},
		"-":                    {},
		"/a/b.go:3:14":         {Filename: "/a/b.go", Line: 3, Column: 14},
		"/a/b.go:3":            {Filename: "/a/b.go", Line: 3},
		"C:/a/b.go:3:4":        {Filename: "C:/a/b.go", Line: 3, Column: 4},
		"/a/b.go":              {Filename: "/a/b.go"},
		"/a/with:colon.go:1:2": {Filename: "/a/with:colon.go", Line: 1, Column: 2},
	} {
		if got := ParsePos(s); got != want {
			t.Errorf("ParsePos(%q) = %#v, want %#v", s, got, want)
		}
	}
}

func TestFatalErrors(t *testing.T) {
	p := &packages.Package{ID: "x/p", PkgPath: "x/p", Errors: []packages.Error{
		{Pos: "/p/a.go:1:2", Msg: "undefined: FKwargs", Kind: packages.TypeError},
		{Pos: "-", Msg: "# x/p\na.go:1:2: undefined: FKwargs", Kind: packages.ListError},
		{Pos: "/p/a.go:3:1", Msg: "expected declaration", Kind: packages.ParseError},
		{Pos: "", Msg: "no Go files", Kind: packages.ListError},
	}}
	var want scanner.ErrorList
	want.Add(token.Position{Filename: "/p/a.go", Line: 3, Column: 1}, "expected declaration")
	want.Add(token.Position{}, "x/p: no Go files")
	if got := fatalErrors(p); !reflect.DeepEqual(got, want) {
		t.Errorf("fatalErrors = %v, want %v", got, want)
	}
}

func TestDedupe(t *testing.T) {
	var errs scanner.ErrorList
	errs.Add(token.Position{}, "a")
	errs.Add(token.Position{}, "a")
	errs.Add(token.Position{}, "b")
	errs.Add(token.Position{Filename: "f", Line: 1}, "c")
	errs.Add(token.Position{Filename: "f", Line: 1}, "d")
	if got := dedupe(errs); len(got) != 4 {
		t.Errorf("dedupe = %v", got)
	}
}
