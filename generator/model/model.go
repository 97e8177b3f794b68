// Package model turns the markers of a loaded package into the handlers and
// registrations that kopf-gen emits, checking everything it can at generate
// time.
//
// # What is checked
//
// Every comment starting with "//kopf:" in a package's files is parsed
// against the marker table. A marker must be in the doc comment of a
// declaration its definition targets; anywhere else it is an error. A
// function carrying handler markers must be a package-level, non-generic
// function with the signature
//
//	func F(ctx context.Context, kw FKwargs) (any, error)
//	func F(ctx context.Context, kw FKwargs) error
//
// where FKwargs (the function's name followed by "Kwargs") is generated.
// Names that the generated file declares (each FKwargs, and Register) must
// not be declared by hand.
//
// # Registrations
//
// Each handler marker registers the function for one reason (create,
// update, delete, resume) of one resource. The handler id defaults to the
// function's name. Markers stacked on one function with the same id and
// selector are merged into one registration with several reasons (as Kopf
// lets one function be both on.resume and on.create) when their common
// options (param, errors, timeout, retries, backoff) are equal; optional=
// belongs to the on.delete marker and deleted= to the on.resume marker, and
// apply to those reasons only. Any other repetition of an id for a
// selector is an error, because the runtime identifies handlers by id.
//
// Handlers and registrations are ordered by file name, then by position in
// the file: the order in which Kopf would have registered them, and the
// order in which the reactor runs the handlers of one cause.
package model

import (
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/scanner"
	"go/token"
	"go/types"
	"path/filepath"
	"time"

	"github.com/kopf-go/kopf/generator/load"
	"github.com/kopf-go/kopf/generator/markers"
	"github.com/kopf-go/kopf/runtime/causes"
	"github.com/kopf-go/kopf/runtime/registry"
	"github.com/kopf-go/kopf/runtime/resources"
)

// RegisterFunc is the name of the generated registration function.
const RegisterFunc = "Register"

// KwargsSuffix follows a handler function's name to name its kwargs type.
const KwargsSuffix = "Kwargs"

// Package is what kopf-gen generates for one Go package.
type Package struct {
	PkgPath string
	Name    string
	Dir     string
	// Handlers are the marked functions, in source order.
	Handlers []*Handler
	// Registrations are the handler registrations, in source order.
	Registrations []*Registration
}

// Handler is one marked function.
type Handler struct {
	// Func is the function's name.
	Func string
	Pos  token.Position
	// Kwargs is the name of the generated kwargs type.
	Kwargs string
	// ReturnsResult is true for (any, error) results, false for error.
	ReturnsResult bool
}

// Registration is one call of the registry's AddChanging.
type Registration struct {
	Handler *Handler
	// Pos is the position of the first marker merged into it.
	Pos      token.Position
	ID       string
	Selector resources.Selector
	// Reasons are in the order of their markers.
	Reasons []causes.Reason
	// Markers are the merged markers, rendered canonically.
	Markers []string

	Param   *string
	Errors  registry.ErrorsMode // "" when not set
	Timeout time.Duration
	Retries int
	Backoff time.Duration
	// Optional comes from an on.delete marker, Deleted from on.resume.
	Optional bool
	Deleted  bool
}

// reasonOf returns the reason a handler marker registers for.
func reasonOf(marker string) (causes.Reason, bool) {
	switch marker {
	case markers.OnCreate:
		return causes.Create, true
	case markers.OnUpdate:
		return causes.Update, true
	case markers.OnDelete:
		return causes.Delete, true
	case markers.OnResume:
		return causes.Resume, true
	}
	return "", false
}

// Build builds the model of one package, or returns every error found as a
// go/scanner.ErrorList. A package without markers yields a Package without
// handlers.
func Build(ctx context.Context, pkg *load.Package, table *markers.Table) (*Package, error) {
	b := &builder{
		pkg:   pkg,
		table: table,
		out:   &Package{PkgPath: pkg.PkgPath, Name: pkg.Name, Dir: pkg.Dir},
		byKey: map[regKey]*Registration{},
	}
	for _, f := range pkg.Files {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("building %s: %w", pkg.PkgPath, err)
		}
		b.file(f)
	}
	b.checkGeneratedNames()
	if len(b.errs) > 0 {
		b.errs.Sort()
		return nil, b.errs
	}
	return b.out, nil
}

