// Package model turns the markers of a loaded package into the handlers and
// registrations that kopf-gen emits, checking everything it can at generate
// time.
//
// # What is checked
//
// Every comment starting with "//kopf:" in a package's files is parsed
// against the marker table. A marker must be in the doc comment of a
// declaration its definition targets; anywhere else it is an error. A
// function carrying changing-handler markers (on.resume, on.create,
// on.update, on.delete, on.field) must be a package-level, non-generic
// function with the signature
//
//	func F(ctx context.Context, kw FKwargs) (any, error)
//	func F(ctx context.Context, kw FKwargs) error
//
// and a function carrying on.event markers the signature
//
//	func F(ctx context.Context, kw FKwargs) error
//
// (as does a function carrying on.validate or on.mutate markers, see
// admission.go), and one carrying daemon or timer markers either of the signatures of
// changing handlers (a daemon's or timer's result is stored in
// status.<id> as a changing handler's), where FKwargs (the function's name
// followed by "Kwargs") is generated as an alias of the kind's kwargs type
// (see runtime/kwargs: Changing, Event, Daemon, Timer, Admission, or
// their typed forms). A function carries markers of one kind only ([Kind]). Names that the generated file declares (each FKwargs,
// and Register) must not be declared by hand, nor may package-level names
// clash with the generated file's imports.
//
// # Registrations
//
// Each changing marker registers the function for one reason (create,
// update, delete, resume; on.field for create and update) of one resource.
// The handler id defaults to the function's name in Kopf's spelling
// (registry.DefaultID: CreateFn → create_fn), so that the ids, results and
// progress of a Kopf operator ported with the same names are kept; with
// field=, "/" and the dotted field are appended to it, default or not, as
// Kopf does ("field_fn/spec.field"). Markers stacked on one function with the same id and
// selector are merged into one registration with several reasons (as Kopf
// lets one function be both on.resume and on.create) when their common
// options (param, errors, timeout, retries, backoff, field and filters) are
// equal; optional= belongs to the on.delete marker and deleted= to the
// on.resume marker, and apply to those reasons only. With other options and
// no reason in common, they are registrations of their own under that id
// (Kopf's stacked decorators with one id: one progress record, one
// status.<id>), tied to the function for the registry
// (Registration.Stacked). Any other repetition of an id for a selector is
// an error, because the runtime identifies handlers by id. Event handlers
// have ids of their own and are never merged; so do daemons and timers,
// which share one set of ids per selector (both store their results in
// status.<id>).
//
// # Daemons and timers
//
// daemon and timer markers become registry.DaemonHandler and
// registry.TimerHandler registrations with their options
// (initial_delay=, cancellation_backoff=, cancellation_timeout=,
// cancellation_polling=; interval=, idle=, sharp=). A timer with neither
// interval= nor idle= is Kopf's one-shot timer (called once per object);
// sharp= needs interval=, as the runtime's registry requires: an error at
// the marker, not at start-up.
//
// # Filters
//
// labels=, annotations=, field=, value=, old=, new= and when= become the
// registration's Field and Filter. value=, old= and new= need field=, and
// value= excludes old= and new=. With field= and none of them, the value
// must be present (Kopf's default, value=PRESENT), and the registration
// says so explicitly. Callbacks (when=F, fn:F) must name package-level,
// non-generic functions of the package, with one of the signatures of
// [CallbackForm]; anything else is an error naming what was expected.
//
// # Typed resources
//
// A struct type T with the marker //kopf:resource group/version/plural is
// the Go type of that resource's objects. A handler whose every marker
// selects one typed resource (see [Typed] for how selectors are matched)
// gets typed kwargs, kwargs.TypedChanging[T] or kwargs.TypedEvent[T]
// (Object, and Old and New for changing handlers, decoded as *T). Typed resources are found in the package
// itself, in the packages it imports directly, and in the table of
// built-in resources (package builtins); the first two win over the table.
// field= on typed handlers is checked against T's JSON field names, and
// the literals of value=, old= and new= against the Go type at that field:
// a literal that the field can never hold is an error (a number or a
// boolean for a string field, suggesting to quote it; a string or a
// fraction for an integer field; anything but true or false for a bool; a
// scalar for a struct, map, slice or array). Types that decode themselves
// (json.Unmarshaler, encoding.TextUnmarshaler: metav1.Time,
// resource.Quantity, intstr.IntOrString) and interfaces accept anything;
// []byte is a string (base64). An integral number such as 1e3 fits an
// integer field, since values are compared as JSON numbers.
//
// # Resources that are most likely typos
//
// A handler may name any resource: one that the module does not declare is
// legal (a CRD installed by others). But a selector whose name is not the
// name of any known resource, yet is one edit away from one (two for names
// of 8 bytes or more), is an error with "did you mean" (see nearResource):
// "kopfexmaples" where kopfexamples is a //kopf:resource of the package or
// of a direct import, "deploymnets" for the built-in deployments. Only the
// known resources of the selector's group count (all for a bare name), so
// a different resource with a close name is named with its group
// (gadgets.example.com), as the error says.
//
// # Callbacks
//
// A callback naming no function of the package is an error that suggests
// the function with the closest name, if one is close.
//
// # Warnings
//
// Build also returns warnings: diagnostics that do not stop generation. A
// comment anywhere in a file that looks like a misspelt marker
// ("// kopf:on.create", see markers.Table.NearMiss) is one; it is otherwise
// ignored, as prose. So is a +kubebuilder: marker that kopf-gen does not
// read (markers.Table.KubebuilderWarning), a +kubebuilder:rbac marker
// placed where controller-gen does not read it or that controller-tools
// cannot parse (see RBACRule), and kw.Old or kw.New read in a typed field
// handler that never reads kw.Changing.Old or kw.Changing.New (see
// fieldOldNew).
//
// # RBAC
//
// //kopf:rbac markers (in the doc comment of a package-level function,
// handler or not, or of the package clause) and +kubebuilder:rbac markers
// (where controller-gen reads them) become the package's RBAC rules; see
// RBACRule.
//
// # Order of stacked markers
//
// Handlers and registrations are ordered by file name, then by position in
// the file: the order in which Kopf would have registered them, and the
// order in which the reactor runs the handlers of one cause. The
// registrations of markers stacked on one function are in the reverse
// order of their markers (of the first marker of each merged
// registration): bottom to top, as Python applies the decorators that
// the markers copy, so that Kopf's decorators copied as they read run
// their handlers in Kopf's order.
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
	"reflect"
	"slices"
	"sort"
	"strings"
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

