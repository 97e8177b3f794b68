package model

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"math"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/kopf-go/kopf/generator/builtins"
	"github.com/kopf-go/kopf/generator/load"
	"github.com/kopf-go/kopf/generator/markers"
	"github.com/kopf-go/kopf/runtime/resources"
)

// Typed is a resource whose objects decode into a Go struct type: a type
// with the //kopf:resource marker, or a built-in resource.
//
// A handler's selector names a typed resource when its name is one of the
// resource's Names, its group (if it has one, or if it is the core group)
// is the resource's, and its version (if it has one) is the resource's.
// The Names of a //kopf:resource type are the name in the marker, the
// type's name (the kind) and its lower-case form (the singular); those of
// a built-in are its plural, singular, kind and short names.
type Typed struct {
	// Object is the Go type T of the objects.
	Object *types.Named
	// Spec and Status are the types of T's fields with the JSON names spec
	// and status, nil when T has no such field; SpecField and StatusField
	// are those fields' Go names.
	Spec, Status           types.Type
	SpecField, StatusField string
	Group, Version         string
	Names                  []string
	// Pos is the position of the //kopf:resource marker; zero for
	// built-ins.
	Pos token.Position
	// Builtin is the built-in resource, or nil.
	Builtin *builtins.Resource
	// Storage is true when the type is marked as its kind's storage
	// version (+kubebuilder:storageversion, see conversion.go).
	Storage bool
	// SelectableFields are the paths of the type's
	// +kubebuilder:selectablefield markers, without their leading dot
	// (spec.phase): its CRD version's selectableFields (selectable.go).
	SelectableFields []string
}

// describe names the resource and its type, e.g. "kopf.dev/v1/kopfexamples
// (api.KopfExample)".
func (t *Typed) describe(q types.Qualifier) string {
	sel := resources.Selector{Group: t.Group, Version: t.Version, Name: t.Names[0]}
	return fmt.Sprintf("%s (%s)", sel, types.TypeString(t.Object, q))
}

func (t *Typed) matches(s resources.Selector) bool {
	if !slices.Contains(t.Names, s.Name) {
		return false
	}
	if (s.Group != "" || s.Core) && s.Group != t.Group {
		return false
	}
	return s.Version == "" || s.Version == t.Version
}

// resource checks a //kopf:resource marker on a type declaration, in the
// package pkg (the package being built or one of its imports), and returns
// the typed resource, or nil after reporting errors.
func (b *builder) resource(m *markers.Marker, spec *ast.TypeSpec, pkg *types.Package) *Typed {
	name := spec.Name.Name
	sel := m.Positional[0].Go.(resources.Selector)
	ok := true
	if sel.Version == "" || sel.Name == markers.Everything {
		b.errorf(m.Positional[0].Pos, "resource: %s%s needs one resource with its version: group/version/plural, group/version/Kind, plural.version.group or v1/plural (core)",
			markers.Prefix, m.Name)
		ok = false
	}
	if spec.Assign.IsValid() {
		b.errorf(m.Pos, "%s%s applies to struct type declarations: %s is an alias", markers.Prefix, m.Name, name)
		return nil
	}
	if spec.TypeParams != nil && len(spec.TypeParams.List) > 0 {
		b.errorf(m.Pos, "%s%s applies to non-generic types: %s has type parameters", markers.Prefix, m.Name, name)
		return nil
	}
	if _, isStruct := spec.Type.(*ast.StructType); !isStruct {
		b.errorf(m.Pos, "%s%s applies to struct types: %s is %s", markers.Prefix, m.Name, name, types.ExprString(spec.Type))
		return nil
	}
	if !ok || pkg == nil {
		return nil
	}
	tn, _ := pkg.Scope().Lookup(name).(*types.TypeName)
	if tn == nil {
		return nil // not type-checked: nothing to check against
	}
	named, _ := tn.Type().(*types.Named)
	if named == nil {
		return nil
	}
	t := &Typed{
		Object:  named,
		Group:   sel.Group,
		Version: sel.Version,
		Names:   []string{sel.Name},
		Pos:     m.Pos,
		Storage: b.storageMarked(m.Pos),

		SelectableFields: b.selectableFields(m.Pos),
	}
	for _, n := range []string{name, strings.ToLower(name)} {
		if !slices.Contains(t.Names, n) {
			t.Names = append(t.Names, n)
		}
	}
	// Only fields declared in T itself: a field promoted through an
	// embedded pointer could be out of reach.
	fields := jsonFields(named)
	st := named.Underlying().(*types.Struct)
	direct := func(f *types.Var) bool {
		for i := range st.NumFields() {
			if st.Field(i) == f {
				return true
			}
		}
		return false
	}
	if f := fields["spec"]; f != nil && direct(f) {
		t.Spec, t.SpecField = f.Type(), f.Name()
	}
	if f := fields["status"]; f != nil && direct(f) {
		t.Status, t.StatusField = f.Type(), f.Name()
	}
	return t
}

