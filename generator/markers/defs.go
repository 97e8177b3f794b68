package markers

import (
	"fmt"
	"strings"
)

// Prefix starts every marker comment.
const Prefix = "//kopf:"

// Target is a set of declaration kinds a marker may be attached to.
type Target int

// The declaration kinds.
const (
	// TargetFunc is a package-level function declaration.
	TargetFunc Target = 1 << iota
	// TargetType is a type declaration.
	TargetType
	// TargetPackage is the package clause (its doc comment).
	TargetPackage
)

// String renders the target set as "func", "type", "package" or a
// comma-separated list of them, e.g. "func, type".
func (t Target) String() string {
	var parts []string
	if t&TargetFunc != 0 {
		parts = append(parts, "func")
	}
	if t&TargetType != 0 {
		parts = append(parts, "type")
	}
	if t&TargetPackage != 0 {
		parts = append(parts, "package")
	}
	if len(parts) == 0 {
		return "nothing"
	}
	return strings.Join(parts, ", ")
}

// Type is the type of an argument's value; see the package doc for the
// syntax each type accepts. In [Value.Go] the Go value of each type is:
// string (TypeString, TypeEnum, TypeFunc), int, float64, bool,
// time.Duration, resources.Selector (TypeResource), map[string]string
// (TypeStringMap), []string (TypeStringList, TypeFieldPath), [Match]
// (TypeMatch), [][KeyMatch] (TypeMatchMap) and []resources.Selector
// (TypeResources); a [Func] for a callback fn:NAME of an argument that is
// OrFunc.
type Type int

// Func is the value of an OrFunc argument given as a callback fn:NAME: the
// name of a function of the package.
type Func string

// The argument types.
const (
	TypeString Type = iota + 1
	TypeInt
	TypeFloat
	TypeBool
	TypeDuration
	TypeEnum
	TypeResource
	TypeStringMap
	TypeStringList
	// TypeMatch is a filter value: a JSON scalar, PRESENT, ABSENT or a
	// callback fn:NAME.
	TypeMatch
	// TypeMatchMap is a map of filter values whose literals are strings,
	// as labels and annotations are.
	TypeMatchMap
	// TypeFunc names a function of the package: NAME or fn:NAME.
	TypeFunc
	// TypeFieldPath is a field of an object: a.b.c or [a, b, "c.d"].
	TypeFieldPath
	// TypeResources is one resource selector or a list of them: r or
	// [r1, r2].
	TypeResources
)

// lastType is the last valid Type.
const lastType = TypeResources

// String returns the type's name as help shows it.
func (t Type) String() string {
	switch t {
	case TypeString:
		return "string"
	case TypeInt:
		return "int"
	case TypeFloat:
		return "float"
	case TypeBool:
		return "bool"
	case TypeDuration:
		return "duration"
	case TypeEnum:
		return "enum"
	case TypeResource:
		return "resource"
	case TypeStringMap:
		return "map"
	case TypeStringList:
		return "list"
	case TypeMatch:
		return "filter"
	case TypeMatchMap:
		return "filter map"
	case TypeFunc:
		return "function"
	case TypeFieldPath:
		return "field"
	case TypeResources:
		return "resources"
	default:
		return fmt.Sprintf("Type(%d)", int(t))
	}
}

// Arg describes one argument of a marker, positional or named.
type Arg struct {
	// Name is the key of a named argument, or the placeholder of a
	// positional one in help and error messages.
	Name string
	Type Type
	// Enum lists the accepted words of a TypeEnum argument, or of the
	// items of a TypeStringList argument (optional there).
	Enum []string
	// Positive requires numbers and durations to be > 0 and strings and
	// lists to be non-empty.
	Positive bool
	// OrFunc lets a TypeDuration argument be a callback fn:NAME instead of
	// a value (Kopf's initial_delay= function); its Go value is then a
	// [Func].
	OrFunc bool
	// Required makes a named argument mandatory. Positional arguments are
	// always required.
	Required bool
	// Default describes, for help, what applies when the argument is
	// omitted.
	Default string
	// Doc is a one-line description.
	Doc string
}

// Syntax renders how the argument is written, e.g. "timeout=duration" or
// "errors=ignored|temporary|permanent" or "<resource>".
func (a Arg) Syntax(positional bool) string {
	if positional {
		return "<" + a.Name + ">"
	}
	return a.Name + "=" + a.valueSyntax()
}

