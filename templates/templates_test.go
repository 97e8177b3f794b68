package templates

import (
	"io/fs"
	"strings"
	"testing"
)

// TestNames checks that every template ends with .tmpl, so that none is Go
// source or a go.mod of this module, and that the operator's main files are
// there. (That every path can be part of a module zip is checked by
// generator/scaffold's tests, with golang.org/x/mod, which this module does
// not require.)
func TestNames(t *testing.T) {
	n := 0
	err := fs.WalkDir(FS, Root, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		n++
		if !strings.HasSuffix(p, ".tmpl") {
			t.Errorf("%s does not end with .tmpl", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{".github/workflows/ci.yml.tmpl", "Dockerfile.tmpl", "Makefile.tmpl", "go.mod.tmpl", "api/VERSION/types.go.tmpl"} {
		if _, err := fs.Stat(FS, Root+"/"+want); err != nil {
			t.Errorf("%s is missing: %v", want, err)
		}
	}
	if n < 10 {
		t.Errorf("only %d templates", n)
	}
}