// addTyped records a typed resource, unless its type or its resource was
// declared already; it reports whether it did.
func (b *builder) addTyped(t *Typed) bool {
	for _, prev := range b.typed {
		switch {
		case prev.Object == t.Object:
			b.errorf(t.Pos, "%s already has a %s%s marker at %s", t.Object.Obj().Name(), markers.Prefix, markers.Resource, where(prev.Pos, t.Pos))
			return false
		case prev.Group == t.Group && prev.Version == t.Version && prev.Names[0] == t.Names[0]:
			b.errorf(t.Pos, "resource %s is already the type of %s at %s", resources.Selector{Group: t.Group, Version: t.Version, Name: t.Names[0]},
				types.TypeString(prev.Object, b.qualifier), where(prev.Pos, t.Pos))
			return false
		}
	}
	b.typed = append(b.typed, t)
	return true
}

// Matches reports whether a handler's selector names the typed resource
// (see [Typed] for the rules).
func (t *Typed) Matches(s resources.Selector) bool { return t.matches(s) }

// depResources records the typed resources of the packages imported
// directly. Only //kopf:resource markers on type declarations are read
// there; the rest is the business of those packages' own generation.
func (b *builder) depResources() {
	for _, dep := range b.pkg.Deps {
		if dep.PkgPath == b.pkg.PkgPath || dep.Types == nil {
			continue
		}
		for _, f := range dep.Files {
			for _, decl := range f.AST.Decls {
				d, ok := decl.(*ast.GenDecl)
				if !ok || d.Tok != token.TYPE {
					continue
				}
				for _, spec := range d.Specs {
					ts := spec.(*ast.TypeSpec)
					docs := []*ast.CommentGroup{ts.Doc}
					if len(d.Specs) == 1 {
						docs = append(docs, d.Doc)
					}
					for _, doc := range docs {
						for _, m := range b.resourceMarkers(doc) {
							if !ast.IsExported(ts.Name.Name) {
								b.errorf(m.Pos, "%s%s on unexported type %s cannot serve the packages importing %s; export it",
									markers.Prefix, m.Name, ts.Name.Name, dep.PkgPath)
								continue
							}
							if t := b.resource(m, ts, dep.Types); t != nil {
								b.addTyped(t)
							}
						}
					}
				}
			}
		}
	}
}

// resourceMarkers parses the //kopf:resource markers of a doc comment of
// an imported package, reporting their errors.
func (b *builder) resourceMarkers(doc *ast.CommentGroup) []*markers.Marker {
	if doc == nil {
		return nil
	}
	var out []*markers.Marker
	for _, c := range doc.List {
		rest, ok := strings.CutPrefix(c.Text, load.ResourceMarker)
		if !ok || rest != "" && rest[0] != ' ' && rest[0] != '\t' {
			continue
		}
		m, err := b.table.Parse(c.Text, b.pos(c.Slash))
		if err != nil {
			b.addErr(err)
			continue
		}
		out = append(out, m)
	}
	return out
}

// typedFor returns the typed resource that a handler marker's selector
// names, or nil.
func (b *builder) typedFor(m *markers.Marker) *Typed {
	sel := m.Positional[0].Go.(resources.Selector)
	var found []*Typed
	for _, t := range b.typed {
		if t.matches(sel) {
			found = append(found, t)
		}
	}
	switch len(found) {
	case 0:
	case 1:
		return found[0]
	default:
		var names []string
		for _, t := range found {
			names = append(names, t.describe(b.qualifier))
		}
		b.errorf(m.Positional[0].Pos, "resource: %s names several typed resources: %s; add the group and version",
			m.Positional[0].Raw, strings.Join(names, ", "))
		return nil
	}
	for i, bi := range builtins.Table() {
		t := &Typed{Group: bi.Group, Version: bi.Version, Names: bi.Names()}
		if !t.matches(sel) {
			continue
		}
		if cached, ok := b.builtinTyped[i]; ok {
			return cached
		}
		pkg := types.NewPackage(bi.Package, "v1")
		mk := func(name string) *types.Named {
			return types.NewNamed(types.NewTypeName(token.NoPos, pkg, name, nil), types.NewStruct(nil, nil), nil)
		}
		t.Object = mk(bi.Kind)
		if bi.Spec != "" {
			t.Spec, t.SpecField = mk(bi.Spec), "Spec"
		}
		if bi.Status != "" {
			t.Status, t.StatusField = mk(bi.Status), "Status"
		}
		t.Builtin = &bi
		if b.builtinTyped == nil {
			b.builtinTyped = map[int]*Typed{}
		}
		b.builtinTyped[i] = t
		return t
	}
	return nil
}