func (a Arg) valueSyntax() string {
	if a.OrFunc {
		return a.Type.String() + "|fn:F"
	}
	switch a.Type {
	case TypeEnum:
		return strings.Join(a.Enum, "|")
	case TypeStringMap:
		return "{k: v, ...}"
	case TypeStringList:
		if len(a.Enum) > 0 {
			return "[" + strings.Join(a.Enum, "|") + ", ...]"
		}
		return "[a, ...]"
	case TypeMatch:
		return `value|"string"|PRESENT|ABSENT|fn:F`
	case TypeMatchMap:
		return `{k: v|"v"|PRESENT|ABSENT|fn:F, ...}`
	case TypeFunc:
		return "F"
	case TypeFieldPath:
		return "a.b.c|[a, b, c]"
	case TypeResources:
		return "resource|[r1, r2]"
	default:
		return a.Type.String()
	}
}

// Definition describes one marker.
type Definition struct {
	// Name follows the prefix, e.g. "on.create".
	Name string
	// Targets are the declarations the marker may be attached to.
	Targets Target
	// Summary is a one-line description.
	Summary string
	// Positional are the required positional arguments, in order.
	Positional []Arg
	// Args are the named arguments, in the order help lists them.
	Args []Arg
}

// Arg returns the named argument called name, or nil.
func (d *Definition) Arg(name string) *Arg {
	for i := range d.Args {
		if d.Args[i].Name == name {
			return &d.Args[i]
		}
	}
	return nil
}

// Usage renders the marker's one-line usage, e.g.
// "//kopf:on.create <resource> [id=string] ...".
func (d *Definition) Usage() string {
	var b strings.Builder
	b.WriteString(Prefix + d.Name)
	for _, a := range d.Positional {
		b.WriteString(" " + a.Syntax(true))
	}
	for _, a := range d.Args {
		if a.Required {
			b.WriteString(" " + a.Syntax(false))
		} else {
			b.WriteString(" [" + a.Syntax(false) + "]")
		}
	}
	return b.String()
}

// Planned is a decorator of Kopf that kopf-gen has no marker for yet. Its
// name is reserved: a marker of that name is an error saying that it is not
// supported yet (or what to do instead), never "unknown marker", and help
// lists it.
type Planned struct {
	// Name is the marker's name, e.g. "daemon".
	Name string
	// Kopf is Kopf's decorator, e.g. "@kopf.daemon".
	Kopf string
	// Instead, if set, says what to write instead, for a decorator that
	// will not become a marker; the marker is then "not a marker" rather
	// than "not supported yet".
	Instead string
}

// Table is an immutable set of marker definitions, and of the names of
// planned markers.
type Table struct {
	defs    []Definition
	byName  map[string]int
	planned []Planned
	// kb is controller-gen's grammar, shared by the copies of the table.
	kb *kubebuilder
}

// NewTable checks the definitions and builds a table of them. It fails on
// duplicate marker or argument names and on definitions that could not be
// parsed unambiguously.
func NewTable(defs ...Definition) (*Table, error) {
	t := &Table{byName: make(map[string]int, len(defs)), kb: &kubebuilder{}}
	for i, d := range defs {
		if d.Name == "" || strings.ContainsAny(d.Name, " \t") {
			return nil, fmt.Errorf("marker definition %d: invalid name %q", i, d.Name)
		}
		if _, dup := t.byName[d.Name]; dup {
			return nil, fmt.Errorf("marker %s is defined twice", d.Name)
		}
		if d.Targets == 0 {
			return nil, fmt.Errorf("marker %s applies to nothing", d.Name)
		}
		seen := map[string]bool{}
		for _, a := range append(append([]Arg(nil), d.Positional...), d.Args...) {
			if !isKey(a.Name) {
				return nil, fmt.Errorf("marker %s: invalid argument name %q", d.Name, a.Name)
			}
			if seen[a.Name] {
				return nil, fmt.Errorf("marker %s: argument %s is defined twice", d.Name, a.Name)
			}
			seen[a.Name] = true
			if a.Type < TypeString || a.Type > lastType {
				return nil, fmt.Errorf("marker %s: argument %s has no valid type", d.Name, a.Name)
			}
			if a.Type == TypeEnum && len(a.Enum) == 0 || len(a.Enum) > 0 && a.Type != TypeEnum && a.Type != TypeStringList {
				return nil, fmt.Errorf("marker %s: argument %s: enum values go with TypeEnum (required) and TypeStringList only", d.Name, a.Name)
			}
		}
		for _, a := range d.Positional {
			if a.Required {
				return nil, fmt.Errorf("marker %s: positional argument %s is always required; Required is for named arguments", d.Name, a.Name)
			}
		}
		d.Positional = append([]Arg(nil), d.Positional...)
		d.Args = append([]Arg(nil), d.Args...)
		t.byName[d.Name] = len(t.defs)
		t.defs = append(t.defs, d)
	}
	return t, nil
}