// KopfPath is the import path of the facade package, the only package that
// generated code imports besides the packages of typed resources.
const KopfPath = "github.com/kopf-go/kopf"

// Package is what kopf-gen generates for one Go package.
type Package struct {
	PkgPath string
	Name    string
	Dir     string
	// Handlers are the marked functions, in source order.
	Handlers []*Handler
	// Registrations are the handler registrations, in source order, but
	// those of one function bottom to top (see Order of stacked markers).
	Registrations []*Registration
	// Imports are the packages of typed resources that the generated file
	// refers to, with the names it imports them as, sorted by path.
	Imports []Import
	// Resources are the typed resources declared in the package itself
	// (//kopf:resource), in source order.
	Resources []*Typed
	// Indices are the index functions (//kopf:index), in source order:
	// with any, every other handler's kwargs are a struct embedding the
	// kind's kwargs and the package's indices (see indices.go).
	Indices []*Handler
	// RBAC are the rules of the rbac markers (//kopf:rbac,
	// +kubebuilder:rbac), by file, in source order (see rbac.go).
	RBAC []*RBACRule
	// Conversions are the conversions between versions of kinds
	// (//kopf:conversion), one per spoke (see conversion.go).
	Conversions []*Conversion
}

// Import is a package imported by the generated file.
type Import struct {
	Path string
	// Name is the package's name; Alias, if set, the name it is imported
	// as instead.
	Name, Alias string
}

// Handler is one marked function.
type Handler struct {
	// Func is the function's name.
	Func string
	Pos  token.Position
	// Kwargs is the name of the generated kwargs type: an alias of the
	// kind's kwargs type (kopf.ChangingKwargs, kopf.EventKwargs, or their
	// typed forms for a typed resource).
	Kwargs string
	// ReturnsResult is true for (any, error) and (T, error) results, false
	// for error; TypedResult is true for (T, error), T not any.
	ReturnsResult bool
	TypedResult   bool
	// Kind is the kind of every marker of the function.
	Kind Kind
	// Typed is the typed resource of every registration of the handler, or
	// nil for untyped kwargs.
	Typed *Typed
	// Index describes the result of an index function (Kind Index).
	Index *IndexResult
}

// Kind is the kind of a handler, which decides its kwargs, its adapters and
// its registration.
type Kind int

// The kinds of handlers.
const (
	// Changing handlers: on.resume, on.create, on.update, on.delete,
	// on.field (registry.ChangingHandler).
	Changing Kind = iota
	// Event handlers: on.event (registry.EventHandler).
	Event
	// Daemons: daemon (registry.DaemonHandler).
	Daemon
	// Timers: timer (registry.TimerHandler).
	Timer
	// Activities: on.startup, on.cleanup, on.probe
	// (registry.ActivityHandler); see activities.go.
	Activity
	// Logins: on.login (registry.ActivityHandler of a function returning
	// its credentials).
	Login
	// Index functions: index (registry.IndexHandler).
	Index
	// Admission webhook handlers: on.validate, on.mutate
	// (registry.WebhookHandler); see admission.go.
	Webhook
	// Reconcile handlers: on.reconcile (registry.ReconcileHandler); see
	// reconcile.go.
	Reconcile
)

// Name is the kind's name in the runtime's types: kwargs.Changing,
// registry.ChangingHandler, registry.ChangingFunc, ...
func (k Kind) Name() string {
	switch k {
	case Event:
		return "Event"
	case Daemon:
		return "Daemon"
	case Timer:
		return "Timer"
	case Activity, Login:
		return "Activity"
	case Index:
		return "Index"
	case Webhook:
		return "Admission"
	case Reconcile:
		return "Reconcile"
	default:
		return "Changing"
	}
}

// markers names the kind's markers as errors do.
func (k Kind) markers() string {
	switch k {
	case Event:
		return markers.Prefix + markers.OnEvent
	case Daemon:
		return markers.Prefix + markers.Daemon
	case Timer:
		return markers.Prefix + markers.Timer
	case Activity:
		return "activity-handler"
	case Login:
		return markers.Prefix + markers.OnLogin
	case Index:
		return markers.Prefix + markers.Index
	case Webhook:
		return "admission-handler"
	case Reconcile:
		return markers.Prefix + markers.OnReconcile
	default:
		return "changing-handler"
	}
}