type regKey struct {
	id  string
	sel resources.Selector
}

type builder struct {
	pkg   *load.Package
	table *markers.Table
	out   *Package
	errs  scanner.ErrorList
	byKey map[regKey]*Registration
}

func (b *builder) pos(p token.Pos) token.Position { return b.pkg.Fset.Position(p) }

func (b *builder) errorf(p token.Position, format string, args ...any) {
	b.errs.Add(p, fmt.Sprintf(format, args...))
}

// file handles the markers of one file: those in doc comments of
// declarations, then every other one as misplaced.
func (b *builder) file(f *load.File) {
	placed := map[*ast.Comment]bool{}
	for _, decl := range f.AST.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			ms := b.parseDoc(d.Doc, placed)
			if len(ms) > 0 {
				b.funcDecl(d, ms)
			}
		case *ast.GenDecl:
			if d.Tok != token.TYPE {
				for _, m := range b.parseDoc(d.Doc, placed) {
					b.errorf(m.Pos, "%s%s cannot be attached to a %s declaration; it applies to: %s",
						markers.Prefix, m.Name, d.Tok, m.Def.Targets)
				}
				continue
			}
			docs := []*ast.CommentGroup{d.Doc}
			for _, spec := range d.Specs {
				docs = append(docs, spec.(*ast.TypeSpec).Doc)
			}
			for _, doc := range docs {
				for _, m := range b.parseDoc(doc, placed) {
					b.typeMarker(m)
				}
			}
		}
	}
	for _, cg := range f.AST.Comments {
		for _, c := range cg.List {
			if placed[c] || !markers.IsMarker(c.Text) {
				continue
			}
			b.errorf(b.pos(c.Slash), "misplaced marker %s: markers go in the doc comment of a package-level function or type, directly above it with no blank line", c.Text)
		}
	}
}

// parseDoc parses the markers of a doc comment, reporting parse errors and
// marking the comments as placed.
func (b *builder) parseDoc(doc *ast.CommentGroup, placed map[*ast.Comment]bool) []*markers.Marker {
	if doc == nil {
		return nil
	}
	var out []*markers.Marker
	for _, c := range doc.List {
		if !markers.IsMarker(c.Text) {
			continue
		}
		placed[c] = true
		m, err := b.table.Parse(c.Text, b.pos(c.Slash))
		if err != nil {
			b.addErr(err)
			continue
		}
		out = append(out, m)
	}
	return out
}

func (b *builder) addErr(err error) {
	var list scanner.ErrorList
	if errors.As(err, &list) {
		b.errs = append(b.errs, list...)
		return
	}
	b.errs.Add(token.Position{}, err.Error())
}

func (b *builder) typeMarker(m *markers.Marker) {
	if m.Def.Targets&markers.TargetType == 0 {
		b.errorf(m.Pos, "%s%s applies to %s declarations, not types", markers.Prefix, m.Name, m.Def.Targets)
		return
	}
	// No marker targets types yet.
	b.errorf(m.Pos, "%s%s on types is not supported by this kopf-gen", markers.Prefix, m.Name)
}

func (b *builder) funcDecl(d *ast.FuncDecl, ms []*markers.Marker) {
	ok := true
	for _, m := range ms {
		if m.Def.Targets&markers.TargetFunc == 0 {
			b.errorf(m.Pos, "%s%s applies to %s declarations, not functions", markers.Prefix, m.Name, m.Def.Targets)
			ok = false
		} else if _, known := reasonOf(m.Name); !known {
			b.errorf(m.Pos, "%s%s is not supported by this kopf-gen", markers.Prefix, m.Name)
			ok = false
		}
	}
	if !ok {
		return
	}
	name := d.Name.Name
	marker := markers.Prefix + ms[0].Name
	if d.Recv != nil {
		b.errorf(b.pos(d.Name.Pos()), "%s applies to package-level functions, not methods: %s is a method", marker, name)
		return
	}
	if d.Type.TypeParams != nil && len(d.Type.TypeParams.List) > 0 {
		b.errorf(b.pos(d.Type.TypeParams.Opening), "%s applies to non-generic functions: %s has type parameters", marker, name)
		return
	}
	h := &Handler{Func: name, Pos: b.pos(d.Name.Pos()), Kwargs: name + KwargsSuffix}
	if !b.signature(d, h) {
		return
	}
	b.out.Handlers = append(b.out.Handlers, h)
	for _, m := range ms {
		b.register(h, m)
	}
}