// WithPlanned returns a copy of the table that also reserves the names of
// planned markers. It fails on a name that is defined, planned twice or
// not a valid marker name.
func (t *Table) WithPlanned(planned ...Planned) (*Table, error) {
	out := &Table{defs: t.defs, byName: t.byName, planned: append([]Planned(nil), t.planned...), kb: t.kb}
	for _, p := range planned {
		switch {
		case p.Name == "" || strings.ContainsAny(p.Name, " \t"):
			return nil, fmt.Errorf("planned marker: invalid name %q", p.Name)
		case t.Lookup(p.Name) != nil:
			return nil, fmt.Errorf("marker %s is both defined and planned", p.Name)
		case out.LookupPlanned(p.Name) != nil:
			return nil, fmt.Errorf("marker %s is planned twice", p.Name)
		case p.Kopf == "":
			return nil, fmt.Errorf("planned marker %s: missing Kopf's decorator", p.Name)
		}
		out.planned = append(out.planned, p)
	}
	return out, nil
}

// LookupPlanned returns the planned marker called name, or nil.
func (t *Table) LookupPlanned(name string) *Planned {
	for i := range t.planned {
		if t.planned[i].Name == name {
			return &t.planned[i]
		}
	}
	return nil
}

// Planned returns the planned markers, in table order.
func (t *Table) Planned() []Planned { return append([]Planned(nil), t.planned...) }

// Lookup returns the definition of the marker called name, or nil.
func (t *Table) Lookup(name string) *Definition {
	i, ok := t.byName[name]
	if !ok {
		return nil
	}
	return &t.defs[i]
}

// Definitions returns copies of the definitions, in table order.
func (t *Table) Definitions() []Definition {
	out := make([]Definition, len(t.defs))
	for i, d := range t.defs {
		d.Positional = append([]Arg(nil), d.Positional...)
		d.Args = append([]Arg(nil), d.Args...)
		out[i] = d
	}
	return out
}

func (t *Table) names() []string {
	out := make([]string, len(t.defs))
	for i, d := range t.defs {
		out[i] = d.Name
	}
	return out
}

// allNames returns the names of the defined, then of the planned markers.
func (t *Table) allNames() []string {
	out := t.names()
	for _, p := range t.planned {
		out = append(out, p.Name)
	}
	return out
}

// The names of the markers of changing handlers.
const (
	OnCreate = "on.create"
	OnUpdate = "on.update"
	OnDelete = "on.delete"
	OnResume = "on.resume"
	// OnField handles the changes of one field (Kopf's @kopf.on.field).
	OnField = "on.field"
)

// OnEvent is the marker of event-watching handlers.
const OnEvent = "on.event"

// The markers of spawning handlers: per-object background work that
// starts and stops with its object (Kopf's @kopf.daemon and @kopf.timer).
const (
	Daemon = "daemon"
	Timer  = "timer"
)

// The markers of activity handlers: operator-wide handlers that serve no
// object (Kopf's @kopf.on.startup, on.cleanup, on.login, on.probe).
const (
	OnStartup = "on.startup"
	OnCleanup = "on.cleanup"
	OnLogin   = "on.login"
	OnProbe   = "on.probe"
)

// The markers of admission webhook handlers (Kopf's @kopf.on.validate and
// @kopf.on.mutate): called by the API server before it stores an object.
const (
	OnValidate = "on.validate"
	OnMutate   = "on.mutate"
)