// useTyped records the imports that a typed handler's kwargs need, and
// checks that generated code can refer to their types.
func (b *builder) useTyped(h *Handler) bool {
	t := h.Typed
	if t.Builtin != nil {
		b.imports[t.Builtin.Package] = Import{Path: t.Builtin.Package, Name: "v1", Alias: t.Builtin.Alias}
		return true
	}
	ok := true
	for _, part := range []struct {
		what string
		typ  types.Type
	}{{"Object", types.NewPointer(t.Object)}, {"Spec", t.Spec}, {"Status", t.Status}} {
		if part.typ == nil {
			continue
		}
		imports := map[string]Import{}
		if why := b.referable(part.typ, imports); why != "" {
			b.errorf(h.Pos, "handler %s: kw.%s would have type %s, which generated code cannot refer to: %s",
				h.Func, part.what, types.TypeString(part.typ, b.qualifier), why)
			ok = false
			continue
		}
		for path, imp := range imports {
			b.imports[path] = imp
		}
	}
	return ok
}

// referable checks that the generated file can spell t, collecting the
// packages it must import; it returns why not, or "".
func (b *builder) referable(t types.Type, imports map[string]Import) string {
	switch t := t.(type) {
	case *types.Named, *types.Alias:
		obj := t.(interface{ Obj() *types.TypeName }).Obj()
		if obj.Pkg() == nil { // error, comparable
			return ""
		}
		if obj.Pkg() != b.pkg.Types && obj.Pkg().Path() != b.pkg.PkgPath {
			if !obj.Exported() {
				return fmt.Sprintf("%s is not exported", obj.Name())
			}
			path := obj.Pkg().Path()
			imports[path] = Import{Path: path, Name: obj.Pkg().Name(), Alias: k8sAlias(path)}
		}
		if named, isNamed := t.(*types.Named); isNamed && named.TypeArgs() != nil {
			for i := range named.TypeArgs().Len() {
				if why := b.referable(named.TypeArgs().At(i), imports); why != "" {
					return why
				}
			}
		}
		return ""
	case *types.Basic:
		return ""
	case *types.Pointer:
		return b.referable(t.Elem(), imports)
	case *types.Slice:
		return b.referable(t.Elem(), imports)
	case *types.Array:
		return b.referable(t.Elem(), imports)
	case *types.Map:
		if why := b.referable(t.Key(), imports); why != "" {
			return why
		}
		return b.referable(t.Elem(), imports)
	case *types.Interface:
		if t.Empty() {
			return ""
		}
		return "kopf-gen renders only empty interfaces; use a named type"
	default:
		return "kopf-gen does not render unnamed " + strings.ToLower(strings.TrimPrefix(fmt.Sprintf("%T", t), "*types.")) + " types; use a named type"
	}
}

// qualifier renders the packages of types in messages: by the names the
// generated file imports them as, nothing for the package itself.
func (b *builder) qualifier(p *types.Package) string {
	if p.Path() == b.pkg.PkgPath {
		return ""
	}
	if alias := k8sAlias(p.Path()); alias != "" {
		return alias
	}
	return p.Name()
}

// k8sAlias returns the conventional import name of Kubernetes API packages
// (corev1, appsv1, metav1), or "".
func k8sAlias(path string) string {
	if path == "k8s.io/apimachinery/pkg/apis/meta/v1" {
		return "metav1"
	}
	rest, ok := strings.CutPrefix(path, "k8s.io/api/")
	if !ok {
		return ""
	}
	group, version, ok := strings.Cut(rest, "/")
	if !ok || strings.Contains(version, "/") || !token.IsIdentifier(group+version) {
		return ""
	}
	return group + version
}