// Spawning reports whether handlers of the kind run in the background per
// object (daemons and timers).
func (k Kind) Spawning() bool { return k == Daemon || k == Timer }

// markerKind returns the kind of a handler marker.
func markerKind(name string) (Kind, bool) {
	switch name {
	case markers.OnEvent:
		return Event, true
	case markers.Daemon:
		return Daemon, true
	case markers.Timer:
		return Timer, true
	case markers.OnStartup, markers.OnCleanup, markers.OnProbe:
		return Activity, true
	case markers.OnLogin:
		return Login, true
	case markers.Index:
		return Index, true
	case markers.OnValidate, markers.OnMutate:
		return Webhook, true
	case markers.OnReconcile:
		return Reconcile, true
	}
	_, changing := reasonsOf(name)
	return Changing, changing
}

// Registration is one call of the registry's AddChanging, AddEvent,
// AddDaemon or AddTimer.
type Registration struct {
	Handler *Handler
	// Pos is the position of the first marker merged into it, SelectorPos
	// that of its resource selector.
	Pos         token.Position
	SelectorPos token.Position
	ID          string
	Selector    resources.Selector
	// Typed is the typed resource the selector names, or nil (the
	// handler's kwargs are typed only if all its registrations name the
	// same one).
	Typed *Typed
	// Reasons are in the order of their markers; none for event handlers.
	Reasons []causes.Reason
	// Activity is an activity handler's activity (and Selector is empty).
	Activity causes.Activity
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
	// Stacked: other registrations of the function have the same id, from
	// stacked markers with other options and reasons (Kopf's stacked
	// decorators with one id); the generated code names the function
	// (registry.ChangingHandler.Func) so that the registry accepts them.
	Stacked bool

	// InitialDelay is a daemon's or timer's initial_delay= (0 when not
	// set); the cancellation options are a daemon's, Interval, Idle and
	// Sharp a timer's.
	InitialDelay time.Duration
	// InitialDelayFn is initial_delay=fn:F, nil when not set: F computes
	// the delay per object (its forms are when='s, returning
	// time.Duration).
	InitialDelayFn      *Callback
	CancellationBackoff time.Duration
	CancellationTimeout time.Duration
	CancellationPolling time.Duration
	Interval            time.Duration
	Idle                time.Duration
	Sharp               bool

	// The options of admission webhook handlers (see admission.go).
	WebhookOptions
	// The options of reconcile handlers (see reconcile.go).
	ReconcileOptions

	// Field is the field= path, nil without one; FieldHandler marks
	// on.field registrations.
	Field        []string
	FieldHandler bool
	// Labels and Annotations are in source order.
	Labels      []KeyFilter
	Annotations []KeyFilter
	// Value, Old and New are nil when not set. Value is PRESENT when
	// field= is set without value=, old= or new=.
	Value, Old, New *Filter
	When            *Callback
}

// Filter is one filter value, with its callback resolved.
type Filter struct {
	markers.Match
	// Callback is set for MatchCallback.
	Callback *Callback
}

// KeyFilter is the filter of one label or annotation.
type KeyFilter struct {
	Key string
	Filter
}

// CallbackForm is the signature of a callback, which decides how generated
// code adapts it to the runtime.
type CallbackForm int

// The accepted signatures of callbacks.
const (
	// WhenKwargs is func(kw FKwargs) bool, the handler's own kwargs type,
	// or func(kw K) bool with K the kind's kwargs type that FKwargs is an
	// alias of (kopf.ChangingKwargs, kopf.TypedChangingKwargs[T] for the
	// handler's typed resource T, or their event forms), so that one
	// callback serves several handlers.
	WhenKwargs CallbackForm = iota + 1
	// WhenBody is func(kw kopf.ChangingKwargs) bool (or func(kw
	// kopf.EventKwargs) bool) for a handler of a typed resource: the
	// body-only form of its kind.
	WhenBody
	// StringValue is func(value string) bool, for labels and annotations.
	StringValue
	// StringValueKwargs is func(value string, kw kopf.ResourceKwargs) bool.
	StringValueKwargs
	// StringPtr is func(value *string) bool, for labels and annotations: nil
	// when the key is absent (Kopf's None), so that absent and empty differ.
	StringPtr
	// StringPtrKwargs is func(value *string, kw kopf.ResourceKwargs) bool.
	StringPtrKwargs
	// AnyValue is func(value any) bool, for value=, old= and new=.
	AnyValue
	// AnyValueKwargs is func(value any, kw kopf.ResourceKwargs) bool.
	AnyValueKwargs
)

// Callback is a function of the package used as a filter.
type Callback struct {
	Func string
	Form CallbackForm
	// Own is set for a when= callback taking the handler's own kwargs
	// type FKwargs (a struct with the indices in a package with indices).
	Own bool
}

// reasonsOf returns the reasons a changing marker registers for.
func reasonsOf(marker string) ([]causes.Reason, bool) {
	switch marker {
	case markers.OnCreate:
		return []causes.Reason{causes.Create}, true
	case markers.OnUpdate:
		return []causes.Reason{causes.Update}, true
	case markers.OnDelete:
		return []causes.Reason{causes.Delete}, true
	case markers.OnResume:
		return []causes.Reason{causes.Resume}, true
	case markers.OnField:
		return []causes.Reason{causes.Create, causes.Update}, true
	}
	return nil, false
}

func isHandlerMarker(name string) bool {
	_, ok := markerKind(name)
	return ok
}