// Operations are the operations of admission requests, the words of
// operations= (Kopf's reviews.Operation).
var Operations = []string{"CREATE", "UPDATE", "DELETE", "CONNECT"}

// Index is the marker of index functions (Kopf's @kopf.index): their
// results make an in-memory index given to every handler of the package.
const Index = "index"

// Resource is the marker of typed resources: Go struct types that objects
// of a resource decode into.
const Resource = "resource"

// The words of the errors= argument, as in Kopf's ErrorsMode.
var errorsModes = []string{"ignored", "temporary", "permanent"}

// Kopf returns the table of kopf-gen's markers. Each call builds a new
// table, so callers can never affect one another.
func Kopf() *Table {
	t, err := NewTable(kopfDefinitions()...)
	if err == nil {
		t, err = t.WithPlanned(kopfPlanned()...)
	}
	if err != nil {
		// The definitions below are constant; a test guards this.
		panic(fmt.Sprintf("markers: invalid built-in definitions: %v", err))
	}
	return t
}

// kopfPlanned are Kopf's decorators (kopf/on.py of Kopf 1.44.6) that have
// no marker yet. When one is built, its name moves from here to
// kopfDefinitions.
func kopfPlanned() []Planned {
	return []Planned{
		{Name: "subhandler", Kopf: "@kopf.subhandler",
			Instead: "call kopf.Subhandler(ctx, handler) inside a changing handler to register sub-handlers at run time"},
	}
}

func resourceArg() Arg {
	return Arg{
		Name: "resource",
		Type: TypeResource,
		Doc:  "the resource: plural, kind, plural.group, plural.version.group, group/version/plural, group/plural, v1/plural (core) or * (everything)",
	}
}

// idArgs are the identity options of every resource handler.
func idArgs(idDefault string) []Arg {
	return []Arg{
		{Name: "id", Type: TypeString, Positive: true, Default: idDefault,
			Doc: "the handler's id: the key of its progress record and of its result in status; with field=, \"/\" and the dotted field are appended"},
		{Name: "param", Type: TypeString, Default: "none (nil)",
			Doc: "a value passed to the handler as kw.Param, to tell apart markers sharing a function"},
	}
}

// behaviourArgs are the retry options of changing handlers.
func behaviourArgs() []Arg {
	return []Arg{
		{Name: "errors", Type: TypeEnum, Enum: errorsModes, Default: "temporary",
			Doc: "how errors other than TemporaryError and PermanentError are treated"},
		{Name: "timeout", Type: TypeDuration, Positive: true, Default: "none (unlimited)",
			Doc: "give up retrying after this time since the first attempt"},
		{Name: "retries", Type: TypeInt, Positive: true, Default: "none (unlimited)",
			Doc: "give up after this many attempts"},
		{Name: "backoff", Type: TypeDuration, Positive: true, Default: "the settings' default (60s)",
			Doc: "the delay before retrying after an arbitrary error"},
	}
}

// indexErrorArgs are the error options of indices: Kopf's, with errors
// ignored by default.
func indexErrorArgs() []Arg {
	args := behaviourArgs()
	args[0].Default = "ignored"
	args[0].Doc = "what an error does: ignored keeps the object's values (stale) until its next event; permanent removes them and excludes the object; temporary removes them and excludes the object for backoff= (TemporaryError and PermanentError do so in any mode)"
	args[1].Doc = "with errors=temporary: exclude the object for good after this time since its first failure"
	args[2].Doc = "with errors=temporary: exclude the object for good after this many failures"
	args[3].Doc = "with errors=temporary: how long the object is excluded after a failure"
	return args
}

// handlerArgs are the behaviour options common to Kopf's changing handlers.
func handlerArgs() []Arg {
	return append(idArgs("the function's name in Kopf's spelling: CreateFn → create_fn, GetURL → get_url, Handler2 → handler2"), behaviourArgs()...)
}

// The kinds of handlers, as filterArgs documents them.
const (
	changingHandler = iota
	fieldHandler
	eventHandler
	daemonHandler
	timerHandler
	indexHandler
	webhookHandler
	reconcileHandler
)