// checkField checks a field path against the JSON field names of a typed
// resource's Go type, reporting the first part that does not exist. n is
// the field= value, to point at the part. It returns the Go type at the
// path (nil when any JSON value may be there), and false after an error.
func (b *builder) checkField(t *Typed, path []string, n markers.Node) (types.Type, bool) {
	obj, ok := b.objectType(t, n.Pos)
	if !ok {
		return nil, false
	}
	at, i, why := walkJSON(obj, path, b.qualifier)
	if i < 0 {
		return at, true
	}
	b.errorf(markers.FieldSegmentPos(n, i), "field: %s", why)
	return nil, false
}

// objectType returns the Go type of a typed resource's objects, loading
// the type of a built-in from its package; pos is where to report a
// failure to load it.
func (b *builder) objectType(t *Typed, pos token.Position) (types.Type, bool) {
	if t.Builtin == nil {
		return t.Object, true
	}
	pkg, err := b.pkg.Import(b.ctx, t.Builtin.Package)
	if err != nil {
		b.errorf(pos, "field: cannot check the field against %s.%s: %v", t.Builtin.Alias, t.Builtin.Kind, err)
		return nil, false
	}
	tn, _ := pkg.Scope().Lookup(t.Builtin.Kind).(*types.TypeName)
	if tn == nil {
		b.errorf(pos, "field: cannot check the field against %s.%s: %s has no type %[2]s", t.Builtin.Alias, t.Builtin.Kind, t.Builtin.Package)
		return nil, false
	}
	return tn.Type(), true
}

// walkJSON follows a field path through t by JSON names, as the API
// server's objects decode into t. It returns the type at the end of the
// path and -1, or the index of the first part that cannot exist and why.
// Maps are followed into their values; interfaces and types that decode
// themselves (json.Unmarshaler) accept any rest, and the type returned is
// then nil: anything may be there.
func walkJSON(t types.Type, path []string, q types.Qualifier) (types.Type, int, string) {
	root := types.TypeString(t, q)
	where := func(i int) string {
		if i == 0 {
			return root
		}
		return strings.Join(path[:i], ".") + " of " + root
	}
	for i, seg := range path {
		t = deref(t)
		if decodesItself(t) {
			return nil, -1, ""
		}
		switch u := t.Underlying().(type) {
		case *types.Struct:
			fields := jsonFields(t)
			f := fields[seg]
			if f == nil {
				names := make([]string, 0, len(fields))
				for name := range fields {
					names = append(names, name)
				}
				sort.Strings(names)
				what := where(i)
				if i > 0 {
					what += " (" + types.TypeString(t, q) + ")"
				}
				var have string
				switch s := markers.Suggest(seg, names); {
				case s != "":
					have = "did you mean " + s + "?"
				case len(names) == 0:
					have = "it has no JSON fields"
				case len(names) <= 12:
					have = "it has " + strings.Join(names, ", ")
				default:
					have = fmt.Sprintf("it has %d others", len(names))
				}
				return nil, i, fmt.Sprintf("no %q in %s; %s", seg, what, have)
			}
			t = f.Type()
		case *types.Map:
			t = u.Elem()
		case *types.Interface:
			return nil, -1, ""
		case *types.Slice, *types.Array:
			if isBytes(u) {
				return nil, i, fmt.Sprintf("%s is a string (%s): it has no %q", where(i), types.TypeString(t, q), seg)
			}
			return nil, i, fmt.Sprintf("%s is a list (%s): field paths cannot go into lists", where(i), types.TypeString(t, q))
		default:
			return nil, i, fmt.Sprintf("%s is a %s: it has no %q", where(i), types.TypeString(t, q), seg)
		}
	}
	t = deref(t)
	if decodesItself(t) {
		return nil, -1, ""
	}
	if _, any := t.Underlying().(*types.Interface); any {
		return nil, -1, ""
	}
	return t, -1, ""
}

// deref follows pointers: a JSON value decodes into *T as into T.
func deref(t types.Type) types.Type {
	for {
		p, ok := t.Underlying().(*types.Pointer)
		if !ok {
			return t
		}
		t = p.Elem()
	}
}

// The kinds of JSON values a Go type decodes from, for checking value=,
// old= and new= literals against a typed field.
type jsonKind int

const (
	jsonAny jsonKind = iota // anything, or unknown: nothing is checked
	jsonString
	jsonBool
	jsonInteger
	jsonNumber
	jsonObject
	jsonList
)