// Build builds the model of one package, or returns every error found as a
// go/scanner.ErrorList. A package without markers yields a Package without
// handlers. The warnings (see Warnings in the package doc) are returned
// sorted by position, with the errors as well as without them.
func Build(ctx context.Context, pkg *load.Package, table *markers.Table) (*Package, scanner.ErrorList, error) {
	b := &builder{
		ctx:     ctx,
		pkg:     pkg,
		table:   table,
		out:     &Package{PkgPath: pkg.PkgPath, Name: pkg.Name, Dir: pkg.Dir},
		byKey:   map[regKey][]*Registration{},
		funcs:   map[string]*ast.FuncDecl{},
		imports: map[string]Import{},
	}
	var marked []markedFunc
	for _, f := range pkg.Files {
		if err := ctx.Err(); err != nil {
			return nil, nil, fmt.Errorf("building %s: %w", pkg.PkgPath, err)
		}
		marked = append(marked, b.file(f)...)
	}
	b.depResources()
	for _, mf := range marked {
		if !b.conversionDecl(mf.decl, mf.markers) {
			b.funcDecl(mf.decl, mf.markers)
		}
	}
	b.conversionPairs()
	b.indices()
	b.reconcileWithIndices()
	b.checkGeneratedNames()
	b.warns.Sort()
	if len(b.errs) > 0 {
		b.errs.Sort()
		return nil, b.warns, b.errs
	}
	for _, imp := range b.imports {
		b.out.Imports = append(b.out.Imports, imp)
	}
	sort.Slice(b.out.Imports, func(i, j int) bool { return b.out.Imports[i].Path < b.out.Imports[j].Path })
	return b.out, b.warns, nil
}

// regKey identifies a registration: ids are unique per selector among
// the changing handlers, among the event handlers, and among the daemons
// and timers (which share status.<id>).
type regKey struct {
	kind     Kind
	id       string
	sel      resources.Selector
	activity causes.Activity
}

type markedFunc struct {
	decl    *ast.FuncDecl
	markers []*markers.Marker
}

type builder struct {
	ctx   context.Context
	pkg   *load.Package
	table *markers.Table
	out   *Package
	errs  scanner.ErrorList
	warns scanner.ErrorList
	byKey map[regKey][]*Registration
	// funcs are the package-level functions (not methods), by name.
	funcs map[string]*ast.FuncDecl
	// typed are the typed resources declared in the package and in its
	// direct imports, in that order; builtinTyped caches the built-ins.
	typed        []*Typed
	builtinTyped map[int]*Typed
	// imports are the packages the generated file refers to, by path.
	imports map[string]Import
	// callbacks are the functions used as callbacks, for the name checks.
	callbacks map[string]bool
	// conversions are the conversion functions, in source order.
	conversions []*ConversionFunc
}

func (b *builder) pos(p token.Pos) token.Position { return b.pkg.Fset.Position(p) }

func (b *builder) errorf(p token.Position, format string, args ...any) {
	b.errs.Add(p, fmt.Sprintf(format, args...))
}

func (b *builder) warnf(p token.Position, format string, args ...any) {
	b.warns.Add(p, fmt.Sprintf(format, args...))
}

// file handles the markers of one file: it returns the marked functions,
// records the typed resources, and reports every other marker as
// misplaced.
func (b *builder) file(f *load.File) []markedFunc {
	var out []markedFunc
	placed := map[*ast.Comment]bool{}
	b.packageMarkers(f.AST, placed)
	for _, decl := range f.AST.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil && d.Name.Name != "_" {
				b.funcs[d.Name.Name] = d
			}
			ms := b.splitRBAC(d, b.parseDoc(d.Doc, placed))
			if len(ms) > 0 {
				out = append(out, markedFunc{d, ms})
			}
		case *ast.GenDecl:
			if d.Tok != token.TYPE {
				for _, m := range b.parseDoc(d.Doc, placed) {
					b.errorf(m.Pos, "%s%s cannot be attached to a %s declaration; it applies to: %s",
						markers.Prefix, m.Name, d.Tok, m.Def.Targets)
				}
				continue
			}
			for _, m := range b.parseDoc(d.Doc, placed) {
				if len(d.Specs) != 1 {
					b.errorf(m.Pos, "%s%s is in the doc comment of a group of %d types; put it in the doc comment of one of them",
						markers.Prefix, m.Name, len(d.Specs))
					continue
				}
				b.typeMarker(m, d.Specs[0].(*ast.TypeSpec))
			}
			for _, spec := range d.Specs {
				ts := spec.(*ast.TypeSpec)
				for _, m := range b.parseDoc(ts.Doc, placed) {
					b.typeMarker(m, ts)
				}
			}
		}
	}
	for _, cg := range f.AST.Comments {
		for _, c := range cg.List {
			if msg, near := b.table.NearMiss(c.Text); near {
				b.warnf(b.pos(c.Slash), "%s", msg)
				continue
			}
			if msg, warn := b.table.KubebuilderWarning(c.Text); warn {
				b.warnf(b.pos(c.Slash), "%s", msg)
				continue
			}
			if placed[c] || !markers.IsMarker(c.Text) {
				continue
			}
			where := "markers go in the doc comment of a package-level function or type"
			if name, _, _ := strings.Cut(strings.TrimPrefix(c.Text, markers.Prefix), " "); name == markers.RBAC {
				where = markers.Prefix + markers.RBAC + " goes in the doc comment of a package-level function (the handler that makes the calls) or of the package clause"
			}
			b.errorf(b.pos(c.Slash), "misplaced marker %s: %s, directly above it with no blank line", c.Text, where)
		}
	}
	b.kubebuilderRBAC(f)
	return out
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

