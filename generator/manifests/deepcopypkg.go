package manifests

import (
	"fmt"
	"go/ast"
	"go/scanner"
	"go/token"
	"go/types"
	"path/filepath"
	"strings"
)

// packageDeepCopyMarkers enable DeepCopy methods for every type of a
// package, in its doc comment (doc.go, as kubebuilder and code-generator
// lay API packages out).
var packageDeepCopyMarkers = []string{"+k8s:deepcopy-gen=package", "+kubebuilder:object:generate=true"}

// typeDeepCopyMarkers enable DeepCopy methods for one type.
var typeDeepCopyMarkers = []string{"+k8s:deepcopy-gen=true", "+kubebuilder:object:generate=true", "+kubebuilder:object:root=true", "+k8s:deepcopy-gen:interfaces="}

// CheckDeepCopyPackage reports what makes DeepCopy methods that would not
// compile: a package that asks for them type by type only (no package
// marker, as when an API package is copied without its doc.go), whose
// marked types have fields of its other struct types that need a deep
// copy (pointers, slices, maps inside) and have no DeepCopyInto method.
// controller-tools generates calls of those methods and no methods; the
// error is at the field, instead of a compile error in the generated file.
func CheckDeepCopyPackage(fset *token.FileSet, files []*ast.File, pkg *types.Package) scanner.ErrorList {
	if pkg == nil || packageMarked(files) {
		return nil
	}
	marked, methods := map[string]bool{}, map[string]bool{}
	var specs []*ast.TypeSpec
	for _, f := range files {
		generated := filepath.Base(fset.Position(f.Package).Filename) == DeepCopyFileName
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if !generated && d.Name.Name == "DeepCopyInto" && d.Recv != nil && len(d.Recv.List) == 1 {
					methods[receiverName(d.Recv.List[0].Type)] = true
				}
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					ts, ok := spec.(*ast.TypeSpec)
					if !ok {
						continue
					}
					if hasAny(ts.Doc, typeDeepCopyMarkers) || len(d.Specs) == 1 && hasAny(d.Doc, typeDeepCopyMarkers) {
						marked[ts.Name.Name] = true
						specs = append(specs, ts)
					}
				}
			}
		}
	}
	var errs scanner.ErrorList
	for _, ts := range specs {
		st, ok := ts.Type.(*ast.StructType)
		if !ok {
			continue
		}
		for _, field := range st.Fields.List {
			named := localNamed(pkg, pkg.Scope(), field.Type)
			if named == nil || marked[named.Obj().Name()] || methods[named.Obj().Name()] || !needsDeepCopy(named, map[*types.Named]bool{}) {
				continue
			}
			n := named.Obj().Name()
			errs.Add(fset.Position(field.Type.Pos()), fmt.Sprintf("field %s.%s: the DeepCopy methods of %s would call %s.DeepCopyInto, which nothing generates: package %s asks for DeepCopy methods type by type (it has no doc.go with the package's marker); add a doc.go with \"// +k8s:deepcopy-gen=package\" above \"package %[5]s\" (kopf-gen add-version writes one), or mark %[4]s with +k8s:deepcopy-gen=true",
				ts.Name.Name, fieldName(field, ""), ts.Name.Name, n, pkg.Name()))
		}
	}
	return errs
}

// packageMarked reports whether a package's doc comment has a package
// DeepCopy marker.
func packageMarked(files []*ast.File) bool {
	for _, f := range files {
		for _, cg := range f.Comments {
			if cg.End() < f.Package && hasAny(cg, packageDeepCopyMarkers) {
				return true
			}
		}
	}
	return false
}

func hasAny(cg *ast.CommentGroup, ms []string) bool {
	if cg == nil {
		return false
	}
	for _, c := range cg.List {
		text := strings.TrimSpace(strings.TrimPrefix(c.Text, "//"))
		for _, m := range ms {
			if strings.HasPrefix(text, m) {
				return true
			}
		}
	}
	return false
}

func receiverName(e ast.Expr) string {
	if star, ok := e.(*ast.StarExpr); ok {
		e = star.X
	}
	if id, ok := e.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

// localNamed returns the named type of the package that a field's type is,
// through pointers, slices, arrays and map values, or nil.
func localNamed(pkg *types.Package, scope *types.Scope, e ast.Expr) *types.Named {
	switch e := e.(type) {
	case *ast.Ident:
		tn, _ := scope.Lookup(e.Name).(*types.TypeName)
		if tn == nil || tn.Pkg() != pkg {
			return nil
		}
		named, _ := tn.Type().(*types.Named)
		return named
	case *ast.StarExpr:
		return localNamed(pkg, scope, e.X)
	case *ast.ArrayType:
		return localNamed(pkg, scope, e.Elt)
	case *ast.MapType:
		return localNamed(pkg, scope, e.Value)
	}
	return nil
}

// needsDeepCopy reports whether a value of the type holds references
// (pointers, slices, maps, interfaces) that a plain assignment would share.
func needsDeepCopy(t types.Type, seen map[*types.Named]bool) bool {
	switch t := t.(type) {
	case *types.Named:
		if seen[t] {
			return false
		}
		seen[t] = true
		return needsDeepCopy(t.Underlying(), seen)
	case *types.Alias:
		return needsDeepCopy(types.Unalias(t), seen)
	case *types.Basic:
		return false
	case *types.Array:
		return needsDeepCopy(t.Elem(), seen)
	case *types.Struct:
		for i := range t.NumFields() {
			if needsDeepCopy(t.Field(i).Type(), seen) {
				return true
			}
		}
		return false
	default:
		return true
	}
}
