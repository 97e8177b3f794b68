package model

import (
	"errors"
	"go/ast"
	"go/token"
	"sort"
	"strings"

	"golang.org/x/tools/go/packages"
	"sigs.k8s.io/controller-tools/pkg/loader"
	ctmarkers "sigs.k8s.io/controller-tools/pkg/markers"
	"sigs.k8s.io/controller-tools/pkg/rbac"

	"github.com/kopf-go/kopf/generator/load"
	"github.com/kopf-go/kopf/generator/markers"
)

// RBACRule is the rule of one rbac marker: what the handlers' own API
// calls need, granted by the generated role (see package manifests).
//
// Two markers give rules, with the same arguments and meaning:
// //kopf:rbac, in the doc comment of a package-level function (the
// handler that makes the calls, typically) or of the package clause, and
// controller-gen's +kubebuilder:rbac, read through controller-tools
// where controller-gen reads it: at package level (the package's doc
// comment, or a comment group of its own outside declarations, such as
// above a function's doc comment with a blank line between them; never a
// doc comment of a function or type, nor inside a declaration).
//
// A +kubebuilder:rbac marker that controller-gen would not read, or that
// controller-tools cannot parse, is a warning at its position, and gives
// no rule. A rule that the API server would refuse (resources without
// groups, urls= with resources or in a namespace) or a verb that is most
// likely a typo is an error, for either marker.
type RBACRule struct {
	rbac.Rule
	// Pos is the marker's position; Marker its name as written
	// (//kopf:rbac or +kubebuilder:rbac).
	Pos    token.Position
	Marker string
}

// kopfRBAC records the rule of a //kopf:rbac marker.
func (b *builder) kopfRBAC(m *markers.Marker) {
	b.rbacRule(m.RBACRule(), m.Pos, markers.Prefix+markers.RBAC)
}

// rbacRule checks a rule and records it.
func (b *builder) rbacRule(r rbac.Rule, pos token.Position, marker string) {
	if msgs := markers.CheckRBACRule(r); len(msgs) > 0 {
		for _, msg := range msgs {
			b.errorf(pos, "%s: %s", marker, msg)
		}
		return
	}
	b.out.RBAC = append(b.out.RBAC, &RBACRule{Rule: r, Pos: pos, Marker: marker})
}

// splitRBAC records the //kopf:rbac markers of a function's doc comment
// and returns its other markers.
func (b *builder) splitRBAC(d *ast.FuncDecl, ms []*markers.Marker) []*markers.Marker {
	out := ms[:0:0]
	for _, m := range ms {
		switch {
		case m.Name != markers.RBAC:
			out = append(out, m)
		case d.Recv != nil:
			b.errorf(m.Pos, "%s%s applies to package-level functions and the package clause, not methods: %s is a method",
				markers.Prefix, m.Name, d.Name.Name)
		default:
			b.kopfRBAC(m)
		}
	}
	return out
}

// packageMarkers handles the markers of a file's package clause.
func (b *builder) packageMarkers(f *ast.File, placed map[*ast.Comment]bool) {
	for _, m := range b.parseDoc(f.Doc, placed) {
		if m.Def.Targets&markers.TargetPackage == 0 {
			b.errorf(m.Pos, "%s%s applies to %s declarations, not the package clause", markers.Prefix, m.Name, m.Def.Targets)
			continue
		}
		b.kopfRBAC(m)
	}
}