func (b *builder) typeMarker(m *markers.Marker, spec *ast.TypeSpec) {
	if m.Def.Targets&markers.TargetType == 0 {
		b.errorf(m.Pos, "%s%s applies to %s declarations, not types", markers.Prefix, m.Name, m.Def.Targets)
		return
	}
	if m.Name != markers.Resource {
		b.errorf(m.Pos, "%s%s on types is not supported by this kopf-gen", markers.Prefix, m.Name)
		return
	}
	if t := b.resource(m, spec, b.pkg.Types); t != nil && b.addTyped(t) {
		b.out.Resources = append(b.out.Resources, t)
	}
}

func (b *builder) funcDecl(d *ast.FuncDecl, ms []*markers.Marker) {
	ok := true
	kinds := map[Kind]bool{}
	for _, m := range ms {
		switch kind, handler := markerKind(m.Name); {
		case m.Def.Targets&markers.TargetFunc == 0:
			b.errorf(m.Pos, "%s%s applies to %s declarations, not functions", markers.Prefix, m.Name, m.Def.Targets)
			ok = false
		case !handler:
			b.errorf(m.Pos, "%s%s is not supported by this kopf-gen", markers.Prefix, m.Name)
			ok = false
		default:
			kinds[kind] = true
		}
	}
	if !ok {
		return
	}
	name := d.Name.Name
	marker := markers.Prefix + ms[0].Name
	kind, _ := markerKind(ms[0].Name)
	if len(kinds) > 1 && !b.oneKind(ms, kinds, kind) {
		return
	}
	if d.Recv != nil {
		b.errorf(b.pos(d.Name.Pos()), "%s applies to package-level functions, not methods: %s is a method", marker, name)
		return
	}
	if d.Type.TypeParams != nil && len(d.Type.TypeParams.List) > 0 {
		b.errorf(b.pos(d.Type.TypeParams.Opening), "%s applies to non-generic functions: %s has type parameters", marker, name)
		return
	}
	kwargs := name + KwargsSuffix
	h := &Handler{Func: name, Pos: b.pos(d.Name.Pos()), Kwargs: kwargs, Kind: kind}
	if !b.signature(d, h) {
		return
	}
	var regs []*Registration
	var typed []*Typed
	var from []*markers.Marker
	for _, m := range ms {
		r, t, ok := b.registration(h, m)
		if ok {
			regs = append(regs, r)
			typed = append(typed, t)
			from = append(from, m)
		}
	}
	h.Typed = commonTyped(typed, len(ms))
	if h.Typed != nil && !b.useTyped(h) {
		h.Typed = nil
	}
	for i, r := range regs {
		b.resolveCallbacks(h, r, from[i])
	}
	b.out.Handlers = append(b.out.Handlers, h)
	b.fieldOldNew(d, h, regs)
	first := len(b.out.Registrations)
	for i, r := range regs {
		b.add(r, from[i])
	}
	slices.Reverse(b.out.Registrations[first:]) // Kopf's decorator order: see Order of stacked markers
}

// oneKind reports (false) markers of different kinds of handlers on one
// function, which kwargs of one kind cannot serve; kind is the first
// marker's.
func (b *builder) oneKind(ms []*markers.Marker, kinds map[Kind]bool, kind Kind) bool {
	if kinds[Changing] && kinds[Event] && len(kinds) == 2 {
		for _, m := range ms {
			if m.Name == markers.OnEvent {
				b.errorf(m.Pos, "%s%s cannot share a function with changing-handler markers: event handlers take other kwargs and return no result; use a separate function",
					markers.Prefix, m.Name)
				return false
			}
		}
	}
	for _, m := range ms {
		if k, _ := markerKind(m.Name); k != kind {
			why := "each kind of handler takes kwargs of its own"
			if k.IsActivity() && kind.IsActivity() {
				why = "login handlers return their credentials, other activity handlers any result"
			}
			b.errorf(m.Pos, "%s%s cannot share a function with %s markers: %s; use a separate function",
				markers.Prefix, m.Name, kind.markers(), why)
			return false
		}
	}
	return true
}

// commonTyped returns the typed resource of every registration, or nil if
// they differ, some are untyped, or some markers failed.
func commonTyped(typed []*Typed, markers int) *Typed {
	if len(typed) == 0 || len(typed) != markers {
		return nil
	}
	for _, t := range typed[1:] {
		if t != typed[0] {
			return nil
		}
	}
	return typed[0]
}

// kwargsParams checks the parameters that every handler and index function
// takes, (ctx context.Context, kw <its kwargs type>); fail reports a
// mismatch at its position, with the signature wanted.
func (b *builder) kwargsParams(d *ast.FuncDecl, h *Handler, fail func(token.Pos, string, ...any) bool) bool {
	params := flatten(d.Type.Params)
	if len(params) != 2 {
		return fail(d.Type.Params.Opening, "it has %s", plural(len(params), "parameter"))
	}
	if !b.isContext(params[0]) {
		return fail(params[0].Pos(), "the first parameter is %s, not context.Context", b.typeString(params[0]))
	}
	if id, ok := params[1].(*ast.Ident); !ok || id.Name != h.Kwargs {
		return fail(params[1].Pos(), "the second parameter is %s, not %s", b.exprString(params[1]), h.Kwargs)
	}
	return true
}

