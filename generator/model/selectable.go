package model

import (
	"go/ast"
	"go/token"
	"regexp"
	"strings"
)

// typeDocs returns the doc comments of the type whose //kopf:resource
// marker is at pos (in the package or one it imports), where
// controller-tools reads a type's markers: the comment group holding the
// marker, and the group right above it after one blank line, if any.
func (b *builder) typeDocs(pos token.Position) []*ast.CommentGroup {
	files := b.pkg.Files
	for _, dep := range b.pkg.Deps {
		files = append(files[:len(files):len(files)], dep.Files...)
	}
	for _, f := range files {
		if f.AST == nil || b.pkg.Fset.Position(f.AST.Pos()).Filename != pos.Filename {
			continue
		}
		for i, cg := range f.AST.Comments {
			start, end := b.pkg.Fset.Position(cg.Pos()), b.pkg.Fset.Position(cg.End())
			if pos.Offset < start.Offset || pos.Offset >= end.Offset {
				continue
			}
			out := []*ast.CommentGroup{cg}
			if i > 0 && b.pkg.Fset.Position(f.AST.Comments[i-1].End()).Line == start.Line-2 {
				out = append(out, f.AST.Comments[i-1])
			}
			return out
		}
	}
	return nil
}

// simplePath is a jsonPath that names a field by its keys, as a field
// selector names it once its leading dot is dropped (.spec.phase).
var simplePath = regexp.MustCompile(`^(\.[A-Za-z0-9_-]+)+$`)

// selectableFields returns the paths of the +kubebuilder:selectablefield
// markers in the doc comments of the type whose //kopf:resource marker is
// at pos, without their leading dot, in source order: the fields its CRD
// version's selectableFields lets the API server select on. A jsonPath
// other than a plain path of keys is left out: no filter's field= names
// it as the API server does.
func (b *builder) selectableFields(pos token.Position) []string {
	var out []string
	docs := b.typeDocs(pos)
	for i := len(docs) - 1; i >= 0; i-- { // the group above first
		for _, c := range docs[i].List {
			if p, ok := b.table.KubebuilderSelectableField(c.Text); ok && simplePath.MatchString(p) {
				out = append(out, strings.TrimPrefix(p, "."))
			}
		}
	}
	return out
}
