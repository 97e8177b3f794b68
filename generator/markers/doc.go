// Package markers defines the grammar of kopf-gen's comment markers, the
// table of known markers, and the parser that turns a marker comment into
// typed values.
//
// # Where markers are written
//
// A marker is a Go line comment that starts exactly with "//kopf:" (no
// space after the slashes, no space after the colon) and is part of the doc
// comment of the declaration it applies to:
//
//	// CreateFn greets every new KopfExample.
//	//
//	//kopf:on.create kopf.dev/v1/kopfexamples timeout=1m retries=3
//	func CreateFn(ctx context.Context, kw CreateFnKwargs) (any, error) { ... }
//
// The markers are on.resume, on.create, on.update, on.delete and on.field
// (changing handlers), on.event (event handlers), daemon and timer
// (spawning handlers: per-object background work), on.startup,
// on.cleanup, on.login and on.probe (activity handlers: operator-wide,
// with no resource), index (index functions), on.validate and on.mutate
// (admission webhook handlers), on.reconcile (level-triggered reconcile
// handlers) on functions, resource (typed
// resources) on struct types, and rbac (the rules of the handlers' own API
// calls) on functions and the package clause; `kopf-gen markers` lists
// them with their arguments.
//
// Kopf's decorators that have no marker have planned markers
// ([Planned]): their names are reserved, so such a marker is an error
// saying that it is "not supported yet" or what to write instead (never
// "unknown marker"), and `kopf-gen markers` lists them. //kopf:subhandler
// is an error that points at kopf.Subhandler, which registers sub-handlers
// at run time. Unknown names
// that are Kopf's spelling of a marker with or without "on." (on.timer,
// create) are suggested the marker's name.
//
// Markers are Go directives: gofmt moves them to the end of the doc comment
// and [go/ast.CommentGroup.Text] drops them, so readers of this package must
// look at the raw comments (FuncDecl.Doc.List). Block comments are never
// markers.
//
// # Near misses
//
// A line comment that is not a marker but is most likely a misspelt one is
// a warning, not an error: it is reported with its position and the fix,
// and generation goes on as if it were prose. A near miss has, after "//",
// the prefix "kopf:" in any letter case, preceded by spaces, tabs or a '+'
// (kubebuilder's style), with spaces allowed around the colon, followed by
// the name of a marker (defined or planned) or a name close to one (see
// [Suggest]). So these are warnings:
//
//	// kopf:on.create kopfexamples     (a space after //)
//	//+kopf:on.create kopfexamples     (a '+')
//	//Kopf:on.create kopfexamples      (upper case)
//	// kopf : on.craete kopfexamples   (spaces around the colon, and a typo)
//
// and these are not: prose ("// kopf: this is great", "// Kopf's on.create
// handlers"), a marker quoted in prose ("// see //kopf:on.create"), and a
// marker commented out on purpose ("// //kopf:on.create x"). Comments are
// checked wherever they are in the file. "//kopf: on.create", which starts
// like a marker, is a marker with an error (missing name), with the same
// suggestion; see [Table.NearMiss].
//
// Each marker's definition says which declarations it applies to (functions
// or types). A marker anywhere else (a floating comment, a comment separated
// from its declaration by a blank line, a var or const declaration, a method,
// a function body) is an error, never silently ignored.
//
// # Syntax
//
// In EBNF, over the text of one comment:
//
//	marker     = "//kopf:" name { space+ argument } space* .
//	name       = a run of non-space characters, e.g. "on.create" .
//	argument   = positional | named .
//	positional = value .
//	named      = key "=" value .
//	key        = ( letter | "_" ) { letter | digit | "_" } .
//	value      = bare | quoted | raw | map | list .
//	bare       = a run of non-space characters not starting with '"', '`', '{' or '[' .
//	quoted     = a Go interpreted string literal, e.g. "two words\n" .
//	raw        = a Go raw string literal, e.g. `C:\path` .
//	map        = "{" [ entry { "," entry } [ "," ] ] "}" .
//	entry      = item ":" item .
//	list       = "[" [ item { "," item } [ "," ] ] "]" .
//	item       = value, where a bare item also ends at ',', '}' or ']',
//	             and a bare map key also at ':' .
//	space      = " " | "\t" .
//
// A token that starts with a key immediately followed by "=" is a named
// argument; any other token is a positional argument. Positional and named
// arguments may be mixed, but each named argument may appear only once.
// Inside maps and lists, spaces around items and separators are allowed.
// A bare map key ends at ':', so keys containing ':' must be quoted.
//
// # Values
//
// Every argument has a type, and a value is converted to that type when the
// marker is parsed. Quoting never changes the meaning of a scalar value
// (retries=3 and retries="3" are the same), except in filter values, where a
// quoted value is always a literal string (see Filters).
//
//   - string: any value; quote it to include spaces or to start it with a
//     quote, brace or bracket.
//   - int: a decimal integer, e.g. 3 or -1.
//   - float: a decimal or exponent number, e.g. 0.5 or 1e3; never NaN or Inf.
//   - bool: exactly true or false.
//   - duration: a Go duration (1.5s, 2m, 1h30m, 300ms) or, as in Kopf, a
//     plain number meaning seconds (90, 0.5).
//   - enum: one of a fixed set of words, e.g. errors=permanent.
//   - resource: a resource selector (see below).
//   - map: {key: value, ...} with string keys and string values, e.g.
//     {app: web, "example.com/tier": "front end"}.
//   - list: [item, ...] of strings, e.g. [CREATE, UPDATE]; some lists
//     accept only certain words (operations=), and a list marked positive
//     must not be empty.
//   - filter: a filter value (see Filters), e.g. value=PRESENT.
//   - filter map: {key: filter value, ...}, e.g. labels={app: web, tier: PRESENT}.
//   - function: the name of a function of the package, NAME or fn:NAME,
//     e.g. when=isReady.
//   - resources: a resource selector, or a list of them [r1, r2] (owns=,
//     watches=).
//   - field: a field of the object, dotted (spec.a.b) or as a list of
//     strings ([metadata, annotations, "example.com/key"]) for keys that
//     contain dots; no part may be empty.
//
// Arguments marked positive must be greater than zero (numbers and
// durations) or non-empty (strings): every duration of daemons and timers
// (interval=, idle=, initial_delay=, cancellation_backoff=,
// cancellation_timeout=, cancellation_polling=) is, since leaving it out
// is what zero means in Kopf. Arguments marked required must be
// given (field= of on.field); help writes them without brackets.
//
// # Filters
//
// Every handler marker takes Kopf's filters: labels= and annotations= (the
// object's metadata), field= with value= (the value at that field), old=
// and new= (on.update and on.field only: the field's value before and after
// the change), and when= (a function deciding on the whole object). All
// filters must match for the handler to run. For daemons and timers the
// filters decide whether the object has one: a daemon or timer starts when
// the object starts matching and stops when it no longer does.
//
// # Daemons and timers
//
// daemon and timer take the options of changing handlers (id=, param=,
// errors=, timeout=, retries=, backoff=) and the filters of on.event
// (labels=, annotations=, when=, field=, value=; no old= or new=), plus,
// as Kopf's @kopf.daemon: initial_delay=, cancellation_backoff=,
// cancellation_timeout=, cancellation_polling=; and as Kopf's @kopf.timer:
// interval=, idle=, sharp= (which needs interval=), initial_delay=:
//
//	//kopf:daemon kopfexamples backoff=3 cancellation_backoff=1.0 cancellation_timeout=0.5 annotations={someannotation: somevalue}
//	//kopf:timer kopfexamples idle=5 interval=2
//
// initial_delay= may also be a function computing the delay per object, as
// Kopf's: initial_delay=fn:F, F taking the kwargs of when= and returning a
// time.Duration.
//
// # Reconcile handlers
//
// on.reconcile takes id=, param=, the filters labels=, annotations= and
// when=, and: owns= (the resources of its children, whose changes re-run
// their owner), watches= (other resources, mapped to the objects to
// reconcile by map=, a function of the package, or by their
// ownerReferences without it), resync= (a duration), finalize= (a
// boolean) and backoff= (a duration):
//
//	//kopf:on.reconcile memcacheds owns=deployments.apps finalize=true
//	//kopf:on.reconcile memcacheds watches=[v1/configmaps, v1/secrets] map=byReference resync=10m
//
// # Admission webhooks
//
// on.validate and on.mutate take id= and param=, the filters of on.event
// (labels=, annotations=, when=, field=, value=), and, as Kopf's
// @kopf.on.validate and @kopf.on.mutate: operations= (a list of CREATE,
// UPDATE, DELETE and CONNECT; all when left out), subresource= (status,
// scale, ..., or * for the object and every subresource; the object only
// when left out), persistent=, side_effects= and ignore_failures=
// (booleans). They take no errors=, timeout=, retries= or backoff=: a
// webhook answers once, as in Kopf.
//
//	//kopf:on.validate kopfexamples field=spec.field value=not-allowed
//	//kopf:on.validate kopfexamples subresource=* operations=[CREATE, UPDATE]
//	//kopf:on.mutate kopfexamples labels={somelabel: somevalue} ignore_failures=true
//
// An operation is spelt in upper case, as the API server sends it; an
// unknown or repeated one is an error at its position (create and CRAETE
// are suggested CREATE). Kopf's deprecated operation= (one operation) is
// operations=[X] here.
//
// A filter value is written in one of these forms; the form, not the
// spelling of the word, decides its meaning, so there is no ambiguity:
//
//	"text" or `text`   a literal string, always, whatever the text
//	                   ("PRESENT" is the string PRESENT; "fn:x" the string fn:x)
//	PRESENT            the key or field must be present, with any value (kopf.PRESENT)
//	ABSENT             the key or field must be absent (kopf.ABSENT)
//	fn:NAME            a callback: the function NAME of the package decides
//	anything else      a bare literal
//
// Bare literals are strings in labels= and annotations= (label and
// annotation values are strings: app: 3 is the string "3"). In value=,
// old= and new= they are JSON scalars: true and false are booleans, JSON
// numbers (3, -0.5, 1e3) are numbers compared by value (integers as int64,
// others as float64), and any other word is a string. The bare words null,
// kopf.PRESENT and kopf.ABSENT are errors, to catch the Python spellings;
// quote them to mean the strings. After fn: must come a Go identifier.
//
//	//kopf:on.create kopfexamples labels={app: web, "example.com/tier": "front end", canary: ABSENT, env: PRESENT, owner: fn:isOwner}
//	//kopf:on.update kopfexamples field=spec.replicas old=1 new=fn:isLarge when=isReady
//	//kopf:on.field kopfexamples field=[metadata, annotations, "example.com/mode"] value="on"
//	//kopf:on.event kopfexamples field=spec.node value=fn:isNode when=fn:isListed
//
// value=, old= and new= need field=; value= cannot be combined with old= or
// new= (as in Kopf). With field= and none of them, the field must be
// present (Kopf's default, value=PRESENT). With field=, the handler's id is
// its id followed by "/" and the dotted field, as in Kopf:
// field_fn/spec.replicas.
//
// A handler's id is, unless id= sets it, its function's name in Kopf's
// (Python's) spelling: CreateFn → create_fn, HTTPServer → http_server,
// GetURL → get_url, Handler2 → handler2, CreateFn_1 → create_fn_1 (see
// registry.DefaultID). A Go port of a Kopf operator whose functions are
// named as in Python therefore keeps that operator's ids: its results land
// in status.create_fn and its progress in kopf.zalando.org/create_fn, and
// it takes over the objects that operator handled without handling them
// again.
//
// Callbacks are package-level, non-generic functions of the package being
// generated, checked at generate time against these signatures (FKwargs is
// the handler's generated kwargs type, an alias of its kind's):
//
//	when=F                      func(kw FKwargs) bool
//	                            func(kw kopf.ChangingKwargs) bool    (changing handlers)
//	                            func(kw kopf.TypedChangingKwargs[T]) bool (of a typed resource T)
//	                            func(kw kopf.EventKwargs) bool       (on.event)
//	                            func(kw kopf.TypedEventKwargs[T]) bool
//	                            func(kw kopf.DaemonKwargs) bool      (daemon; timer: TimerKwargs)
//	                            func(kw kopf.TypedDaemonKwargs[T]) bool
//	                            func(kw kopf.AdmissionKwargs) bool   (on.validate, on.mutate)
//	                            func(kw kopf.TypedAdmissionKwargs[T]) bool
//	labels=, annotations= fn:F  func(value string) bool ("" when absent)
//	                            func(value *string) bool (nil when absent, as Kopf's None)
//	                            either with kw kopf.ResourceKwargs after the value
//	value=, old=, new= fn:F     func(value any) bool
//	                            func(value any, kw kopf.ResourceKwargs) bool
//
// Kwargs are taken by value, as handlers take them; a callback taking them
// by pointer is refused with the by-value signature to write.
//
// As in Kopf, a callback is called whether or not the value is present:
// string callbacks get "" for an absent label or annotation, value
// callbacks get nil for an absent field. A when= callback taking FKwargs
// or the kind's kwargs type (one callback may serve several handlers)
// sees what the handler would see; for a typed resource, if the object does
// not decode, the callback is skipped and the handler runs to report the
// decoding error.
//
// # Typed resources
//
// The marker //kopf:resource, in the doc comment of a struct type T, says
// that the objects of a resource decode into T:
//
//	//kopf:resource kopf.dev/v1/kopfexamples
//	type KopfExample struct {
//		metav1.TypeMeta   `json:",inline"`
//		metav1.ObjectMeta `json:"metadata,omitempty"`
//		Spec   KopfExampleSpec   `json:"spec,omitempty"`
//		Status KopfExampleStatus `json:"status,omitempty"`
//	}
//
// Its selector must include the version (group/version/plural,
// group/version/Kind, plural.version.group, or v1/plural for the core
// group). Handlers whose selectors all name it (by that name, by T's name
// or by T's name in lower case; with the same group and version if they
// give them) get kopf.TypedChangingKwargs[T] (kopf.TypedEventKwargs[T]):
// kw.Object, and for changing handlers kw.Old and kw.New, decoded as *T
// once per cycle (the typed spec is kw.Object.Spec); kw.Body, kw.Spec and
// kw.Status stay the raw object's.
// field= on such handlers is checked against T's JSON field names. A type
// serves the handlers of its own package and of the packages importing it
// directly. A fixed set of built-in resources (pods, deployments, jobs, ...;
// see `kopf-gen markers`) is typed with k8s.io/api the same way.
//
// A package whose typed resources are runtime.Objects also gets their
// scheme registration (zz_generated.register.go: SchemeGroupVersion,
// AddToScheme), and, with kopf-gen --clients, those marked +genclient get
// a typed clientset and apply configurations from k8s.io/code-generator
// (see package generator and docs/clients.md).
//
// # Errors
//
// Every error carries the position of the offending text, as
// file:line:column with a byte column, and the parser reports every error of
// a marker it can find rather than stopping at the first. Unknown markers
// and unknown arguments are errors, with a suggestion when a known name is
// close. Every "did you mean" of kopf-gen (here and in package model: field
// paths, resources, callbacks) comes from [Suggest] or [SuggestWithin]: the
// edit distance counting insertions, deletions, substitutions and swaps of
// adjacent bytes, within a third of the name's length (1 to 3).
//
// # RBAC
//
// //kopf:rbac is controller-gen's +kubebuilder:rbac in this grammar, with
// its arguments as lists (groups=, resources=, resourceNames=, verbs=,
// urls=) and namespace=; [Marker.RBACRule] gives its rule as
// controller-tools' rbac.Rule:
//
//	//kopf:rbac groups=[""] resources=[pods] verbs=[get, list, watch, create, delete]
//	//kopf:rbac groups=[apps] resources=[deployments] verbs=[get, patch] namespace=ops
//
// +kubebuilder:rbac itself is parsed by controller-tools
// ([ParseKubebuilderRBAC]); [CheckRBACRule] holds both to what the API
// server accepts. [Table.KubebuilderWarning] tells which other
// +kubebuilder: comments kopf-gen does not read: names that none of
// controller-tools' CRD, object and RBAC generators defines (with the
// closest one), controller-runtime's webhook markers, and near misses
// ("// kubebuilder:rbac:..." without its '+').
//
// # Definitions
//
// The [Table] of [Definition] values is the single source of truth: the
// parser validates against it and `kopf-gen markers` prints its help from
// it, so the help cannot drift from what the parser accepts.
package markers