func (k jsonKind) String() string {
	switch k {
	case jsonString:
		return "a string"
	case jsonBool:
		return "a boolean"
	case jsonInteger:
		return "an integer"
	case jsonNumber:
		return "a number"
	case jsonObject:
		return "an object"
	case jsonList:
		return "a list"
	default:
		return "anything"
	}
}

// kindOf returns the kind of JSON values that t decodes from; jsonAny for
// types that decode themselves (from JSON or text) and for interfaces.
func kindOf(t types.Type) jsonKind {
	if t == nil {
		return jsonAny
	}
	t = deref(t)
	if decodesItself(t) || hasMethod(t, "UnmarshalText") {
		return jsonAny
	}
	switch u := t.Underlying().(type) {
	case *types.Basic:
		switch {
		case u.Info()&types.IsString != 0:
			return jsonString
		case u.Info()&types.IsBoolean != 0:
			return jsonBool
		case u.Info()&types.IsInteger != 0:
			return jsonInteger
		case u.Info()&types.IsFloat != 0:
			return jsonNumber
		}
	case *types.Struct, *types.Map:
		return jsonObject
	case *types.Slice:
		if isBytes(u) {
			return jsonString // base64
		}
		return jsonList
	case *types.Array:
		return jsonList
	}
	return jsonAny
}

// checkValues checks the literals of value=, old= and new= of a typed
// handler against the Go type at its field (at; nil for anything): a
// literal that the field can never hold is an error.
func (b *builder) checkValues(t *Typed, r *Registration, m *markers.Marker, at types.Type) bool {
	want := kindOf(at)
	if want == jsonAny {
		return true
	}
	ok := true
	for _, v := range []struct {
		name string
		f    *Filter
	}{{"value", r.Value}, {"old", r.Old}, {"new", r.New}} {
		if v.f == nil || v.f.Kind != markers.MatchEqual {
			continue
		}
		a, _ := m.Arg(v.name)
		if why := b.mismatch(t, r.Field, at, want, v.f.Value, a.Node); why != "" {
			b.errorf(a.Pos, "%s: %s", v.name, why)
			ok = false
		}
	}
	return ok
}

// mismatch says why a literal can never equal a field of kind want, or "".
func (b *builder) mismatch(t *Typed, path []string, at types.Type, want jsonKind, lit any, n markers.Node) string {
	var got string
	fits := false
	switch v := lit.(type) {
	case string:
		got, fits = "the string "+strconv.Quote(v), want == jsonString
	case bool:
		got, fits = "the boolean "+n.Text, want == jsonBool
	case int64:
		got, fits = "the number "+n.Text, want == jsonInteger || want == jsonNumber
	case float64:
		got = "the number " + n.Text
		fits = want == jsonNumber || want == jsonInteger && v == math.Trunc(v)
	default:
		return ""
	}
	if fits {
		return ""
	}
	root := types.TypeString(t.Object, b.qualifier)
	if t.Builtin != nil {
		root = t.Builtin.Alias + "." + t.Builtin.Kind
	}
	field := fmt.Sprintf("%s of %s (%s)", strings.Join(path, "."), root, types.TypeString(at, b.qualifier))
	switch {
	case want == jsonObject || want == jsonList:
		return fmt.Sprintf("%s is %s, which never equals %s; use PRESENT, ABSENT or fn:NAME", field, want, got)
	case want == jsonString && n.Kind == markers.NodeBare:
		return fmt.Sprintf("want a string for %s, got %s; quote it (%s) for the string", field, got, strconv.Quote(n.Text))
	default:
		return fmt.Sprintf("want %s for %s, got %s", want, field, got)
	}
}

// hasMethod reports whether t or *t has a method called name.
func hasMethod(t types.Type, name string) bool {
	for _, typ := range []types.Type{t, types.NewPointer(t)} {
		ms := types.NewMethodSet(typ)
		for i := range ms.Len() {
			if ms.At(i).Obj().Name() == name {
				return true
			}
		}
	}
	return false
}

func isBytes(t types.Type) bool {
	s, ok := t.(*types.Slice)
	if !ok {
		return false
	}
	b, ok := s.Elem().Underlying().(*types.Basic)
	return ok && b.Kind() == types.Byte
}

