package generator

import (
	"fmt"
	"go/ast"
	"go/scanner"
	"go/token"
	"go/types"
	"path/filepath"
	"strings"

	"github.com/kopf-go/kopf/generator/emit"
	"github.com/kopf-go/kopf/generator/load"
	"github.com/kopf-go/kopf/generator/manifests"
	"github.com/kopf-go/kopf/generator/markers"
	"github.com/kopf-go/kopf/generator/model"
)

// RegisterFileName is the name of the scheme registration file, the name
// code-generator's register-gen gives it.
const RegisterFileName = "zz_generated.register.go"

// runtimeObjectMarkers are the markers that ask DeepCopy generation for
// a DeepCopyObject method, which makes a type a runtime.Object.
var runtimeObjectMarkers = []string{
	"+k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object",
	"+kubebuilder:object:root=true",
}

// planRegister plans the scheme registration file of a package: the
// package's //kopf:resource types that are runtime.Objects, and their
// lists (the type named <T>List), see [Options] and the package doc. A
// package that registers its types itself (it declares AddToScheme) gets
// none; nor does one without such types, whose generated file, if any, is
// removed.
func planRegister(pkg *load.Package, m *model.Package, deepcopy bool) (File, bool, error) {
	path := filepath.Join(m.Dir, RegisterFileName)
	orphan := func() (File, bool, error) { return planOrphan(path, isOurs) }
	if len(m.Resources) == 0 || pkg.Types == nil {
		return orphan()
	}
	decls := topLevelDecls(pkg)
	if _, own := decls["AddToScheme"]; own {
		return orphan()
	}
	var (
		errs  scanner.ErrorList
		reg   = emit.Registration{PkgPath: m.PkgPath, Name: m.Name}
		first *model.Typed
	)
	for _, t := range m.Resources {
		name := t.Object.Obj().Name()
		if !isRuntimeObject(pkg, name, deepcopy) {
			continue
		}
		if first == nil {
			first = t
			reg.Group, reg.Version = t.Group, t.Version
		} else if t.Group != first.Group || t.Version != first.Version {
			errs.Add(t.Pos, fmt.Sprintf("%s%s: the scheme registration (%s) is one group and version per package, as client-go's schemes have it: %s is %s, but %s is %s; declare them in packages of their own",
				markers.Prefix, markers.Resource, RegisterFileName, name, gv(t), first.Object.Obj().Name(), gv(first)))
			continue
		}
		reg.Types = append(reg.Types, name)
		if list := name + "List"; isRuntimeObject(pkg, list, deepcopy) {
			reg.Types = append(reg.Types, list)
		}
	}
	if len(reg.Types) == 0 {
		return orphan()
	}
	for _, name := range emit.RegisterNames {
		if pos, clash := decls[name]; clash {
			errs.Add(pos, fmt.Sprintf("%s is declared here and in the scheme registration that kopf-gen generates for the package's //kopf:resource types (%s): rename it, or declare AddToScheme too, and kopf-gen leaves the registration to the package",
				name, RegisterFileName))
		}
	}
	if len(errs) > 0 {
		errs.Sort()
		return File{}, false, errs
	}
	want, err := emit.RegisterFile(reg, Version())
	if err != nil {
		return File{}, false, err
	}
	return planGenerated(path, want, isOurs)
}

func gv(t *model.Typed) string {
	if t.Group == "" {
		return t.Version
	}
	return t.Group + "/" + t.Version
}

// topLevelDecls returns the package-level names that the package declares
// outside the files kopf-gen generates, with their positions.
func topLevelDecls(pkg *load.Package) map[string]token.Position {
	out := map[string]token.Position{}
	for _, f := range pkg.Files {
		switch filepath.Base(f.Path) {
		case RegisterFileName, GeneratedFileName:
			continue
		}
		for _, d := range f.AST.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil {
					out[d.Name.Name] = pkg.Fset.Position(d.Name.Pos())
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						out[s.Name.Name] = pkg.Fset.Position(s.Name.Pos())
					case *ast.ValueSpec:
						for _, n := range s.Names {
							out[n.Name] = pkg.Fset.Position(n.Pos())
						}
					}
				}
			}
		}
	}
	return out
}

// isRuntimeObject reports whether the package's type name is a struct
// whose pointer is a runtime.Object: it has a DeepCopyObject method, or
// (with DeepCopy generation on) its doc comment asks for one.
func isRuntimeObject(pkg *load.Package, name string, deepcopy bool) bool {
	tn, ok := pkg.Types.Scope().Lookup(name).(*types.TypeName)
	if !ok {
		return false
	}
	if _, isStruct := tn.Type().Underlying().(*types.Struct); !isStruct {
		return false
	}
	obj, _, _ := types.LookupFieldOrMethod(types.NewPointer(tn.Type()), true, pkg.Types, "DeepCopyObject")
	if fn, isFunc := obj.(*types.Func); isFunc {
		// With DeepCopy on, the DeepCopy file is this run's to write: the
		// methods it holds now may be stale.
		if !deepcopy || fn.Pkg() != pkg.Types || filepath.Base(pkg.Fset.Position(fn.Pos()).Filename) != manifests.DeepCopyFileName {
			return true
		}
	}
	return deepcopy && asksForDeepCopyObject(pkg, name)
}

// asksForDeepCopyObject reports whether the doc comment of the package's
// type declaration of name holds one of runtimeObjectMarkers.
func asksForDeepCopyObject(pkg *load.Package, name string) bool {
	for _, t := range typeSpecs(pkg) {
		if t.spec.Name.Name != name {
			continue
		}
		for _, line := range t.lines {
			for _, m := range runtimeObjectMarkers {
				if strings.Contains(line, m) {
					return true
				}
			}
		}
		return false
	}
	return false
}
