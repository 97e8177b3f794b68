package markers

import (
	"fmt"
	"strings"

	"github.com/kopf-go/kopf/runtime/resources"
)

// Everything is the Name of the selector of every resource (Kopf's
// kopf.EVERYTHING), written * or EVERYTHING.
const Everything = "*"

// ParseSelector parses a resource selector written as one token; see the
// package doc for the accepted forms. A version without a group (v1/pods,
// pods.v1) selects the core group: Core is set. The name * or EVERYTHING
// (alone, or after group/ or group/version/) becomes [Everything].
func ParseSelector(s string) (resources.Selector, error) {
	var sel resources.Selector
	if s == "" {
		return sel, fmt.Errorf("empty resource selector")
	}
	bad := func(format string, args ...any) (resources.Selector, error) {
		return resources.Selector{}, fmt.Errorf("invalid resource selector %q: %s", s, fmt.Sprintf(format, args...))
	}
	switch {
	case strings.Contains(s, "/"):
		parts := strings.Split(s, "/")
		for _, part := range parts {
			if part == "" {
				return bad("empty part between slashes")
			}
		}
		switch len(parts) {
		case 2:
			if isVersion(parts[0]) {
				sel = resources.Selector{Version: parts[0], Name: parts[1]}
			} else {
				sel = resources.Selector{Group: parts[0], Name: parts[1]}
			}
		case 3:
			sel = resources.Selector{Group: parts[0], Version: parts[1], Name: parts[2]}
		default:
			return bad("want group/version/plural, group/plural or version/plural")
		}
	case strings.Contains(s, "."):
		name, rest, _ := strings.Cut(s, ".")
		sel.Name = name
		if first, after, found := strings.Cut(rest, "."); isVersion(first) {
			if found && after == "" {
				return bad("empty group after the version")
			}
			sel.Version, sel.Group = first, after
		} else {
			sel.Group = rest
		}
		if sel.Version == "" && sel.Group == "" {
			return bad("empty group after the dot")
		}
	default:
		sel.Name = s
	}
	if sel.Name == "EVERYTHING" {
		sel.Name = Everything
	}
	if sel.Name == Everything && strings.Contains(s, ".") && !strings.Contains(s, "/") {
		return bad("the everything selector is written *, group/* or group/version/*")
	}
	if sel.Name != Everything && !isName(sel.Name) {
		return bad("%q is not a resource name (plural, singular, kind or short name)", sel.Name)
	}
	if sel.Version != "" && !isLabel(sel.Version) {
		return bad("%q is not an API version", sel.Version)
	}
	if sel.Group != "" && !isGroup(sel.Group) {
		return bad("%q is not an API group", sel.Group)
	}
	sel.Core = sel.Group == "" && sel.Version != ""
	return sel, nil
}

// isVersion reports whether s looks like a Kubernetes API version: v1,
// v2beta1, v1alpha3.
func isVersion(s string) bool {
	if len(s) < 2 || s[0] != 'v' {
		return false
	}
	i := 1
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	if i == 1 || s[1] == '0' {
		return false
	}
	if i == len(s) {
		return true
	}
	rest := s[i:]
	for _, stage := range []string{"alpha", "beta"} {
		if num, ok := strings.CutPrefix(rest, stage); ok {
			if num == "" || num[0] == '0' {
				return false
			}
			for j := 0; j < len(num); j++ {
				if !isDigit(num[j]) {
					return false
				}
			}
			return true
		}
	}
	return false
}

// isName accepts plurals, singulars, kinds and short names: a letter
// followed by letters, digits and dashes, not ending in a dash.
func isName(s string) bool {
	if s == "" || !isLetter(s[0]) || s[len(s)-1] == '-' {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isLetter(s[i]) && !isDigit(s[i]) && s[i] != '-' {
			return false
		}
	}
	return true
}

// isLabel accepts a DNS-1123 label: lower-case letters, digits and dashes,
// starting and ending with a letter or digit.
func isLabel(s string) bool {
	if s == "" || len(s) > 63 || s[0] == '-' || s[len(s)-1] == '-' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z') && !isDigit(c) && c != '-' {
			return false
		}
	}
	return true
}

// isGroup accepts a DNS-1123 subdomain.
func isGroup(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for _, label := range strings.Split(s, ".") {
		if !isLabel(label) {
			return false
		}
	}
	return true
}