// decodesItself reports whether t (or *t) has an UnmarshalJSON method, as
// metav1.Time, resource.Quantity or runtime.RawExtension do: its JSON form
// is its own business.
func decodesItself(t types.Type) bool { return hasMethod(t, "UnmarshalJSON") }

// jsonFields returns the fields of a struct type by JSON name, as
// encoding/json sees them: exported fields, renamed by their json tags,
// with the fields of embedded structs without a name (and of ",inline"
// ones, as Kubernetes writes) promoted unless shadowed.
func jsonFields(t types.Type) map[string]*types.Var {
	out := map[string]*types.Var{}
	var walk func(t types.Type, depth int, seen map[types.Type]bool)
	depthOf := map[string]int{}
	walk = func(t types.Type, depth int, seen map[types.Type]bool) {
		if p, ok := t.Underlying().(*types.Pointer); ok {
			t = p.Elem()
		}
		st, ok := t.Underlying().(*types.Struct)
		if !ok || seen[t] {
			return
		}
		seen[t] = true
		for i := range st.NumFields() {
			f := st.Field(i)
			tag := reflect.StructTag(st.Tag(i)).Get("json")
			name, opts, _ := strings.Cut(tag, ",")
			if name == "-" && opts == "" {
				continue
			}
			if name == "" && (f.Embedded() || hasOpt(opts, "inline")) {
				walk(f.Type(), depth+1, seen)
				continue
			}
			if !f.Exported() {
				continue
			}
			if name == "" {
				name = f.Name()
			}
			if d, dup := depthOf[name]; dup && d <= depth {
				continue
			}
			depthOf[name] = depth
			out[name] = f
		}
	}
	walk(t, 0, map[types.Type]bool{})
	return out
}

func hasOpt(opts, want string) bool {
	for _, o := range strings.Split(opts, ",") {
		if o == want {
			return true
		}
	}
	return false
}

// checkResourceName reports a handler's selector that names no known
// resource but is a near miss of one (see nearResource). It returns false
// after reporting.
func (b *builder) checkResourceName(m *markers.Marker) bool {
	v := m.Positional[0]
	sel := v.Go.(resources.Selector)
	s := nearResource(sel, b.typed)
	if s == "" {
		return true
	}
	pos, fix := v.Pos, s
	if v.Kind == markers.NodeBare {
		off := 0
		if i := strings.LastIndexByte(v.Raw, '/'); i >= 0 {
			off = i + 1
		}
		if strings.HasPrefix(v.Raw[off:], sel.Name) {
			pos.Offset += off
			pos.Column += off
			fix = v.Raw[:off] + s + v.Raw[off+len(sel.Name):]
		}
	}
	msg := fmt.Sprintf("resource: %s is not a resource that kopf-gen knows; did you mean %s?", sel.Name, fix)
	if sel.Group == "" && !sel.Core {
		msg += fmt.Sprintf(" (for a resource that kopf-gen does not know, give its group: %s.GROUP)", sel.Name)
	}
	b.errorf(pos, "%s", msg)
	return false
}

// nearResource returns the name of a known resource that the selector's
// name most likely misspells, or "". Known resources are the typed ones
// (//kopf:resource types of the package and of its direct imports, given
// as typed) and the built-ins of package builtins. Resources that kopf-gen
// does not know are legal (CRDs installed by others), so a name is a typo
// only when it is none of the names of the known resources of its group
// (of any group for a bare name), in any version, and is at most 1 edit
// away from one of them for names shorter than 8 bytes, 2 for longer ones
// (markers.SuggestWithin: a swap of adjacent letters is one edit). Short
// names (po, svc) are never suggested: nearly every short word is near
// one. The everything selector is never a typo.
func nearResource(sel resources.Selector, typed []*Typed) string {
	if sel.Name == markers.Everything {
		return ""
	}
	var exact, near []string
	add := func(group string, names, short []string) {
		if (sel.Group != "" || sel.Core) && group != sel.Group {
			return
		}
		exact = append(append(exact, names...), short...)
		near = append(near, names...)
	}
	for _, t := range typed {
		add(t.Group, t.Names, nil)
	}
	for _, bi := range builtins.Table() {
		add(bi.Group, []string{bi.Plural, bi.Singular, bi.Kind}, bi.ShortNames)
	}
	if slices.Contains(exact, sel.Name) {
		return "" // known, maybe in another version: not a typo
	}
	limit := 1
	if len(sel.Name) >= 8 {
		limit = 2
	}
	return markers.SuggestWithin(sel.Name, near, limit)
}