// signature checks a handler's signature and records its result form.
func (b *builder) signature(d *ast.FuncDecl, h *Handler) bool {
	if h.Kind == Index {
		return b.indexSignature(d, h)
	}
	if h.Kind == Reconcile {
		return b.reconcileSignature(d, h)
	}
	want := fmt.Sprintf("want func %s(ctx context.Context, kw %s) (any, error), (T, error) or func %[1]s(ctx context.Context, kw %[2]s) error", h.Func, h.Kwargs)
	switch h.Kind {
	case Event:
		want = fmt.Sprintf("want func %s(ctx context.Context, kw %s) error (event handlers return no result)", h.Func, h.Kwargs)
	case Webhook:
		want = fmt.Sprintf("want func %s(ctx context.Context, kw %s) error (admission handlers return no result: an error refuses the request)", h.Func, h.Kwargs)
	case Login:
		want = fmt.Sprintf("want func %s(ctx context.Context, kw %s) (*kopf.ConnectionInfo, error) (login handlers return their credentials)", h.Func, h.Kwargs)
	}
	fail := func(p token.Pos, format string, args ...any) bool {
		b.errorf(b.pos(p), "handler %s has the wrong signature: %s; %s", h.Func, fmt.Sprintf(format, args...), want)
		return false
	}
	if !b.kwargsParams(d, h, fail) {
		return false
	}
	results := flatten(d.Type.Results)
	errType := types.Universe.Lookup("error").Type()
	switch {
	case h.Kind == Login:
		if len(results) != 2 || !b.isConnectionInfo(results[0]) || !b.is(results[1], errType) {
			p := d.Type.Params.Closing
			if d.Type.Results != nil {
				p = d.Type.Results.Pos()
			}
			return fail(p, "it returns %s", b.resultsString(results))
		}
		h.ReturnsResult = true
	case len(results) == 1 && b.is(results[0], errType):
		h.ReturnsResult = false
	case len(results) == 2 && h.Kind != Event && h.Kind != Webhook && b.isAny(results[0]) && b.is(results[1], errType):
		h.ReturnsResult = true
	case len(results) == 2 && h.Kind != Event && h.Kind != Webhook && b.typeOf(results[0]) != nil && !b.is(results[0], errType) && b.is(results[1], errType):
		// A result of its own type (a probe's int): kopf.AnyResult(F).
		h.ReturnsResult, h.TypedResult = true, true
	default:
		p := d.Type.Params.Closing
		if d.Type.Results != nil {
			p = d.Type.Results.Pos()
		}
		return fail(p, "it returns %s", b.resultsString(results))
	}
	return true
}

// flatten lists the types of a field list, one per parameter.
func flatten(fl *ast.FieldList) []ast.Expr {
	if fl == nil {
		return nil
	}
	var out []ast.Expr
	for _, field := range fl.List {
		n := max(1, len(field.Names))
		for range n {
			out = append(out, field.Type)
		}
	}
	return out
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
	return isNamed(b.typeOf(e), "context", "Context")
}

// isNamed reports whether t is the named type path.name.
func isNamed(t types.Type, path, name string) bool {
	named, ok := types.Unalias(t).(*types.Named)
	if !ok {
		return false
	}
	obj := named.Obj()
	return obj.Pkg() != nil && obj.Pkg().Path() == path && obj.Name() == name
}

func (b *builder) is(e ast.Expr, want types.Type) bool {
	t := b.typeOf(e)
	return t != nil && types.Identical(t, want)
}

// isPtr reports whether e is a pointer to want.
func (b *builder) isPtr(e ast.Expr, want types.Type) bool {
	return b.is(e, types.NewPointer(want))
}

func (b *builder) isAny(e ast.Expr) bool {
	return isAnyType(b.typeOf(e))
}

// isAnyType reports whether t is any (interface{}), not a defined type.
func isAnyType(t types.Type) bool {
	if t == nil {
		return false
	}
	iface, ok := t.Underlying().(*types.Interface)
	return ok && iface.Empty() && !isDefined(t)
}

