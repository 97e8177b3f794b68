// Package port is `kopf-gen port`: it reads a Kopf operator's Python files
// and its CRDs' YAML files and returns the files of a kopf-go operator
// repository in the layout of `kopf-gen init` (package scaffold), which
// builds and passes `kopf-gen verify` as written: Kopf's decorators become
// //kopf: markers with the same resource, id and options, the CRDs typed
// API types, module-level state the memo, the handlers' known idioms Go,
// and every other statement a Python comment under // TODO(port):. [Port]
// returns the files and the figures ([Stats]) of what was translated.
//
// # Parsing Python: python3's own ast module
//
// The Python is parsed by the user's python3 (3.8 or newer, run isolated
// with -I), whose ast module prints the tree as JSON (pyast.py, embedded);
// without one, [ErrNoPython] names the interpreter and the version needed.
// A Kopf user has that Python, and it parses exactly what their operator
// runs on. No Go parser of Python 3 parses what Kopf operators are
// written in:
//   - go-python/gpython (a Go port of the CPython 3.4 interpreter; its
//     parser is a goyacc grammar of Python 3.4) has no async/await
//     keywords (3.5: Kopf's handlers are often `async def`), no f-strings
//     (3.6: its lexer knows the r, b and u string prefixes, not f), the
//     3.4 decorator grammar (a dotted name and its call, not PEP 614's
//     expressions), no walrus, positional-only parameters or match, and
//     its tree has no end positions, which the TODO(port) comments need to
//     quote a statement's source;
//   - tree-sitter's Python grammar (tree-sitter/tree-sitter-python with
//     its Go bindings, go-tree-sitter) parses the current syntax, but
//     through cgo (kopf-gen is a pure Go binary, installed with go
//     install), and into an error-tolerant concrete syntax tree: invalid
//     Python parses with ERROR nodes instead of failing, and f-strings'
//     conversions (!r, !s), format specs and implicit concatenations are
//     tokens to re-interpret rather than the JoinedStr/FormattedValue
//     nodes whose meaning Python defines;
//   - other Go projects (py4go and similar) shell out to python3
//     themselves, or handle a subset of the grammar.
//
// Python's ast is the definition of the language's syntax for every
// version the user has (type hints of 3.11, PEP 695 generics of 3.12,
// PEP 701 f-strings of 3.12), so the port never misreads a construct: what
// it does not translate, it keeps verbatim.
package port