// filterArgs are the filters of every resource handler of a kind.
func filterArgs(kind int) []Arg {
	kwargs := "kopf.ChangingKwargs"
	field := Arg{Name: "field", Type: TypeFieldPath, Default: "none (the whole object)",
		Doc: "the field to watch, dotted (spec.a.b) or a list ([spec, \"a.b\"]): old, new and diff are reduced to it and value= checks it"}
	switch kind {
	case eventHandler, daemonHandler, timerHandler, indexHandler, webhookHandler, reconcileHandler:
		switch kind {
		case reconcileHandler:
			kwargs = "kopf.ReconcileKwargs"
		case eventHandler:
			kwargs = "kopf.EventKwargs"
		case webhookHandler:
			kwargs = "kopf.AdmissionKwargs"
		case daemonHandler:
			kwargs = "kopf.DaemonKwargs"
		case indexHandler:
			kwargs = "kopf.IndexKwargs"
		default:
			kwargs = "kopf.TimerKwargs"
		}
		field.Doc = "the field that value= checks, dotted (spec.a.b) or a list ([spec, \"a.b\"])"
	case fieldHandler:
		field.Required = true
		field.Default = "required"
		field.Doc = "the field to watch, dotted (spec.a.b) or a list ([spec, \"a.b\"]): the handler runs when it changes, with old, new and diff reduced to it"
	}
	return []Arg{
		{Name: "labels", Type: TypeMatchMap, Default: "none (any labels)",
			Doc: "labels the object must have: {key: exact string, PRESENT, ABSENT or fn:F (func(value string[, kw kopf.ResourceKwargs]) bool, or *string: nil when absent)}"},
		{Name: "annotations", Type: TypeMatchMap, Default: "none (any annotations)",
			Doc: "annotations the object must have, as labels="},
		{Name: "when", Type: TypeFunc, Default: "none (always)",
			Doc: "a function of the package that must return true: func(kw K) bool with K the handler's kwargs type FKwargs or the kind's (" + kwargs + ", or its typed form for a typed resource): kwargs by value, as handlers"},
		field,
		{Name: "value", Type: TypeMatch, Default: "PRESENT when field= is set",
			Doc: "the field's value: a JSON scalar, PRESENT, ABSENT or fn:F (func(value any[, kw kopf.ResourceKwargs]) bool); needs field="},
	}
}

// changeArgs are the old=/new= filters of update-like handlers.
func changeArgs() []Arg {
	return []Arg{
		{Name: "old", Type: TypeMatch, Default: "none (any)",
			Doc: "the field's value before the change, as value=; needs field=, excludes value="},
		{Name: "new", Type: TypeMatch, Default: "none (any)",
			Doc: "the field's value after the change, as value=; needs field=, excludes value="},
	}
}

// initialDelayArg is the initial_delay= of daemons and timers.
func initialDelayArg(what string) Arg {
	return Arg{Name: "initial_delay", Type: TypeDuration, Positive: true, OrFunc: true, Default: "none (at once)",
		Doc: "wait this long after the object appears or starts matching the filters before the first " + what +
			"; fn:F computes it per object: func(kw K) time.Duration with K as for when="}
}

// daemonArgs are the options of daemons: when they start and how they are
// stopped.
func daemonArgs() []Arg {
	return []Arg{
		initialDelayArg("run"),
		{Name: "cancellation_backoff", Type: TypeDuration, Positive: true, Default: "none (no grace period)",
			Doc: "when the daemon must stop, give it this long to exit on kw.Stopped before cancelling its ctx"},
		{Name: "cancellation_timeout", Type: TypeDuration, Positive: true, Default: "the settings' Background.CancellationTimeout (none: wait for the exit, as Kopf)",
			Doc: "after ctx is cancelled, wait this long for the daemon to exit, then leave it orphaned (with a warning) and release the object"},
		{Name: "cancellation_polling", Type: TypeDuration, Positive: true, Default: "the settings' Background.CancellationPolling (60s)",
			Doc: "while a daemon is exiting, how often the operator logs that it still is"},
	}
}

// timerArgs are the options of timers: when they run.
func timerArgs() []Arg {
	return []Arg{
		{Name: "interval", Type: TypeDuration, Positive: true, Default: "none (run once, or once per idle period with idle=)",
			Doc: "run every interval: after the previous run ends, or on the grid of interval with sharp=true"},
		{Name: "idle", Type: TypeDuration, Positive: true, Default: "none (no idling)",
			Doc: "run only after the object's essence has not changed for this long; a change postpones the next run"},
		{Name: "sharp", Type: TypeBool, Default: "false",
			Doc: "run on the grid of interval since the first run, however long each run takes; needs interval="},
		initialDelayArg("run"),
	}
}

