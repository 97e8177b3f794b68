package model

import (
	"go/ast"
	"go/token"
	"go/types"
	"slices"
	"sort"
	"strings"

	"github.com/kopf-go/kopf/generator/markers"
)

// Conversions between the versions of a kind (docs/versions.md).
//
// A function marked //kopf:conversion converts an object of one version
// of a kind to another version of the same kind:
//
//	func WidgetV1alpha1ToV1(src *v1alpha1.Widget, dst *v1.Widget) error
//
// where both types are typed resources (//kopf:resource, declared in the
// package or in a package it imports directly) of the same group and kind
// (the type's name), in two versions. Conversions go through a hub: the
// kind's storage version, whose type is marked +kubebuilder:storageversion
// (controller-tools' marker, which also makes it the CRD's storage
// version); every other version (a spoke) converts to the hub and from it,
// so one side of each function is the hub and every spoke that has one
// direction needs the other. A function that is neither, a second
// function for one direction, or a spoke with one direction only is an
// error at its position. The registration code adds one
// kopf.Conversion per spoke (Registry.AddConversion), in the order of the
// spokes' first functions.
//
// Whether a kind needs conversions at all is decided where all its versions
// are known, with its CRD (package manifests): versions whose schemas
// differ need them.

// ConversionFunc is one //kopf:conversion function.
type ConversionFunc struct {
	// Func is the function's name, Pos the position of its name.
	Func string
	Pos  token.Position
	// From and To are the typed resources of its source and destination.
	From, To *Typed
}

// Conversion is the pair of conversions between a kind's hub and one of
// its spokes, as the registry takes it.
type Conversion struct {
	Hub, Spoke     *Typed
	ToHub, FromHub *ConversionFunc
}

// Kind returns the kind of a typed resource: its type's name, as
// controller-tools names the kind of a CRD.
func (t *Typed) Kind() string { return t.Object.Obj().Name() }

// conversionDecl handles a function with a //kopf:conversion marker and
// reports whether it had one; the marker cannot share a function with
// other markers.
func (b *builder) conversionDecl(d *ast.FuncDecl, ms []*markers.Marker) bool {
	var conv *markers.Marker
	for _, m := range ms {
		if m.Name == markers.Conversion {
			conv = m
		}
	}
	if conv == nil {
		return false
	}
	if len(ms) > 1 {
		for _, m := range ms {
			if m != conv {
				b.errorf(m.Pos, "%s%s cannot share a function with %s%s: a conversion function is no handler; use a separate function",
					markers.Prefix, m.Name, markers.Prefix, markers.Conversion)
			}
		}
		return true
	}
	if f := b.conversionSignature(d); f != nil {
		b.conversions = append(b.conversions, f)
	}
	return true
}

// conversionSignature checks the signature of a conversion function and
// the types it converts between, and returns it, or nil after reporting
// errors.
func (b *builder) conversionSignature(d *ast.FuncDecl) *ConversionFunc {
	name := d.Name.Name
	marker := markers.Prefix + markers.Conversion
	want := "want func " + name + "(src *A, dst *B) error, where A and B are the //kopf:resource types of two versions of one kind"
	fail := func(p token.Pos, format string, args ...any) *ConversionFunc {
		b.errorf(b.pos(p), "conversion %s has the wrong signature: "+format+"; "+want, append([]any{name}, args...)...)
		return nil
	}
	switch {
	case d.Recv != nil:
		b.errorf(b.pos(d.Name.Pos()), "%s applies to package-level functions, not methods: %s is a method", marker, name)
		return nil
	case d.Type.TypeParams != nil && len(d.Type.TypeParams.List) > 0:
		b.errorf(b.pos(d.Type.TypeParams.Opening), "%s applies to non-generic functions: %s has type parameters", marker, name)
		return nil
	}
	params := flatten(d.Type.Params)
	if len(params) != 2 {
		return fail(d.Type.Params.Opening, "it has %s", plural(len(params), "parameter"))
	}
	results := flatten(d.Type.Results)
	if len(results) != 1 || !b.is(results[0], types.Universe.Lookup("error").Type()) {
		p := d.Type.Params.Closing
		if d.Type.Results != nil {
			p = d.Type.Results.Pos()
		}
		return fail(p, "it returns %s", b.resultsString(results))
	}
	var typed [2]*Typed
	for i, p := range params {
		t := b.conversionTyped(p)
		if t == nil {
			return fail(p.Pos(), "the %s parameter is %s, not a pointer to a //kopf:resource type", [2]string{"first", "second"}[i], b.typeString(p))
		}
		typed[i] = t
	}
	from, to := typed[0], typed[1]
	switch {
	case from.Group != to.Group || from.Kind() != to.Kind():
		b.errorf(b.pos(params[1].Pos()), "conversion %s converts between two kinds, %s and %s: a conversion converts one kind between two of its versions",
			name, from.describe(b.qualifier), to.describe(b.qualifier))
		return nil
	case from.Version == to.Version:
		b.errorf(b.pos(params[1].Pos()), "conversion %s converts %s to its own version %s: a conversion converts between two versions",
			name, from.Kind(), from.Version)
		return nil
	}
	return &ConversionFunc{Func: name, Pos: b.pos(d.Name.Pos()), From: from, To: to}
}

