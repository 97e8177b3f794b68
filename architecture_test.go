package kopf_test

import (
	"errors"
	"go/build"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

const modulePath = "github.com/kopf-go/kopf"

// TestArchitecture checks that docs/ARCHITECTURE.md's table of packages
// is the truth: every package of the root, generator and kopf-gen modules
// has a row, each row lists exactly what its package imports from them
// (tests aside), every import is of a package listed above it, nothing in
// runtime/ imports generator/, and no package of the root module imports a
// package of the generator or kopf-gen module (the runtime module must not
// require kopf-gen's).
func TestArchitecture(t *testing.T) {
	rows := architectureRows(t)
	index := map[string]int{}
	for i, r := range rows {
		index[r.pkg] = i
	}
	code := moduleImports(t)
	for pkg := range code {
		if _, ok := index[pkg]; !ok {
			t.Errorf("package %s has no row in docs/ARCHITECTURE.md", pkg)
		}
	}
	for i, r := range rows {
		imports, ok := code[r.pkg]
		if !ok {
			t.Errorf("docs/ARCHITECTURE.md has a row for %s, which is no package of the module", r.pkg)
			continue
		}
		got := make([]string, 0, len(imports))
		for _, imp := range imports {
			got = append(got, shortName(imp))
			if j, ok := index[imp]; ok && j >= i {
				t.Errorf("%s imports %s, which is not listed above it", r.pkg, imp)
			}
			if strings.HasPrefix(r.pkg, "runtime/") && (imp == "generator" || strings.HasPrefix(imp, "generator/")) {
				t.Errorf("%s (runtime) imports %s (generator)", r.pkg, imp)
			}
			if moduleOf(r.pkg) == "" && moduleOf(imp) != "" {
				t.Errorf("%s (root module) imports %s (module %s)", r.pkg, imp, moduleOf(imp))
			}
		}
		slices.Sort(got)
		want := slices.Sorted(slices.Values(r.imports))
		if !slices.Equal(got, want) {
			t.Errorf("%s imports %v; docs/ARCHITECTURE.md says %v", r.pkg, got, want)
		}
	}
}

type architectureRow struct {
	pkg     string   // path within the module; "" for the root
	imports []string // short names, as written
}

var rowPattern = regexp.MustCompile("^\\| `([^`]+)`[^|]*\\|[^|]*\\| ([^|]+) \\|$")

// architectureRows reads the table of packages of docs/ARCHITECTURE.md.
func architectureRows(t *testing.T) []architectureRow {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("docs", "ARCHITECTURE.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(data), "## Packages\n")
	if !ok {
		t.Fatal(`docs/ARCHITECTURE.md has no section "## Packages"`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	var rows []architectureRow
	for line := range strings.SplitSeq(section, "\n") {
		m := rowPattern.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil {
			continue
		}
		pkg := m[1]
		if pkg == "kopf" {
			pkg = ""
		}
		var imports []string
		if list := strings.TrimSpace(m[2]); list != "—" {
			for name := range strings.SplitSeq(list, ",") {
				imports = append(imports, strings.TrimSpace(name))
			}
		}
		rows = append(rows, architectureRow{pkg: pkg, imports: imports})
	}
	if len(rows) == 0 {
		t.Fatal("docs/ARCHITECTURE.md's table of packages has no rows")
	}
	return rows
}

// kopfGenModules are the directories of the modules that make kopf-gen,
// apart from the runtime's (the root module): their packages share the
// root's import path prefix and the table of packages.
var kopfGenModules = []string{"generator", "cmd/kopf-gen"}

// moduleOf returns the directory of the module among kopfGenModules that
// holds the package at pkg (a path within the repository), or "" for the
// root module.
func moduleOf(pkg string) string {
	for _, m := range kopfGenModules {
		if pkg == m || strings.HasPrefix(pkg, m+"/") {
			return m
		}
	}
	return ""
}

// moduleImports maps every package of the root module and of
// kopfGenModules (its path within the repository, "" for the root) to the
// packages of those modules it imports, tests and the other modules
// (directories with a go.mod of their own, such as e2e/) aside.
func moduleImports(t *testing.T) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	err := filepath.WalkDir(".", func(dir string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		name := d.Name()
		if dir != "." {
			if name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "bin" {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil && !slices.Contains(kopfGenModules, filepath.ToSlash(dir)) {
				return filepath.SkipDir // another module
			}
		}
		p, err := build.Default.ImportDir(dir, 0)
		var none *build.NoGoError
		if errors.As(err, &none) {
			return nil
		}
		if err != nil {
			return err
		}
		rel := filepath.ToSlash(dir)
		if rel == "." {
			rel = ""
		}
		var imports []string
		for _, imp := range p.Imports {
			if imp == modulePath {
				imports = append(imports, "")
			} else if r, ok := strings.CutPrefix(imp, modulePath+"/"); ok {
				imports = append(imports, r)
			}
		}
		out[rel] = imports
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// shortName is how the table names a package: the last element of its
// path.
func shortName(pkg string) string {
	if pkg == "" {
		return "kopf"
	}
	return path.Base(pkg)
}
