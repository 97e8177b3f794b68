package diffs

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// String renders the diff the way Kopf logs it (the Python repr() of its
// tuple of items), so that "{Title} diff: {diff}" log lines look the same:
//
//	(('add', ('spec', 'field'), None, 'value'), ('remove', ('spec', 'x'), 1, None))
//
// Rendering rules: the diff and every path are Python tuples (a single
// element gets a trailing comma, the empty tuple is "()"); strings are
// single-quoted with Python's escaping (double quotes when the string
// contains a single quote and no double quote); nil is None; booleans are
// True/False; maps are rendered as dicts with their keys sorted (Python
// would keep insertion order, which Go maps do not have); lists as lists.
// Integral float64 values below 1e16 in magnitude are rendered as integers,
// because Python would have decoded them from JSON as ints; other floats
// follow Python's float repr (e.g. 0.5, 1e+16). An empty diff is "()".
// The rendering is for humans and logs; it is not meant to be parsed.
func (d Diff) String() string {
	var sb strings.Builder
	sb.WriteByte('(')
	for i, item := range d {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString(item.String())
	}
	if len(d) == 1 {
		sb.WriteByte(',')
	}
	sb.WriteByte(')')
	return sb.String()
}

// String renders one item as Kopf does: ('op', ('path', ...), old, new).
// See Diff.String for the rendering rules.
func (it Item) String() string {
	var sb strings.Builder
	sb.WriteByte('(')
	writeRepr(&sb, string(it.Op))
	sb.WriteString(", ")
	sb.WriteByte('(')
	for i, key := range it.Path {
		if i > 0 {
			sb.WriteString(", ")
		}
		writeRepr(&sb, key)
	}
	if len(it.Path) == 1 {
		sb.WriteByte(',')
	}
	sb.WriteString("), ")
	writeRepr(&sb, it.Old)
	sb.WriteString(", ")
	writeRepr(&sb, it.New)
	sb.WriteByte(')')
	return sb.String()
}

func writeRepr(sb *strings.Builder, v any) {
	if isNil(v) {
		sb.WriteString("None")
		return
	}
	switch x := v.(type) {
	case string:
		sb.WriteString(pyStringRepr(x))
		return
	case bool:
		if x {
			sb.WriteString("True")
		} else {
			sb.WriteString("False")
		}
		return
	case json.Number:
		if _, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			sb.WriteString(string(x))
		} else if f, err := strconv.ParseFloat(string(x), 64); err == nil {
			sb.WriteString(pyFloatRepr(f))
		} else {
			sb.WriteString(string(x))
		}
		return
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1e16 {
			sb.WriteString(strconv.FormatFloat(x, 'f', 0, 64))
		} else {
			sb.WriteString(pyFloatRepr(x))
		}
		return
	case float32:
		writeRepr(sb, float64(x))
		return
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		fmt.Fprintf(sb, "%d", x)
		return
	}
	if m, ok := asMap(v); ok {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		sb.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				sb.WriteString(", ")
			}
			sb.WriteString(pyStringRepr(k))
			sb.WriteString(": ")
			writeRepr(sb, m[k])
		}
		sb.WriteByte('}')
		return
	}
	if l, ok := asList(v); ok {
		sb.WriteByte('[')
		for i, item := range l {
			if i > 0 {
				sb.WriteString(", ")
			}
			writeRepr(sb, item)
		}
		sb.WriteByte(']')
		return
	}
	if s, ok := asString(v); ok {
		sb.WriteString(pyStringRepr(s))
		return
	}
	fmt.Fprintf(sb, "%v", v)
}

// pyStringRepr mimics Python's repr() of a str.
func pyStringRepr(s string) string {
	quote := byte('\'')
	if strings.ContainsRune(s, '\'') && !strings.ContainsRune(s, '"') {
		quote = '"'
	}
	var sb strings.Builder
	sb.WriteByte(quote)
	for _, r := range s {
		switch {
		case r == '\\':
			sb.WriteString(`\\`)
		case r == rune(quote):
			sb.WriteByte('\\')
			sb.WriteByte(quote)
		case r == '\n':
			sb.WriteString(`\n`)
		case r == '\r':
			sb.WriteString(`\r`)
		case r == '\t':
			sb.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&sb, `\x%02x`, r)
		case r < 0x7f || strconv.IsPrint(r):
			sb.WriteRune(r)
		case r < 0x100:
			fmt.Fprintf(&sb, `\x%02x`, r)
		case r < 0x10000:
			fmt.Fprintf(&sb, `\u%04x`, r)
		default:
			fmt.Fprintf(&sb, `\U%08x`, r)
		}
	}
	sb.WriteByte(quote)
	return sb.String()
}

// pyFloatRepr mimics Python's repr() of a float: the shortest round-trip
// digits, positional notation for exponents in [-4, 16), scientific
// notation (with at least two exponent digits) otherwise, and ".0" for
// integral values in positional notation.
func pyFloatRepr(f float64) string {
	switch {
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	sci := strconv.FormatFloat(f, 'e', -1, 64)
	epos := strings.IndexByte(sci, 'e')
	exp, _ := strconv.Atoi(sci[epos+1:])
	if exp >= -4 && exp < 16 {
		s := strconv.FormatFloat(f, 'f', -1, 64)
		if !strings.ContainsAny(s, ".") {
			s += ".0"
		}
		return s
	}
	return sci
}
