// Package scope decides which namespaces an operator serves, from Kopf's
// -n/--namespace patterns: exact names, globs (fnmatch-style: *, ?, [...]),
// negations with a leading "!", and comma-separated lists of those.
//
// A namespace is served if it matches at least one positive pattern (or
// there are none) and no negative pattern. Patterns are applied in no
// particular order: negation always wins.
package scope

import (
	"fmt"
	"path"
	"strings"
)

// Scope is a parsed set of namespace patterns. The zero Scope serves the
// whole cluster.
type Scope struct {
	include []string
	exclude []string
}

// Parse parses -n values; each may be a comma-separated list. It rejects
// malformed globs.
func Parse(values []string) (Scope, error) {
	var s Scope
	for _, v := range values {
		for _, p := range strings.Split(v, ",") {
			p = strings.TrimSpace(p)
			if p == "" {
				continue
			}
			neg := strings.HasPrefix(p, "!")
			p = strings.TrimPrefix(p, "!")
			if _, err := path.Match(p, ""); err != nil {
				return Scope{}, fmt.Errorf("bad namespace pattern %q: %w", p, err)
			}
			if neg {
				s.exclude = append(s.exclude, p)
			} else {
				s.include = append(s.include, p)
			}
		}
	}
	return s, nil
}

// Clusterwide reports whether the scope has no patterns at all.
func (s Scope) Clusterwide() bool { return len(s.include) == 0 && len(s.exclude) == 0 }

// Matches reports whether a namespace is served.
func (s Scope) Matches(namespace string) bool {
	for _, p := range s.exclude {
		if ok, _ := path.Match(p, namespace); ok {
			return false
		}
	}
	if len(s.include) == 0 {
		return true
	}
	for _, p := range s.include {
		if ok, _ := path.Match(p, namespace); ok {
			return true
		}
	}
	return false
}

// ExactNamespaces returns the namespaces to watch one by one when every
// pattern is a plain name with no negation; otherwise ok is false and the
// whole cluster must be watched and filtered with Matches.
func (s Scope) ExactNamespaces() (names []string, ok bool) {
	if len(s.exclude) > 0 || len(s.include) == 0 {
		return nil, false
	}
	for _, p := range s.include {
		if strings.ContainsAny(p, "*?[\\") {
			return nil, false
		}
	}
	return s.include, true
}
