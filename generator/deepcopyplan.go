package generator

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"go/types"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/kopf-go/kopf/generator/load"
	"github.com/kopf-go/kopf/generator/manifests"
)

// deepCopyPackages returns the import paths of the packages whose markers
// ask for DeepCopy methods, collecting the errors of those that
// controller-tools would fail on (or panic).
func (p *plans) deepCopyPackages(pkgs []*load.Package) []string {
	var paths []string
	for _, pkg := range pkgs {
		if !hasDeepCopyMarkers(pkg) {
			continue
		}
		asts := make([]*ast.File, len(pkg.Files))
		for i, f := range pkg.Files {
			asts[i] = f.AST
		}
		bad := manifests.CheckDeepCopy(pkg.Fset, asts)
		bad = append(bad, manifests.CheckDeepCopyPackage(pkg.Fset, asts, pkg.Types)...)
		if len(bad) > 0 {
			p.errs = append(p.errs, bad...)
			continue
		}
		paths = append(paths, pkg.PkgPath)
	}
	return paths
}

// planDeepCopy plans the DeepCopy file of every package that controller-tools
// generated one for (by package directory), and the removal of kopf-gen's
// own from the others.
func (p *plans) planDeepCopy(pkgs []*load.Package, generated map[string][]byte) error {
	for _, pkg := range pkgs {
		path := filepath.Join(pkg.Dir, manifests.DeepCopyFileName)
		want := generated[pkg.Dir]
		if want == nil {
			if err := p.keep(planOrphan(path, isOurs)); err != nil {
				return err
			}
			continue
		}
		want, err := dropRedundantImportNames(want, pkg)
		if err != nil {
			return fmt.Errorf("formatting %s: %w", path, err)
		}
		if err := p.keep(planGenerated(path, want, IsGenerated)); err != nil {
			return err
		}
	}
	return nil
}

// hasDeepCopyMarkers reports whether a package's comments enable DeepCopy
// generation.
func hasDeepCopyMarkers(p *load.Package) bool {
	for _, f := range p.Files {
		for _, cg := range f.AST.Comments {
			for _, c := range cg.List {
				for _, m := range manifests.DeepCopyMarkers {
					if strings.Contains(c.Text, m) {
						return true
					}
				}
			}
		}
	}
	return false
}

// dropRedundantImportNames removes the names of imports that are the
// imported packages' own names. controller-tools names an import only if
// the package does not import it already, so without this its output
// would change once another generated file (the scheme registration)
// imports the same package.
func dropRedundantImportNames(src []byte, pkg *load.Package) ([]byte, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "", src, parser.ParseComments)
	if err != nil {
		return nil, err
	}
	changed := false
	for _, spec := range f.Imports {
		if spec.Name == nil {
			continue
		}
		path, err := strconv.Unquote(spec.Path.Value)
		if err != nil {
			continue
		}
		if name := importedName(pkg, path); name != "" && name == spec.Name.Name {
			spec.Name = nil
			changed = true
		}
	}
	if !changed {
		return src, nil
	}
	var buf bytes.Buffer
	if err := format.Node(&buf, fset, f); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// importedName returns the name of the package at path if the package
// imports it, directly or not, or "".
func importedName(pkg *load.Package, path string) string {
	if pkg.Types == nil {
		return ""
	}
	seen := map[*types.Package]bool{}
	var find func(*types.Package) string
	find = func(tp *types.Package) string {
		if seen[tp] {
			return ""
		}
		seen[tp] = true
		if tp.Path() == path {
			return tp.Name()
		}
		for _, imp := range tp.Imports() {
			if name := find(imp); name != "" {
				return name
			}
		}
		return ""
	}
	return find(pkg.Types)
}