// kubebuilderRBAC reads the +kubebuilder:rbac markers of a file where
// controller-gen reads them, and warns about the others and about those
// that controller-tools cannot parse.
func (b *builder) kubebuilderRBAC(f *load.File) {
	var found []*ast.Comment
	for _, cg := range f.AST.Comments {
		for _, c := range cg.List {
			if text, ok := markers.KubebuilderText(c.Text); ok && b.table.IsKubebuilderRBAC(text) {
				found = append(found, c)
			}
		}
	}
	if len(found) == 0 {
		return
	}
	read, err := readByControllerGen(f.AST, found)
	if err != nil {
		b.errorf(b.pos(f.AST.Package), "reading the %s markers with controller-tools: %v", markers.KubebuilderRBAC, err)
		return
	}
	for _, c := range found {
		pos := b.pos(c.Slash)
		if !read[c] {
			b.warnf(pos, "%s here is not read: controller-gen and kopf-gen read it at package level only: in the package's doc comment or in a comment group of its own outside declarations (above a function's doc comment, with a blank line between them), not in a doc comment; or write //kopf:rbac in the doc comment of the handler",
				markers.KubebuilderRBAC)
			continue
		}
		text, _ := markers.KubebuilderText(c.Text)
		r, err := markers.ParseKubebuilderRBAC(text)
		var ke *markers.KubebuilderError
		if errors.As(err, &ke) {
			at := pos
			off := strings.Index(c.Text, text) + ke.Offset
			at.Offset, at.Column = at.Offset+off, at.Column+off
			b.warnf(at, "%v; kopf-gen skips the marker (controller-gen would fail)", err)
			continue
		}
		b.rbacRule(r, pos, markers.KubebuilderRBAC)
	}
}

// rbacSeen is the value of controller-gen's RBAC marker as
// readByControllerGen collects it: its text, whatever its arguments.
type rbacSeen string

// ParseMarker implements controller-tools' markerParser.
func (s *rbacSeen) ParseMarker(_, anonymousName, fields string) error {
	*s = rbacSeen(anonymousName + "=" + fields)
	return nil
}

// seenKey is the key of a marker's text as rbacSeen records it.
func seenKey(c *ast.Comment) rbacSeen {
	text, _ := markers.KubebuilderText(c.Text)
	name, fields, _ := strings.Cut(strings.TrimPrefix(text, "+"), "=")
	return rbacSeen(name + "=" + fields)
}

// readByControllerGen tells which of the +kubebuilder:rbac comments of a
// file controller-gen reads, by asking controller-tools' collector, the
// one that controller-gen uses, for the file's package-level markers. The
// collector gives their texts, not their positions: of several comments
// with the same text (the same rule), those outside declarations and doc
// comments are taken as the ones read first.
func readByControllerGen(file *ast.File, found []*ast.Comment) (map[*ast.Comment]bool, error) {
	def, err := ctmarkers.MakeDefinition(rbac.RuleDefinition.Name, ctmarkers.DescribesPackage, rbacSeen(""))
	if err != nil {
		return nil, err
	}
	reg := &ctmarkers.Registry{}
	if err := reg.Register(def); err != nil {
		return nil, err
	}
	pkg := &loader.Package{Package: &packages.Package{ID: "kopf-gen", Syntax: []*ast.File{file}}}
	byNode, err := (&ctmarkers.Collector{Registry: reg}).MarkersInPackage(pkg)
	if err != nil {
		return nil, err
	}
	count := map[rbacSeen]int{}
	for _, v := range byNode[file][def.Name] {
		count[v.(rbacSeen)]++
	}
	candidates := append([]*ast.Comment(nil), found...)
	inDecl := declared(file)
	sort.SliceStable(candidates, func(i, j int) bool { return !inDecl(candidates[i]) && inDecl(candidates[j]) })
	read := map[*ast.Comment]bool{}
	for _, c := range candidates {
		if k := seenKey(c); count[k] > 0 {
			count[k]--
			read[c] = true
		}
	}
	return read, nil
}

// declared returns whether a comment is in a declaration's doc comment or
// inside a declaration.
func declared(file *ast.File) func(*ast.Comment) bool {
	type span struct{ from, to token.Pos }
	var spans []span
	for _, d := range file.Decls {
		from := d.Pos()
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Doc != nil {
				from = d.Doc.Pos()
			}
		case *ast.GenDecl:
			if d.Doc != nil {
				from = d.Doc.Pos()
			}
		}
		spans = append(spans, span{from, d.End()})
	}
	return func(c *ast.Comment) bool {
		for _, s := range spans {
			if c.Pos() >= s.from && c.Pos() < s.to {
				return true
			}
		}
		return false
	}
}