// signature checks a handler's signature and records its result form.
func (b *builder) signature(d *ast.FuncDecl, h *Handler) bool {
	want := fmt.Sprintf("want func %s(ctx context.Context, kw %s) (any, error) or func %[1]s(ctx context.Context, kw %[2]s) error", h.Func, h.Kwargs)
	fail := func(p token.Pos, format string, args ...any) bool {
		b.errorf(b.pos(p), "handler %s has the wrong signature: %s; %s", h.Func, fmt.Sprintf(format, args...), want)
		return false
	}
	var params []ast.Expr
	for _, field := range d.Type.Params.List {
		n := max(1, len(field.Names))
		for range n {
			params = append(params, field.Type)
		}
	}
	if len(params) != 2 {
		return fail(d.Type.Params.Opening, "it has %s", plural(len(params), "parameter"))
	}
	if !b.isContext(params[0]) {
		return fail(params[0].Pos(), "the first parameter is %s, not context.Context", b.typeString(params[0]))
	}
	if id, ok := params[1].(*ast.Ident); !ok || id.Name != h.Kwargs {
		return fail(params[1].Pos(), "the second parameter is %s, not %s", b.exprString(params[1]), h.Kwargs)
	}
	var results []ast.Expr
	if d.Type.Results != nil {
		for _, field := range d.Type.Results.List {
			n := max(1, len(field.Names))
			for range n {
				results = append(results, field.Type)
			}
		}
	}
	switch {
	case len(results) == 1 && b.is(results[0], types.Universe.Lookup("error").Type()):
		h.ReturnsResult = false
	case len(results) == 2 && b.isAny(results[0]) && b.is(results[1], types.Universe.Lookup("error").Type()):
		h.ReturnsResult = true
	default:
		p := d.Type.Params.Closing
		if d.Type.Results != nil {
			p = d.Type.Results.Pos()
		}
		return fail(p, "it returns %s", b.resultsString(results))
	}
	return true
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func (b *builder) typeOf(e ast.Expr) types.Type {
	if b.pkg.Info == nil {
		return nil
	}
	t := b.pkg.Info.TypeOf(e)
	if t == nil || t == types.Typ[types.Invalid] {
		return nil
	}
	return t
}

func (b *builder) isContext(e ast.Expr) bool {
	named, ok := b.typeOf(e).(*types.Named)
	if !ok {
		return false
	}
	obj := named.Obj()
	return obj.Pkg() != nil && obj.Pkg().Path() == "context" && obj.Name() == "Context"
}

func (b *builder) is(e ast.Expr, want types.Type) bool {
	t := b.typeOf(e)
	return t != nil && types.Identical(t, want)
}

func (b *builder) isAny(e ast.Expr) bool {
	t := b.typeOf(e)
	if t == nil {
		return false
	}
	iface, ok := t.Underlying().(*types.Interface)
	return ok && iface.Empty() && !isDefined(t)
}

// isDefined reports whether t is a defined (named) type: an empty interface
// type declared with a name is a different type from any.
func isDefined(t types.Type) bool {
	_, named := t.(*types.Named)
	return named
}

func (b *builder) typeString(e ast.Expr) string {
	if t := b.typeOf(e); t != nil {
		return types.TypeString(t, types.RelativeTo(b.pkg.Types))
	}
	return b.exprString(e)
}

func (b *builder) exprString(e ast.Expr) string { return types.ExprString(e) }

func (b *builder) resultsString(results []ast.Expr) string {
	switch len(results) {
	case 0:
		return "nothing"
	case 1:
		return b.typeString(results[0])
	}
	s := "("
	for i, r := range results {
		if i > 0 {
			s += ", "
		}
		s += b.typeString(r)
	}
	return s + ")"
}

// register adds or merges the registration of one marker.
func (b *builder) register(h *Handler, m *markers.Marker) {
	reason, _ := reasonOf(m.Name) // checked by funcDecl
	r := &Registration{
		Handler:  h,
		Pos:      m.Pos,
		ID:       h.Func,
		Selector: m.Positional[0].Go.(resources.Selector),
		Reasons:  []causes.Reason{reason},
		Markers:  []string{m.String()},
	}
	for _, a := range m.Args {
		switch a.Name {
		case "id":
			r.ID = a.Go.(string)
		case "param":
			s := a.Go.(string)
			r.Param = &s
		case "errors":
			r.Errors = registry.ErrorsMode(a.Go.(string))
		case "timeout":
			r.Timeout = a.Go.(time.Duration)
		case "retries":
			r.Retries = a.Go.(int)
		case "backoff":
			r.Backoff = a.Go.(time.Duration)
		case "optional":
			r.Optional = a.Go.(bool)
		case "deleted":
			r.Deleted = a.Go.(bool)
		default:
			b.errorf(a.NamePos, "argument %s of %s%s is not supported by this kopf-gen", a.Name, markers.Prefix, m.Name)
			return
		}
	}
	key := regKey{id: r.ID, sel: r.Selector}
	prev, dup := b.byKey[key]
	if !dup {
		b.byKey[key] = r
		b.out.Registrations = append(b.out.Registrations, r)
		return
	}
	if prev.Handler != h {
		b.errorf(m.Pos, "handler id %q is already used for %s by %s at %s; set a distinct id=",
			r.ID, selectorString(r.Selector), prev.Handler.Func, where(prev.Pos, m.Pos))
		return
	}
	for _, reason := range prev.Reasons {
		if reason == r.Reasons[0] {
			b.errorf(m.Pos, "duplicate %s%s: handler id %q is already registered for %s of %s at %s; set a distinct id=",
				markers.Prefix, m.Name, r.ID, reason, selectorString(r.Selector), where(prev.Pos, m.Pos))
			return
		}
	}
	if !sameOptions(prev, r) {
		b.errorf(m.Pos, "%s%s repeats handler id %q for %s with different options than %s; stacked markers share a registration only if param, errors, timeout, retries and backoff are equal, so set a distinct id=",
			markers.Prefix, m.Name, r.ID, selectorString(r.Selector), where(prev.Pos, m.Pos))
		return
	}
	prev.Reasons = append(prev.Reasons, r.Reasons...)
	prev.Markers = append(prev.Markers, r.Markers...)
	prev.Optional = prev.Optional || r.Optional
	prev.Deleted = prev.Deleted || r.Deleted
}

// where renders an earlier position for a message at cur: "line 5" in the
// same file, "other.go:5:1" in another file of the package.
func where(prev, cur token.Position) string {
	if prev.Filename == cur.Filename {
		return fmt.Sprintf("line %d", prev.Line)
	}
	return fmt.Sprintf("%s:%d:%d", filepath.Base(prev.Filename), prev.Line, prev.Column)
}

func sameOptions(a, b *Registration) bool {
	if (a.Param == nil) != (b.Param == nil) || a.Param != nil && *a.Param != *b.Param {
		return false
	}
	return a.Errors == b.Errors && a.Timeout == b.Timeout && a.Retries == b.Retries && a.Backoff == b.Backoff
}

func selectorString(s resources.Selector) string { return s.String() }

// checkGeneratedNames reports hand-written declarations of the names that
// the generated file declares.
func (b *builder) checkGeneratedNames() {
	if len(b.out.Handlers) == 0 || b.pkg.Types == nil {
		return
	}
	scope := b.pkg.Types.Scope()
	check := func(name, what string) {
		obj := scope.Lookup(name)
		if obj == nil {
			return
		}
		b.errorf(b.pos(obj.Pos()), "%s is declared here, but kopf-gen generates %s; rename one of them", name, what)
	}
	check(RegisterFunc, "the package's "+RegisterFunc+" function")
	for _, h := range b.out.Handlers {
		check(h.Kwargs, "it as the kwargs type of handler "+h.Func)
	}
	// The package names the generated file imports: a package-level
	// declaration of one of them would clash with the import.
	for _, name := range []string{"context", "kopf", "slog", "time"} {
		check(name, "a file importing a package under that name")
	}
	for _, h := range b.out.Handlers {
		// The parameters in scope where the generated code calls a handler:
		// a handler of that name would be shadowed.
		for _, local := range []string{"ctx", "kw", "r"} {
			if h.Func == local {
				b.errorf(h.Pos, "handler %s has the name of a variable of the generated code; rename it", h.Func)
			}
		}
	}
}
