package kopf_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/kopf-go/kopf"
	"github.com/kopf-go/kopf/runtime/cli"
)

// docsNameRules are the qualified names that the pages may mention, and
// where the names that exist are declared.
var docsNameRules = []struct {
	name     string
	pattern  *regexp.Regexp // its first group is the name
	declared func(t *testing.T) map[string]bool
}{
	{"kopf.X", regexp.MustCompile(`\bkopf\.([A-Z]\w*)`), packageNames(".", "kopf")},
	{"kopftest.X", regexp.MustCompile(`\bkopftest\.([A-Z]\w*)`), packageNames("kopftest", "kopftest")},
	{"envtest.X", regexp.MustCompile(`\benvtest\.([A-Z]\w*)`), packageNames("envtest", "envtest")},
	{"pyfmt.X", regexp.MustCompile(`\bpyfmt\.([A-Z]\w*)`), packageNames("pyfmt", "pyfmt")},
	{"kw.X", regexp.MustCompile(`\bkw\.([A-Z]\w*)`), kwargsNames},
	{"op.X", regexp.MustCompile(`\bop\.([A-Z]\w*)`), kopftestMembers},
}

// kopfPythonNames are names of Kopf's Python API that the pages compare
// with kopf-go's and that kopf-go does not declare (the tables of
// migrating-from-kopf.md, the "Kopf" columns).
var kopfPythonNames = map[string]bool{"kopf.DaemonStopped": true, "kopf.PRESENT": true, "kopf.ABSENT": true}

// Every exported name that the pages (docs/*.md and README.md) qualify
// with kopf. is declared by the facade (this package), every kopftest.X,
// envtest.X and pyfmt.X by those packages; every kwarg they name as kw.X is a
// field or method of the handlers' kwargs (runtime/kwargs) or of the
// kwargs that kopf-gen generates (the examples' zz_generated files:
// indices), and every op.X a field or method of kopftest's types (the
// test operator): a renamed or removed name fails here, with the page and
// line that still names it.
func TestDocsNameWhatExists(t *testing.T) {
	pages, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	pages = append(pages, "README.md")
	for _, rule := range docsNameRules {
		t.Run(rule.name, func(t *testing.T) {
			declared := rule.declared(t)
			checked := 0
			for _, page := range pages {
				data, err := os.ReadFile(page)
				if err != nil {
					t.Fatal(err)
				}
				for i, line := range strings.Split(string(data), "\n") {
					for _, m := range rule.pattern.FindAllStringSubmatch(line, -1) {
						checked++
						if !declared[m[1]] && !kopfPythonNames[m[0]] {
							t.Errorf("%s:%d names %s, which is not declared", page, i+1, m[0])
						}
					}
				}
			}
			if checked == 0 {
				t.Errorf("no %s found in the pages: is the pattern wrong?", rule.name)
			}
		})
	}
}

// packageNames returns the exported names declared at the top level of
// the non-test files of the package pkg in dir.
func packageNames(dir, pkg string) func(t *testing.T) map[string]bool {
	return func(t *testing.T) map[string]bool {
		t.Helper()
		return exportedNames(t, dir, pkg)
	}
}

func exportedNames(t *testing.T, dir, pkg string) map[string]bool {
	t.Helper()
	names := map[string]bool{}
	for _, f := range parseGoFiles(t, dir, notTest) {
		if f.Name.Name != pkg {
			continue
		}
		for _, decl := range f.Decls {
			for _, name := range declNames(decl) {
				if ast.IsExported(name) {
					names[name] = true
				}
			}
		}
	}
	return names
}

// declNames are the names a top-level declaration declares (none for a
// method).
func declNames(decl ast.Decl) []string {
	var out []string
	switch d := decl.(type) {
	case *ast.FuncDecl:
		if d.Recv == nil {
			out = append(out, d.Name.Name)
		}
	case *ast.GenDecl:
		for _, spec := range d.Specs {
			switch s := spec.(type) {
			case *ast.TypeSpec:
				out = append(out, s.Name.Name)
			case *ast.ValueSpec:
				for _, n := range s.Names {
					out = append(out, n.Name)
				}
			}
		}
	}
	return out
}

