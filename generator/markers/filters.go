package markers

import (
	"fmt"
	"go/token"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// MatchKind is what a filter value checks.
type MatchKind int

// The kinds of filter values, as in Kopf: an exact value, kopf.PRESENT,
// kopf.ABSENT, or a callback.
const (
	MatchEqual MatchKind = iota + 1
	MatchPresent
	MatchAbsent
	MatchCallback
)

// The bare words of filter values.
const (
	WordPresent = "PRESENT"
	WordAbsent  = "ABSENT"
	// CallbackPrefix starts a bare callback reference: fn:isProd.
	CallbackPrefix = "fn:"
)

// Match is a filter value: the Go value of TypeMatch, and of each entry of
// TypeMatchMap.
type Match struct {
	Kind MatchKind
	// Value is the literal of MatchEqual: a string, or for TypeMatch also a
	// bool, an int64 or a float64.
	Value any
	// Func names the callback of MatchCallback: a function of the package.
	Func string
}

// String renders the match as it is written in a marker.
func (m Match) String() string {
	switch m.Kind {
	case MatchPresent:
		return WordPresent
	case MatchAbsent:
		return WordAbsent
	case MatchCallback:
		return CallbackPrefix + m.Func
	}
	if s, ok := m.Value.(string); ok {
		return strconv.Quote(s)
	}
	return fmt.Sprint(m.Value)
}

// KeyMatch is one entry of a TypeMatchMap: a label or annotation key and
// its filter value. The entries of a TypeMatchMap value are in source order,
// index for index with the Keys and Values of its [Node].
type KeyMatch struct {
	Key string
	Match
}

// jsonNumber is the syntax of a JSON number.
var jsonNumber = regexp.MustCompile(`^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?$`)

// match converts one filter value. Quoted values are always literal
// strings; bare values are PRESENT, ABSENT, fn:NAME, or literals: strings
// in maps (strings only), JSON scalars otherwise.
func (p *parser) match(a Arg, n Node, stringsOnly bool) (Match, bool) {
	off := n.Pos.Offset - p.base.Offset
	fail := func(format string, args ...any) (Match, bool) {
		p.errorf(off, "%s: %s", a.Name, fmt.Sprintf(format, args...))
		return Match{}, false
	}
	switch n.Kind {
	case NodeQuoted:
		return Match{Kind: MatchEqual, Value: n.Text}, true
	case NodeBare:
	default:
		return fail("want a filter value (a literal, PRESENT, ABSENT or fn:NAME), got %s", n.Kind)
	}
	s := n.Text
	switch {
	case s == WordPresent:
		return Match{Kind: MatchPresent}, true
	case s == WordAbsent:
		return Match{Kind: MatchAbsent}, true
	case strings.HasPrefix(s, CallbackPrefix):
		name := strings.TrimPrefix(s, CallbackPrefix)
		if !token.IsIdentifier(name) {
			return fail("%s is not a callback reference: want fn: followed by the name of a function of the package; quote the value for a literal string", s)
		}
		return Match{Kind: MatchCallback, Func: name}, true
	case s == "kopf."+WordPresent || s == "kopf."+WordAbsent:
		return fail("write %s without kopf., or quote it for a literal string", strings.TrimPrefix(s, "kopf."))
	}
	if stringsOnly {
		return Match{Kind: MatchEqual, Value: s}, true
	}
	switch s {
	case "true":
		return Match{Kind: MatchEqual, Value: true}, true
	case "false":
		return Match{Kind: MatchEqual, Value: false}, true
	case "null":
		return fail("null is not a filter value: omit %s= to check nothing, write ABSENT for a missing field, or quote \"null\" for the string", a.Name)
	}
	if jsonNumber.MatchString(s) {
		if !strings.ContainsAny(s, ".eE") {
			if v, err := strconv.ParseInt(s, 10, 64); err == nil {
				return Match{Kind: MatchEqual, Value: v}, true
			}
		}
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsInf(v, 0) {
			return fail("number %s is out of range", s)
		}
		return Match{Kind: MatchEqual, Value: v}, true
	}
	return Match{Kind: MatchEqual, Value: s}, true
}

// convertFilter converts the values of the filter types, recording errors
// and returning nil when a value does not fit.
func (p *parser) convertFilter(a Arg, n Node) any {
	off := n.Pos.Offset - p.base.Offset
	fail := func(format string, args ...any) any {
		p.errorf(off, "%s: %s", a.Name, fmt.Sprintf(format, args...))
		return nil
	}
	switch a.Type {
	case TypeMatch:
		m, ok := p.match(a, n, false)
		if !ok {
			return nil
		}
		return m
	case TypeMatchMap:
		if n.Kind != NodeMap {
			return fail("want a map {key: value, ...}, got %s", n.Raw)
		}
		out := make([]KeyMatch, 0, len(n.Keys))
		ok := true
		for i, k := range n.Keys {
			if k.Text == "" {
				p.errorf(k.Pos.Offset-p.base.Offset, "%s: empty key", a.Name)
				ok = false
				continue
			}
			m, good := p.match(a, n.Values[i], true)
			ok = ok && good
			out = append(out, KeyMatch{Key: k.Text, Match: m})
		}
		if !ok {
			return nil
		}
		return out
	case TypeFunc:
		if n.Kind != NodeBare && n.Kind != NodeQuoted {
			return fail("want a function name, got %s", n.Kind)
		}
		name := strings.TrimPrefix(n.Text, CallbackPrefix)
		if !token.IsIdentifier(name) {
			return fail("want the name of a function of the package (NAME or fn:NAME), got %q", n.Text)
		}
		return name
	case TypeFieldPath:
		var path []string
		switch n.Kind {
		case NodeBare, NodeQuoted:
			if n.Text == "" {
				return fail("empty field")
			}
			path = strings.Split(n.Text, ".")
			for _, seg := range path {
				if seg == "" {
					return fail("empty part in field %q: want a.b.c, or a list [a, \"b.c\"] for keys with dots", n.Text)
				}
			}
		case NodeList:
			if len(n.Items) == 0 {
				return fail("empty field")
			}
			for _, it := range n.Items {
				if it.Kind != NodeBare && it.Kind != NodeQuoted {
					p.errorf(it.Pos.Offset-p.base.Offset, "%s: the parts of a field must be strings, not %s", a.Name, it.Kind)
					return nil
				}
				if it.Text == "" {
					p.errorf(it.Pos.Offset-p.base.Offset, "%s: empty part in field", a.Name)
					return nil
				}
				path = append(path, it.Text)
			}
		default:
			return fail("want a field a.b.c or [a, b, c], got a map")
		}
		return path
	}
	return fail("unsupported argument type %s", a.Type)
}

// FieldSegmentPos returns the position of the i-th part of a field path
// written as n, as precisely as the syntax allows: the part itself in a
// bare dotted path or a list, the start of the value otherwise.
func FieldSegmentPos(n Node, i int) token.Position {
	switch n.Kind {
	case NodeList:
		if i < len(n.Items) {
			return n.Items[i].Pos
		}
	case NodeBare, NodeQuoted:
		start := 0
		if n.Kind == NodeQuoted {
			if n.Raw[1:len(n.Raw)-1] != n.Text {
				return n.Pos // escapes: offsets in Text are not offsets in Raw
			}
			start = 1
		}
		parts := strings.Split(n.Text, ".")
		off := start
		for j := 0; j < i && j < len(parts); j++ {
			off += len(parts[j]) + 1
		}
		pos := n.Pos
		pos.Offset += off
		pos.Column += off
		return pos
	}
	return n.Pos
}