// isDefined reports whether t is a defined (named) type: an empty interface
// type declared with a name is a different type from any.
func isDefined(t types.Type) bool {
	_, named := types.Unalias(t).(*types.Named)
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

// registration builds the registration of one marker, with the typed
// resource its selector names (or nil). ok is false after errors.
func (b *builder) registration(h *Handler, m *markers.Marker) (*Registration, *Typed, bool) {
	if h.Kind.IsActivity() {
		r, ok := b.activityRegistration(h, m)
		return r, nil, ok
	}
	reasons, _ := reasonsOf(m.Name) // none for on.event
	sel := m.Positional[0].Go.(resources.Selector)
	r := &Registration{
		Handler:      h,
		Pos:          m.Pos,
		SelectorPos:  m.Positional[0].Pos,
		ID:           registry.DefaultID(h.Func),
		Selector:     sel,
		Reasons:      reasons,
		Markers:      []string{m.String()},
		FieldHandler: m.Name == markers.OnField,
	}
	ok := true
	for _, a := range m.Args {
		if !r.setCommonOption(a) && !r.setWebhookOption(a) && !r.setResourceOption(a) && !r.setReconcileOption(a) {
			b.errorf(a.NamePos, "argument %s of %s%s is not supported by this kopf-gen", a.Name, markers.Prefix, m.Name)
			ok = false
		}
	}
	if !b.checkOptions(h, r, m) || !ok {
		return nil, nil, false
	}
	t, ok := b.registrationTyped(r, m)
	if !ok {
		return nil, nil, false
	}
	r.Typed = t
	return r, t, true
}

// setResourceOption sets an option of the handlers of resources (see
// setCommonOption and setWebhookOption for the others), reporting whether
// a is one.
func (r *Registration) setResourceOption(a markers.NamedArg) bool {
	switch a.Name {
	case "optional":
		r.Optional = a.Go.(bool)
	case "deleted":
		r.Deleted = a.Go.(bool)
	case "initial_delay":
		if fn, ok := a.Go.(markers.Func); ok {
			r.InitialDelayFn = &Callback{Func: string(fn)}
		} else {
			r.InitialDelay = a.Go.(time.Duration)
		}
	case "cancellation_backoff":
		r.CancellationBackoff = a.Go.(time.Duration)
	case "cancellation_timeout":
		r.CancellationTimeout = a.Go.(time.Duration)
	case "cancellation_polling":
		r.CancellationPolling = a.Go.(time.Duration)
	case "interval":
		r.Interval = a.Go.(time.Duration)
	case "idle":
		r.Idle = a.Go.(time.Duration)
	case "sharp":
		r.Sharp = a.Go.(bool)
	case "field":
		r.Field = a.Go.([]string)
	case "labels":
		r.Labels = keyFilters(a.Go.([]markers.KeyMatch))
	case "annotations":
		r.Annotations = keyFilters(a.Go.([]markers.KeyMatch))
	case "value":
		r.Value = &Filter{Match: a.Go.(markers.Match)}
	case "old":
		r.Old = &Filter{Match: a.Go.(markers.Match)}
	case "new":
		r.New = &Filter{Match: a.Go.(markers.Match)}
	case "when":
		r.When = &Callback{Func: a.Go.(string)}
	default:
		return false
	}
	return true
}

// checkOptions checks the options of a registration together (field= and
// the filters of its value, a timer's interval=, idle= and sharp=, a
// webhook's options), completing the field handler's id and default
// filter. It reports whether they are consistent.
func (b *builder) checkOptions(h *Handler, r *Registration, m *markers.Marker) bool {
	ok := true
	if r.Field == nil {
		for _, name := range []string{"value", "old", "new"} {
			if a, set := m.Arg(name); set {
				b.errorf(a.NamePos, "%s= needs field=: it checks the value at that field", name)
				ok = false
			}
		}
	} else {
		r.ID += "/" + strings.Join(r.Field, ".")
		if r.Value == nil && r.Old == nil && r.New == nil {
			r.Value = &Filter{Match: markers.Match{Kind: markers.MatchPresent}}
		}
	}
	if m.Name == markers.Timer {
		// Neither interval= nor idle=: Kopf's one-shot timer, called once
		// per object (see registry.AddTimer).
		if a, set := m.Arg("sharp"); set && r.Sharp && r.Interval == 0 {
			b.errorf(a.NamePos, "sharp= needs interval=: it keeps the calls on the grid of the interval")
			ok = false
		}
	}
	if h.Kind == Webhook {
		r.Mutating = m.Name == markers.OnMutate
		ok = b.checkWebhook(r, m) && ok
	}
	if h.Kind == Reconcile {
		ok = b.checkReconcile(r, m) && ok
	}
	if a, set := m.Arg("value"); set && (r.Old != nil || r.New != nil) {
		b.errorf(a.NamePos, "value= cannot be combined with old= or new=: value= checks either side of a change; use old= and new= alone")
		ok = false
	}
	return ok
}

// registrationTyped returns the typed resource that the registration's
// selector names, or nil for an untyped one, after checking the resource's
// name, or its field= and the values of its filters against its Go type.
func (b *builder) registrationTyped(r *Registration, m *markers.Marker) (*Typed, bool) {
	t := b.typedFor(m)
	if t == nil && !b.checkResourceName(m) {
		return nil, false
	}
	if t != nil && r.Field != nil {
		a, _ := m.Arg("field")
		at, ok := b.checkField(t, r.Field, a.Node)
		if !ok || !b.checkValues(t, r, m, at) {
			return nil, false
		}
	}
	return t, true
}

func keyFilters(kms []markers.KeyMatch) []KeyFilter {
	out := make([]KeyFilter, len(kms))
	for i, km := range kms {
		out[i] = KeyFilter{Key: km.Key, Filter: Filter{Match: km.Match}}
	}
	return out
}

// add adds or merges a registration.
func (b *builder) add(r *Registration, m *markers.Marker) {
	kind := r.Handler.Kind
	if kind.Spawning() {
		kind = Daemon // daemons and timers share ids: both store status.<id>
	}
	if kind.IsActivity() {
		kind = Activity // logins are activity handlers too
	}
	key := regKey{kind: kind, id: r.ID, sel: r.Selector, activity: r.Activity}
	if kind == Webhook {
		// The id is the webhook's path: unique among all the resources,
		// validating and mutating.
		key = regKey{kind: kind, id: r.ID}
		if prev := b.byKey[key]; len(prev) > 0 {
			b.webhookDuplicate(prev[0], r, m)
			return
		}
	}
	regs := b.byKey[key]
	if len(regs) == 0 {
		b.byKey[key] = []*Registration{r}
		b.out.Registrations = append(b.out.Registrations, r)
		return
	}
	prev := regs[0]
	if prev.Handler != r.Handler {
		b.errorf(m.Pos, "handler id %q is already used for %s by %s at %s; set a distinct id=",
			r.ID, target(r), prev.Handler.Func, where(prev.Pos, m.Pos))
		return
	}
	if r.Handler.Kind != Changing {
		b.errorf(m.Pos, "duplicate %s%s: handler id %q is already registered for %s at %s; set a distinct id=",
			markers.Prefix, m.Name, r.ID, target(r), where(prev.Pos, m.Pos))
		return
	}
	for _, prev := range regs {
		if !b.reasonsDisjoint(prev, r, m) {
			return
		}
	}
	for _, prev := range regs {
		if sameOptions(prev, r) {
			prev.Reasons = append(prev.Reasons, r.Reasons...)
			prev.Markers = append(prev.Markers, r.Markers...)
			prev.Optional = prev.Optional || r.Optional
			prev.Deleted = prev.Deleted || r.Deleted
			return
		}
	}
	// Kopf's decorators stacked on one function with one id and other
	// options, for other reasons: a registration of its own, same id.
	for _, prev := range regs {
		prev.Stacked = true
	}
	r.Stacked = true
	b.byKey[key] = append(regs, r)
	b.out.Registrations = append(b.out.Registrations, r)
}

// reasonsDisjoint reports (false) a reason of r that an earlier
// registration prev of the same function and id has too.
func (b *builder) reasonsDisjoint(prev, r *Registration, m *markers.Marker) bool {
	for _, reason := range prev.Reasons {
		if !slices.Contains(r.Reasons, reason) {
			continue
		}
		if !sameOptions(prev, r) {
			b.errorf(m.Pos, "%s%s repeats handler id %q for %s of %s with other options or filters than %s: Kopf calls %s once when either marker matches, kopf-go has one registration per id and cause; check both filters in one marker (a when= callback), or set a distinct id= (a new id: the old one's progress and status.<id> are not carried over)",
				markers.Prefix, m.Name, r.ID, reason, target(r), where(prev.Pos, m.Pos), r.Handler.Func)
		} else {
			b.errorf(m.Pos, "duplicate %s%s: handler id %q is already registered for %s of %s at %s; set a distinct id=",
				markers.Prefix, m.Name, r.ID, reason, target(r), where(prev.Pos, m.Pos))
		}
		return false
	}
	return true
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
	type filters struct {
		field               []string
		fieldHandler        bool
		labels, annotations []KeyFilter
		value, old, new     *Filter
		when                *Callback
	}
	fa := filters{a.Field, a.FieldHandler, a.Labels, a.Annotations, a.Value, a.Old, a.New, a.When}
	fb := filters{b.Field, b.FieldHandler, b.Labels, b.Annotations, b.Value, b.Old, b.New, b.When}
	return a.Errors == b.Errors && a.Timeout == b.Timeout && a.Retries == b.Retries && a.Backoff == b.Backoff &&
		reflect.DeepEqual(fa, fb)
}

func selectorString(s resources.Selector) string { return s.String() }

// reservedLocals are the names of the generated code's variables in scope
// where it refers to handlers and callbacks: functions of these names would
// be shadowed.
var reservedLocals = []string{"ctx", "kw", "r", "args", "err", "value", "str", "indices"}

// checkGeneratedNames reports hand-written declarations of the names that
// the generated file declares or imports.
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
	if len(b.out.Indices) > 0 {
		check(IndicesType, "the type of the package's indices")
	}
	for _, h := range b.out.Handlers {
		check(h.Kwargs, "it as the kwargs type of handler "+h.Func)
	}
	// The package names the generated file imports: a package-level
	// declaration of one of them would clash with the import.
	names := []string{"kopf"}
	for _, r := range b.out.Registrations {
		if r.Timeout != 0 || r.Backoff != 0 || r.InitialDelay != 0 || r.CancellationBackoff != 0 ||
			r.CancellationTimeout != 0 || r.CancellationPolling != 0 || r.Interval != 0 || r.Idle != 0 || r.Resync != 0 {
			names = append(names, "time") // durations are spelt 5 * time.Second
			break
		}
	}
	for _, imp := range b.imports {
		if imp.Path == b.pkg.PkgPath {
			continue
		}
		if imp.Alias != "" {
			names = append(names, imp.Alias)
		} else {
			names = append(names, imp.Name)
		}
	}
	sort.Strings(names)
	for i, name := range names {
		if i == 0 || names[i-1] != name {
			check(name, "a file importing a package under that name")
		}
	}
	for _, h := range b.out.Handlers {
		for _, local := range reservedLocals {
			if h.Func == local {
				b.errorf(h.Pos, "handler %s has the name of a variable of the generated code; rename it", h.Func)
			}
		}
	}
	var cbs []string
	for name := range b.callbacks {
		cbs = append(cbs, name)
	}
	sort.Strings(cbs)
	for _, name := range cbs {
		for _, local := range reservedLocals {
			if name == local {
				b.errorf(b.pos(b.funcs[name].Name.Pos()), "callback %s has the name of a variable of the generated code; rename it", name)
			}
		}
	}
}

// setCommonOption sets the option a if it is one that every kind of
// handler with retries takes (id, param, errors, timeout, retries,
// backoff), and reports whether it was.
func (r *Registration) setCommonOption(a markers.NamedArg) bool {
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
	default:
		return false
	}
	return true
}
