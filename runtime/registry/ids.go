package registry

import (
	"strings"
	"unicode"
)

// DefaultID returns the id of a handler named after a Go function: the
// function's name in Kopf's (Python's) spelling, so that a Go port of a Kopf
// operator whose functions are named as in Python (create_fn → CreateFn)
// keeps that operator's ids, and thus its results (status.create_fn) and
// progress (kopf.zalando.org/create_fn).
//
// Words are lower-cased and joined by "_": a word starts at an upper-case
// letter that follows a lower-case letter or a digit (CreateFn → create_fn),
// and at the last upper-case letter of an acronym followed by a lower-case
// letter (HTTPServer → http_server, GetURL → get_url). Digits stay attached
// to what precedes them (Handler2 → handler2, V1Pods → v1_pods); a Python
// name with an underscore before a digit (create_fn_1) is spelt with it in
// Go (CreateFn_1 → create_fn_1). Underscores are kept, never doubled.
// Names already in Python's spelling are unchanged.
func DefaultID(name string) string {
	rs := []rune(name)
	var b strings.Builder
	b.Grow(len(name) + 4)
	underscore := false // the last rune written is "_"
	for i, r := range rs {
		if unicode.IsUpper(r) && i > 0 && !underscore {
			prev := rs[i-1]
			nextLower := i+1 < len(rs) && unicode.IsLower(rs[i+1])
			if unicode.IsLower(prev) || unicode.IsDigit(prev) || (unicode.IsUpper(prev) && nextLower) {
				b.WriteByte('_')
			}
		}
		if r == '_' && underscore {
			continue
		}
		b.WriteRune(unicode.ToLower(r))
		underscore = r == '_'
	}
	return b.String()
}
