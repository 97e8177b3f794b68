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
// Markers are Go directives: gofmt moves them to the end of the doc comment
// and [go/ast.CommentGroup.Text] drops them, so readers of this package must
// look at the raw comments (FuncDecl.Doc.List). A comment "// kopf:..." (with
// a space) is ordinary prose and is not a marker. Block comments are never
// markers.
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
// marker is parsed. Quoting never changes the meaning of a scalar value:
// retries=3 and retries="3" are the same.
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
//     labels={app: web, "example.com/tier": "front end"}.
//   - list: [item, ...] of strings, e.g. [CREATE, UPDATE].
//
// Arguments marked positive must be greater than zero (numbers and
// durations) or non-empty (strings).
//
// # Resource selectors
//
// A resource selector names the resource a handler serves, as Kopf's
// decorators accept it in one argument:
//
//	kopfexamples                   plural (or kind, singular, short name), any group
//	KopfExample                    kind
//	kopfexamples.kopf.dev          plural.group
//	kopfexamples.v1.kopf.dev       plural.version.group
//	kopf.dev/v1/kopfexamples       group/version/plural
//	kopf.dev/kopfexamples          group/plural
//	v1/pods                        version/plural: the core group
//
// A first part that looks like a Kubernetes version (v1, v2beta1, v1alpha3)
// is a version, otherwise it is a group. The selector becomes a
// resources.Selector with Group, Version and Name.
//
// # Errors
//
// Every error carries the position of the offending text, as
// file:line:column with a byte column, and the parser reports every error of
// a marker it can find rather than stopping at the first. Unknown markers
// and unknown arguments are errors, with a suggestion when a known name is
// close.
//
// # Definitions
//
// The [Table] of [Definition] values is the single source of truth: the
// parser validates against it and `kopf-gen markers` prints its help from
// it, so the help cannot drift from what the parser accepts.
package markers
