package markers

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/kopf-go/kopf/generator/builtins"
)

// grammarHelp summarises the syntax for `kopf-gen markers`; the package doc
// is the full specification.
const grammarHelp = `Markers are line comments in the doc comment of a declaration:

	//kopf:NAME POSITIONAL... KEY=VALUE...

Values: bare words (no spaces), Go strings ("two words", ` + "`raw`" + `), integers,
floats, booleans (true, false), durations (1.5s, 2m, 1h30m, or 90 meaning
seconds), maps {k: v, ...} and lists [a, b]. Unknown markers and arguments are
errors, reported as file:line:col. A comment that looks like a misspelt marker
("// kopf:on.create", "//+kopf:on.create", "//Kopf:on.create") is not a marker:
kopf-gen warns about it, as file:line:col: warning: ..., and goes on.

Resource selectors: plural, kind, plural.group, plural.version.group,
group/version/plural, group/plural, v1/plural (the core group); *, group/*
or group/version/* (everything watchable but Events, as Kopf's EVERYTHING).

Filters (labels=, annotations=, value=, old=, new=): a quoted value is always
a literal string; the bare words PRESENT and ABSENT check presence; fn:NAME
calls the function NAME of the package; any other bare value is a literal (a
string in labels= and annotations=; in value=, old=, new= a JSON scalar:
true, false, a number, or else a string). Examples:

	//kopf:on.create kopfexamples labels={app: web, tier: PRESENT, canary: ABSENT, owner: fn:isOwner}
	//kopf:on.update kopfexamples field=spec.replicas old=1 new=fn:isLarge when=isReady
	//kopf:on.field kopfexamples field=[metadata, annotations, "example.com/x"] value="on"

Callbacks: when=F takes func(kw K) bool, with K the handler's FKwargs or its
kind's kwargs type (kopf.ChangingKwargs, kopf.TypedChangingKwargs[T] for a
typed resource T; kopf.EventKwargs, kopf.TypedEventKwargs[T] for on.event;
kopf.DaemonKwargs, kopf.TimerKwargs and their typed forms for daemon and
timer; kopf.AdmissionKwargs, kopf.TypedAdmissionKwargs[T] for on.validate
and on.mutate); label and annotation callbacks take func(value string)
bool (an absent key gives "") or func(value *string) bool (an absent key
gives nil, Kopf's None), either with kw kopf.ResourceKwargs after the
value; value=, old=, new= callbacks take func(value any) bool or
func(value any, kw kopf.ResourceKwargs) bool (an absent field gives nil).
Callbacks take kwargs by value, as handlers: a pointer is refused.

Admission webhooks: //kopf:on.validate and //kopf:on.mutate take
operations=[CREATE, UPDATE, DELETE, CONNECT] (all when left out),
subresource=NAME or * (the object itself when left out), persistent=,
side_effects=, ignore_failures=, and no retry options; an id is the webhook's
path, unique among the admission handlers.

RBAC: what the handlers' own API calls need (creating pods, reading
deployments) goes into the generated role (--manifests) from //kopf:rbac, in
the doc comment of a package-level function (the handler, or a helper it
calls) or of the package clause, or from controller-gen's +kubebuilder:rbac,
read where controller-gen reads it (at package level: the package's doc
comment, or a comment group of its own outside declarations). Both take
controller-gen's arguments; the rules are merged as controller-gen merges
them, without what the runtime's rules grant; namespace= gives a Role of that
namespace. A +kubebuilder: marker that kopf-gen does not read is a warning.

	//kopf:rbac groups=[""] resources=[pods] verbs=[get, list, watch, create, delete]
	//kopf:rbac groups=[apps] resources=[deployments] verbs=[get, patch] namespace=ops
	// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch

Typed resources: //kopf:resource group/version/plural on a struct type T gives
the handlers of that resource kopf.TypedChangingKwargs[T] (or
kopf.TypedEventKwargs[T], kopf.TypedDaemonKwargs[T], kopf.TypedTimerKwargs[T]): kw.Object, and for changing handlers kw.Old and
kw.New, decoded as *T once per cycle. These built-in resources are typed with
k8s.io/api:
`

// WriteHelp writes the help for every marker of the table: the grammar,
// then each marker's usage, targets, summary and arguments.
func WriteHelp(w io.Writer, t *Table) error {
	var b strings.Builder
	b.WriteString(grammarHelp)
	b.WriteString(builtinsHelp())
	for _, d := range t.defs {
		b.WriteString("\n")
		fmt.Fprintf(&b, "%s\n", d.Usage())
		fmt.Fprintf(&b, "    %s.\n", capitalize(d.Summary))
		fmt.Fprintf(&b, "    Applies to: %s.\n", d.Targets)
		tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
		for _, a := range d.Positional {
			fmt.Fprintf(tw, "    %s\t%s\trequired\t%s\n", a.Syntax(true), a.Type, a.Doc)
		}
		for _, a := range d.Args {
			typ := a.valueSyntax()
			if a.Positive {
				typ += ", > 0"
				switch a.Type {
				case TypeString:
					typ = "string, non-empty"
				case TypeStringList:
					typ = a.valueSyntax() + ", non-empty"
				}
			}
			def := "default: " + a.Default
			if a.Required {
				def = "required"
			}
			fmt.Fprintf(tw, "    %s\t%s\t%s\t%s\n", a.Name, typ, def, a.Doc)
		}
		if err := tw.Flush(); err != nil {
			return fmt.Errorf("formatting the help of %s: %w", d.Name, err)
		}
	}
	if len(t.planned) > 0 {
		b.WriteString("\nNot supported yet: Kopf's decorators that this kopf-gen has no marker for\n(a marker of these names is an error):\n\n")
		tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
		for _, p := range t.planned {
			what := "Kopf's " + p.Kopf
			if p.Instead != "" {
				what = "not a marker: " + p.Instead
			}
			fmt.Fprintf(tw, "%s%s\t%s\n", Prefix, p.Name, what)
		}
		if err := tw.Flush(); err != nil {
			return fmt.Errorf("formatting the planned markers: %w", err)
		}
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("writing the markers' help: %w", err)
	}
	return nil
}

// builtinsHelp lists the built-in typed resources by group and version.
func builtinsHelp() string {
	var b strings.Builder
	var gv string
	for _, r := range builtins.Table() {
		here := r.Group + "/" + r.Version
		if r.Group == "" {
			here = r.Version + " (core)"
		}
		if here != gv {
			if gv != "" {
				b.WriteString("\n")
			}
			fmt.Fprintf(&b, "\t%s:", here)
			gv = here
		}
		fmt.Fprintf(&b, " %s", r.Plural)
	}
	b.WriteString("\n")
	return b.String()
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
