package model

import (
	"go/ast"
	"go/types"
	"strings"
)

// fieldOldNew warns where a typed field handler (on.field, or field= on
// another changing marker) reads kw.Old or kw.New: those are the whole old
// and new objects decoded as *T, while Kopf's old and new of a field
// handler, which a port copies, are the field's values: kw.Changing.Old and
// kw.Changing.New. A literal port compiles and is silently wrong, hence the
// warning at each read, unless the function also reads kw.Changing.Old or
// kw.Changing.New: then it tells the two apart.
func (b *builder) fieldOldNew(d *ast.FuncDecl, h *Handler, regs []*Registration) {
	if h.Kind != Changing || h.Typed == nil || d.Body == nil {
		return
	}
	var field []string
	for _, r := range regs {
		if r.Field != nil {
			field = r.Field
			break
		}
	}
	params := d.Type.Params.List
	if field == nil || len(params) != 2 || len(params[1].Names) != 1 {
		return
	}
	kw := params[1].Names[0]
	var kwObj types.Object
	if b.pkg.Info != nil {
		kwObj = b.pkg.Info.Defs[kw]
	}
	isKw := func(e ast.Expr) bool {
		x, ok := e.(*ast.Ident)
		// Not another variable of the same name.
		return ok && x.Name == kw.Name && (kwObj == nil || b.pkg.Info.Uses[x] == nil || b.pkg.Info.Uses[x] == kwObj)
	}
	var reads []*ast.SelectorExpr
	knows := false // the function reads kw.Changing.Old or .New: it tells them apart
	ast.Inspect(d.Body, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok || sel.Sel.Name != "Old" && sel.Sel.Name != "New" {
			return true
		}
		if inner, ok := sel.X.(*ast.SelectorExpr); ok && inner.Sel.Name == "Changing" && isKw(inner.X) {
			knows = true
		} else if isKw(sel.X) {
			reads = append(reads, sel)
		}
		return true
	})
	if knows {
		return
	}
	for _, sel := range reads {
		x := sel.X.(*ast.Ident)
		b.warnf(b.pos(sel.Pos()), "%s.%s in field handler %s is the whole %s object decoded as *%s, not the value of %s as Kopf's %s is: use %s.Changing.%[2]s for the field's value",
			x.Name, sel.Sel.Name, h.Func, strings.ToLower(sel.Sel.Name), types.TypeString(h.Typed.Object, b.qualifier), strings.Join(field, "."), strings.ToLower(sel.Sel.Name), x.Name)
	}
}