// activityArgs are the options of activity handlers: Kopf's id, param,
// errors, timeout, retries and backoff.
func activityArgs() []Arg {
	args := handlerArgs()
	args[0].Doc = "the handler's id: its name in the log (\"Activity 'id' succeeded.\") and, for probes, the key of its result"
	return args
}

// webhookArgs are the options of admission webhook handlers: Kopf's
// operations, subresource, persistent, side_effects and ignore_failures
// (they have no retries: a webhook answers once).
func webhookArgs() []Arg {
	return []Arg{
		{Name: "operations", Type: TypeStringList, Enum: Operations, Positive: true, Default: "all (the API server's *)",
			Doc: "the operations the handler admits, e.g. [CREATE, UPDATE]; on.mutate is called for DELETE only when DELETE is its only operation (as in Kopf)"},
		{Name: "subresource", Type: TypeString, Positive: true, Default: "none (the object itself only)",
			Doc: "the subresource the handler admits (status, scale, ...), or * for the object and all its subresources"},
		{Name: "persistent", Type: TypeBool, Default: "false",
			Doc: "keep the handler's webhook in the managed configuration when the operator exits (requests fail while no operator answers, unless ignore_failures=true)"},
		{Name: "side_effects", Type: TypeBool, Default: "false",
			Doc: "the handler has side effects, which it skips for dry-run requests (kw.DryRun): sideEffects NoneOnDryRun instead of None"},
		{Name: "ignore_failures", Type: TypeBool, Default: "false",
			Doc: "admit the request when the webhook fails or cannot be reached: failurePolicy Ignore instead of Fail"},
	}
}

// webhookIDArgs are the identity options of admission webhook handlers.
func webhookIDArgs() []Arg {
	args := idArgs("the function's name in Kopf's spelling: Validate1 → validate1, CheckSpec → check_spec")
	args[0].Doc = "the handler's id: the path of its webhook (/<id>) and the first part of the webhook's name; unique among the admission handlers (on.validate and on.mutate); with field=, \"/\" and the dotted field are appended"
	return args
}

