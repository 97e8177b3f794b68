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
)

// String renders the target set as "func", "type" or "func, type".
func (t Target) String() string {
	var parts []string
	if t&TargetFunc != 0 {
		parts = append(parts, "func")
	}
	if t&TargetType != 0 {
		parts = append(parts, "type")
	}
	if len(parts) == 0 {
		return "nothing"
	}
	return strings.Join(parts, ", ")
}

// Type is the type of an argument's value; see the package doc for the
// syntax each type accepts. In [Value.Go] the Go value of each type is:
// string (TypeString, TypeEnum), int, float64, bool, time.Duration,
// resources.Selector (TypeResource), map[string]string (TypeStringMap) and
// []string (TypeStringList).
type Type int

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
)

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
	// Enum lists the accepted words of a TypeEnum argument.
	Enum []string
	// Positive requires numbers and durations to be > 0 and strings to be
	// non-empty.
	Positive bool
	// Default describes, for help, what applies when the argument is
	// omitted. Positional arguments are always required.
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
	switch a.Type {
	case TypeEnum:
		return strings.Join(a.Enum, "|")
	case TypeStringMap:
		return "{k: v, ...}"
	case TypeStringList:
		return "[a, ...]"
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
		b.WriteString(" [" + a.Syntax(false) + "]")
	}
	return b.String()
}

// Table is an immutable set of marker definitions.
type Table struct {
	defs   []Definition
	byName map[string]int
}

// NewTable checks the definitions and builds a table of them. It fails on
// duplicate marker or argument names and on definitions that could not be
// parsed unambiguously.
func NewTable(defs ...Definition) (*Table, error) {
	t := &Table{byName: make(map[string]int, len(defs))}
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
			if a.Type < TypeString || a.Type > TypeStringList {
				return nil, fmt.Errorf("marker %s: argument %s has no valid type", d.Name, a.Name)
			}
			if (a.Type == TypeEnum) != (len(a.Enum) > 0) {
				return nil, fmt.Errorf("marker %s: argument %s: enum values go with TypeEnum only", d.Name, a.Name)
			}
		}
		d.Positional = append([]Arg(nil), d.Positional...)
		d.Args = append([]Arg(nil), d.Args...)
		t.byName[d.Name] = len(t.defs)
		t.defs = append(t.defs, d)
	}
	return t, nil
}

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

// The names of the markers of changing handlers.
const (
	OnCreate = "on.create"
	OnUpdate = "on.update"
	OnDelete = "on.delete"
	OnResume = "on.resume"
)

// The words of the errors= argument, as in Kopf's ErrorsMode.
var errorsModes = []string{"ignored", "temporary", "permanent"}

// Kopf returns the table of kopf-gen's markers. Each call builds a new
// table, so callers can never affect one another.
func Kopf() *Table {
	t, err := NewTable(kopfDefinitions()...)
	if err != nil {
		// The definitions below are constant; a test guards this.
		panic(fmt.Sprintf("markers: invalid built-in definitions: %v", err))
	}
	return t
}

func resourceArg() Arg {
	return Arg{
		Name: "resource",
		Type: TypeResource,
		Doc:  "the resource: plural, kind, plural.group, plural.version.group, group/version/plural, group/plural or v1/plural (core)",
	}
}

// handlerArgs are the behaviour options common to Kopf's handlers.
func handlerArgs() []Arg {
	return []Arg{
		{Name: "id", Type: TypeString, Positive: true, Default: "the function's name",
			Doc: "the handler's id: the key of its progress record and of its result in status"},
		{Name: "param", Type: TypeString, Default: "none (nil)",
			Doc: "a value passed to the handler as kw.Param, to tell apart markers sharing a function"},
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

func kopfDefinitions() []Definition {
	return []Definition{
		{
			Name:       OnResume,
			Targets:    TargetFunc,
			Summary:    "handle objects seen for the first time since the operator started (Kopf's @kopf.on.resume)",
			Positional: []Arg{resourceArg()},
			Args: append(handlerArgs(), Arg{Name: "deleted", Type: TypeBool, Default: "false",
				Doc: "also resume objects that are already being deleted"}),
		},
		{
			Name:       OnCreate,
			Targets:    TargetFunc,
			Summary:    "handle the creation of objects (Kopf's @kopf.on.create)",
			Positional: []Arg{resourceArg()},
			Args:       handlerArgs(),
		},
		{
			Name:       OnUpdate,
			Targets:    TargetFunc,
			Summary:    "handle changes of objects' essence: spec, labels, annotations (Kopf's @kopf.on.update)",
			Positional: []Arg{resourceArg()},
			Args:       handlerArgs(),
		},
		{
			Name:       OnDelete,
			Targets:    TargetFunc,
			Summary:    "handle the deletion of objects, holding it with a finalizer (Kopf's @kopf.on.delete)",
			Positional: []Arg{resourceArg()},
			Args: append(handlerArgs(), Arg{Name: "optional", Type: TypeBool, Default: "false",
				Doc: "do not add a finalizer: run only if the object is deleted while one exists anyway"}),
		},
	}
}