// kwargsNames are the exported fields (embedded ones by their type's
// name) and methods of the struct types of runtime/kwargs and of the
// generated kwargs of the examples.
func kwargsNames(t *testing.T) map[string]bool {
	t.Helper()
	files := parseGoFiles(t, filepath.Join("runtime", "kwargs"), notTest)
	generated, err := filepath.Glob(filepath.Join("examples", "*"))
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range generated {
		if info, err := os.Stat(dir); err != nil || !info.IsDir() {
			continue
		}
		files = append(files, parseGoFiles(t, dir, func(name string) bool { return strings.HasPrefix(name, "zz_generated") })...)
	}
	return memberNames(files)
}

// kopftestMembers are the exported fields and methods of kopftest's types
// (op.WaitLog of the operator that kopftest.Start returns, ...).
func kopftestMembers(t *testing.T) map[string]bool {
	t.Helper()
	return memberNames(parseGoFiles(t, "kopftest", notTest))
}

func notTest(name string) bool { return !strings.HasSuffix(name, "_test.go") }

// memberNames are the exported fields (embedded ones by their type's
// name) of the struct types and the exported methods declared in files.
func memberNames(files []*ast.File) map[string]bool {
	names := map[string]bool{}
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.StructType:
				for _, field := range n.Fields.List {
					for _, name := range fieldNames(field) {
						if ast.IsExported(name) {
							names[name] = true
						}
					}
				}
			case *ast.FuncDecl:
				if n.Recv != nil && ast.IsExported(n.Name.Name) {
					names[n.Name.Name] = true
				}
			}
			return true
		})
	}
	return names
}

// fieldNames are the names of a struct's field declaration: an embedded
// field's is its type's (Base of kwargs.Base, *Base or Base[T]).
func fieldNames(field *ast.Field) []string {
	var out []string
	for _, n := range field.Names {
		out = append(out, n.Name)
	}
	if len(field.Names) > 0 {
		return out
	}
	typ := field.Type
	for {
		switch x := typ.(type) {
		case *ast.StarExpr:
			typ = x.X
			continue
		case *ast.IndexExpr:
			typ = x.X
			continue
		case *ast.IndexListExpr:
			typ = x.X
			continue
		case *ast.SelectorExpr:
			return []string{x.Sel.Name}
		case *ast.Ident:
			return []string{x.Name}
		}
		return nil
	}
}

// parseGoFiles parses the Go files of dir (not its subdirectories) that
// keep selects by name.
func parseGoFiles(t *testing.T, dir string, keep func(name string) bool) []*ast.File {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") || !keep(e.Name()) {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, e.Name()), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	return files
}

// docs/cli.md's table of the flags of run lists every flag that run has,
// and no other: a flag added, renamed or removed fails here.
func TestCLIDocListsRunFlags(t *testing.T) {
	cmd := cli.NewCommand(func(*kopf.Registry) error { return nil }, io.Discard)
	run, _, err := cmd.Find([]string{"run"})
	if err != nil || run == cmd {
		t.Fatalf("no run command: %v", err)
	}
	have := map[string]bool{}
	run.Flags().VisitAll(func(f *pflag.Flag) {
		if !f.Hidden && f.Name != "help" {
			have[f.Name] = true
		}
	})
	doc, err := os.ReadFile("docs/cli.md")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("^\\| `-")
	flag := regexp.MustCompile("`(?:-[a-zA-Z], )?--([a-z-]+)")
	listed := map[string]bool{}
	for i, line := range strings.Split(string(doc), "\n") {
		if !row.MatchString(line) {
			continue
		}
		cell := strings.SplitN(line, "|", 3)[1]
		for _, m := range flag.FindAllStringSubmatch(cell, -1) {
			listed[m[1]] = true
			if !have[m[1]] {
				t.Errorf("docs/cli.md:%d lists --%s, which run does not have", i+1, m[1])
			}
		}
	}
	for name := range have {
		if !listed[name] {
			t.Errorf("docs/cli.md's table of run's flags does not list --%s", name)
		}
	}
}