// conversionTyped returns the typed resource that e points to, or nil.
func (b *builder) conversionTyped(e ast.Expr) *Typed {
	ptr, ok := b.typeOf(e).(*types.Pointer)
	if !ok {
		return nil
	}
	for _, t := range b.typed {
		if t.Builtin == nil && types.Identical(t.Object, ptr.Elem()) {
			return t
		}
	}
	return nil
}

// conversionPairs checks the conversion functions of the package against
// each other (hubs, duplicates, missing directions) and pairs them by
// spoke into the package's Conversions.
func (b *builder) conversionPairs() {
	byKey := map[[2]*Typed]*ConversionFunc{}
	bySpoke := map[*Typed]*Conversion{}
	var order []*Conversion
	for _, f := range b.conversions {
		hub, hubs := b.hubOf(f.From)
		switch {
		case hubs == 0:
			b.errorf(f.Pos, "conversion %s: %s has no storage version among %s; mark the version that the API server stores with %s, and convert to and from it",
				f.Func, f.From.Kind(), b.versionsOf(f.From), markers.StorageVersion)
			continue
		case hubs > 1:
			b.errorf(f.Pos, "conversion %s: %s has %d versions marked %s; a kind has one storage version, the hub of its conversions",
				f.Func, f.From.Kind(), hubs, markers.StorageVersion)
			continue
		}
		if f.From != hub && f.To != hub {
			b.errorf(f.Pos, "conversion %s converts %s to %s: conversions go through the hub %s (the storage version); write %s to %s and %s to %s instead",
				f.Func, f.From.Version, f.To.Version, hub.Version, f.From.Version, hub.Version, hub.Version, f.To.Version)
			continue
		}
		if prev := byKey[[2]*Typed{f.From, f.To}]; prev != nil {
			b.errorf(f.Pos, "conversion %s converts %s %s to %s, as %s at %s does already", f.Func, f.From.Kind(), f.From.Version, f.To.Version, prev.Func, where(prev.Pos, f.Pos))
			continue
		}
		byKey[[2]*Typed{f.From, f.To}] = f
		spoke := f.From
		if spoke == hub {
			spoke = f.To
		}
		c := bySpoke[spoke]
		if c == nil {
			c = &Conversion{Hub: hub, Spoke: spoke}
			bySpoke[spoke] = c
			order = append(order, c)
		}
		if f.To == hub {
			c.ToHub = f
		} else {
			c.FromHub = f
		}
	}
	for _, c := range order {
		switch {
		case c.ToHub == nil:
			b.errorf(c.Spoke.Pos, "%s %s converts from the hub %s (%s) but not to it: every spoke needs both directions; add a %s%s func(src *%s, dst *%s) error",
				c.Spoke.Kind(), c.Spoke.Version, c.Hub.Version, c.FromHub.Func, markers.Prefix, markers.Conversion,
				types.TypeString(c.Spoke.Object, b.qualifier), types.TypeString(c.Hub.Object, b.qualifier))
		case c.FromHub == nil:
			b.errorf(c.Spoke.Pos, "%s %s converts to the hub %s (%s) but not from it: every spoke needs both directions; add a %s%s func(src *%s, dst *%s) error",
				c.Spoke.Kind(), c.Spoke.Version, c.Hub.Version, c.ToHub.Func, markers.Prefix, markers.Conversion,
				types.TypeString(c.Hub.Object, b.qualifier), types.TypeString(c.Spoke.Object, b.qualifier))
		default:
			b.out.Conversions = append(b.out.Conversions, c)
		}
	}
}

// hubOf returns the storage version of a typed resource's kind among the
// typed resources the package knows, and how many of them are marked so.
func (b *builder) hubOf(t *Typed) (*Typed, int) {
	var hub *Typed
	n := 0
	for _, o := range b.typed {
		if o.Builtin == nil && o.Storage && o.Group == t.Group && o.Kind() == t.Kind() {
			hub = o
			n++
		}
	}
	return hub, n
}

// versionsOf lists the versions of a typed resource's kind that the
// package knows, e.g. "v1alpha1 and v1".
func (b *builder) versionsOf(t *Typed) string {
	var vs []string
	for _, o := range b.typed {
		if o.Builtin == nil && o.Group == t.Group && o.Kind() == t.Kind() {
			vs = append(vs, o.Version)
		}
	}
	sort.Strings(vs)
	if len(vs) < 2 {
		return strings.Join(vs, "")
	}
	return strings.Join(vs[:len(vs)-1], ", ") + " and " + vs[len(vs)-1]
}

// storageMarked reports whether the doc comments of the type whose
// //kopf:resource marker is at pos (typeDocs) have the storage-version
// marker.
func (b *builder) storageMarked(pos token.Position) bool {
	return slices.ContainsFunc(b.typeDocs(pos), hasStorageMarker)
}

func hasStorageMarker(cg *ast.CommentGroup) bool {
	for _, c := range cg.List {
		if strings.TrimSpace(strings.TrimPrefix(c.Text, "//")) == markers.StorageVersion {
			return true
		}
	}
	return false
}