func concat(lists ...[]Arg) []Arg {
	var out []Arg
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

func kopfDefinitions() []Definition {
	return []Definition{
		{
			Name:       OnResume,
			Targets:    TargetFunc,
			Summary:    "handle objects seen for the first time since the operator started (Kopf's @kopf.on.resume)",
			Positional: []Arg{resourceArg()},
			Args: concat(handlerArgs(), []Arg{{Name: "deleted", Type: TypeBool, Default: "false",
				Doc: "also resume objects that are already being deleted"}}, filterArgs(changingHandler)),
		},
		{
			Name:       OnCreate,
			Targets:    TargetFunc,
			Summary:    "handle the creation of objects (Kopf's @kopf.on.create)",
			Positional: []Arg{resourceArg()},
			Args:       concat(handlerArgs(), filterArgs(changingHandler)),
		},
		{
			Name:       OnUpdate,
			Targets:    TargetFunc,
			Summary:    "handle changes of objects' essence: spec, labels, annotations (Kopf's @kopf.on.update)",
			Positional: []Arg{resourceArg()},
			Args:       concat(handlerArgs(), filterArgs(changingHandler), changeArgs()),
		},
		{
			Name:       OnDelete,
			Targets:    TargetFunc,
			Summary:    "handle the deletion of objects, holding it with a finalizer (Kopf's @kopf.on.delete)",
			Positional: []Arg{resourceArg()},
			Args: concat(handlerArgs(), []Arg{{Name: "optional", Type: TypeBool, Default: "false",
				Doc: "do not add a finalizer: run only if the object is deleted while one exists anyway"}}, filterArgs(changingHandler)),
		},
		{
			Name:       OnField,
			Targets:    TargetFunc,
			Summary:    "handle the changes of one field on creation and update (Kopf's @kopf.on.field)",
			Positional: []Arg{resourceArg()},
			Args:       concat(handlerArgs(), filterArgs(fieldHandler), changeArgs()),
		},
		{
			Name:       OnEvent,
			Targets:    TargetFunc,
			Summary:    "handle every raw watch event, keeping no state; errors are logged and ignored (Kopf's @kopf.on.event)",
			Positional: []Arg{resourceArg()},
			Args:       concat(idArgs("the function's name in Kopf's spelling: CreateFn → create_fn, GetURL → get_url, Handler2 → handler2"), filterArgs(eventHandler)),
		},
		{
			Name:       Daemon,
			Targets:    TargetFunc,
			Summary:    "run the function in the background for every object, from when it appears (or starts matching the filters) until it is deleted (or stops matching), holding a finalizer meanwhile (Kopf's @kopf.daemon)",
			Positional: []Arg{resourceArg()},
			Args:       concat(handlerArgs(), daemonArgs(), filterArgs(daemonHandler)),
		},
		{
			Name:       Timer,
			Targets:    TargetFunc,
			Summary:    "run the function periodically for every object while it exists (and matches the filters), holding a finalizer meanwhile (Kopf's @kopf.timer)",
			Positional: []Arg{resourceArg()},
			Args:       concat(handlerArgs(), timerArgs(), filterArgs(timerHandler)),
		},
		{
			Name:    OnStartup,
			Targets: TargetFunc,
			Summary: "run the function once when the operator starts, before it watches anything; the operator fails to start unless it succeeds (Kopf's @kopf.on.startup)",
			Args:    activityArgs(),
		},
		{
			Name:    OnCleanup,
			Targets: TargetFunc,
			Summary: "run the function once when the operator stops, after it has stopped watching and handling (Kopf's @kopf.on.cleanup)",
			Args:    activityArgs(),
		},
		{
			Name:    OnLogin,
			Targets: TargetFunc,
			Summary: "get the cluster's credentials, when the operator starts and when the API server refuses them (401), instead of the built-in login (Kopf's @kopf.on.login)",
			Args:    activityArgs(),
		},
		{
			Name:    OnProbe,
			Targets: TargetFunc,
			Summary: "report a value under the handler's id on each call of the health endpoint (Kopf's @kopf.on.probe)",
			Args:    activityArgs(),
		},
		{
			Name:       OnValidate,
			Targets:    TargetFunc,
			Summary:    "validate the objects of a resource before the API server stores them: return an error (kopf.AdmissionError for a message and code) to refuse the request, add warnings with kw.Warn; one webhook per handler (Kopf's @kopf.on.validate)",
			Positional: []Arg{resourceArg()},
			Args:       concat(webhookIDArgs(), webhookArgs(), filterArgs(webhookHandler)),
		},
		{
			Name:       OnMutate,
			Targets:    TargetFunc,
			Summary:    "change the objects of a resource before the API server stores them: what the handler puts in kw.Patch becomes the webhook's JSON patch; one webhook per handler (Kopf's @kopf.on.mutate)",
			Positional: []Arg{resourceArg()},
			Args:       concat(webhookIDArgs(), webhookArgs(), filterArgs(webhookHandler)),
		},
		{
			Name:       Index,
			Targets:    TargetFunc,
			Summary:    "index the objects of a resource in memory: the function returns each object's contribution (a map[K]V, or a single value V and whether there is one), and every handler of the package gets the index as kw.<Function> of type kopf.Index[K, V]; errors are logged and ignored (Kopf's @kopf.index)",
			Positional: []Arg{resourceArg()},
			Args: concat([]Arg{
				{Name: "id", Type: TypeString, Positive: true, Default: "the function's name in Kopf's spelling: ByLabel → by_label",
					Doc: "the index's id, as its errors are logged"},
				{Name: "param", Type: TypeString, Default: "none (nil)",
					Doc: "a value passed to the function as kw.Param"},
			}, indexErrorArgs(), filterArgs(indexHandler)),
		},
		reconcileDefinition(),
		rbacDefinition(),
		{
			Name:    Resource,
			Targets: TargetType,
			Summary: "decode the objects of a resource into this struct type: handlers of the resource get kw.Object (and kw.Old, kw.New) of this type, decoded once per cycle",
			Positional: []Arg{{
				Name: "resource",
				Type: TypeResource,
				Doc:  "the resource, with its version: group/version/plural, group/version/Kind, plural.version.group or v1/plural (core)",
			}},
		},
		conversionDefinition(),
	}
}
