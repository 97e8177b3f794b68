package pyfmt

import (
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Repr returns Python's repr() of the value that v stands for (see the
// package doc): {x!r} in an f-string.
//
//	Repr(map[string]any{"b": nil, "a": []any{1, 2.5, "it's"}})
//	// {'a': [1, 2.5, "it's"], 'b': None}
func Repr(v any) string {
	var sb strings.Builder
	writeRepr(&sb, toNode(v, 0))
	return sb.String()
}

// Str returns Python's str() of the value that v stands for: a str as it
// is, anything else as [Repr]. It is {x!s} and {x} in an f-string.
func Str(v any) string {
	n := toNode(v, 0)
	if n.kind == kStr {
		return n.s
	}
	var sb strings.Builder
	writeRepr(&sb, n)
	return sb.String()
}

// Float returns Python's repr() (and str()) of the float f: the shortest
// digits that read back as f, positional with at least one fractional
// digit when the decimal exponent is within [-5, 15] ("1.0", "0.0001",
// "1000000000000000.0"), else scientific with a signed exponent of at
// least two digits ("1e+16", "1e-05", "1.25e-05"); "-0.0", "nan", "inf",
// "-inf". Unlike [Repr], an integral f is a float ("2.0", not "2").
func Float(f float64) string {
	switch {
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case f == 0 && math.Signbit(f):
		return "-0.0"
	case f == 0:
		return "0.0"
	}
	// Go's shortest round-trip digits are Python's (both pick the shortest
	// string that reads back, and the nearest of those); only the layout
	// differs. "-1.2345e+06" → sign "-", digits "12345", exponent 6.
	s := strconv.FormatFloat(f, 'e', -1, 64)
	sign := ""
	if s[0] == '-' {
		sign, s = "-", s[1:]
	}
	mantissa, exp, _ := strings.Cut(s, "e")
	digits := strings.Replace(mantissa, ".", "", 1)
	e, _ := strconv.Atoi(exp)
	point := e + 1 // digits are 0.d1d2… × 10^point, as in Python's dtoa
	switch {
	case point <= -4 || point > 16:
		out := sign + digits[:1]
		if len(digits) > 1 {
			out += "." + digits[1:]
		}
		expSign := "+"
		if e < 0 {
			expSign, e = "-", -e
		}
		if e < 10 {
			return out + "e" + expSign + "0" + strconv.Itoa(e)
		}
		return out + "e" + expSign + strconv.Itoa(e)
	case point <= 0:
		return sign + "0." + strings.Repeat("0", -point) + digits
	case point >= len(digits):
		return sign + digits + strings.Repeat("0", point-len(digits)) + ".0"
	default:
		return sign + digits[:point] + "." + digits[point:]
	}
}

// writeRepr writes Python's repr() of n, a dict's keys in their order.
func writeRepr(sb *strings.Builder, n node) {
	switch n.kind {
	case kNone:
		sb.WriteString("None")
	case kBool:
		if n.b {
			sb.WriteString("True")
		} else {
			sb.WriteString("False")
		}
	case kInt, kOther:
		sb.WriteString(n.s)
	case kFloat:
		sb.WriteString(Float(n.f))
	case kStr:
		writeStr(sb, n.s)
	case kList, kTuple:
		open, end := "[", "]"
		if n.kind == kTuple {
			open, end = "(", ")"
			if len(n.items) == 1 {
				end = ",)"
			}
		}
		sb.WriteString(open)
		for i, item := range n.items {
			if i > 0 {
				sb.WriteString(", ")
			}
			writeRepr(sb, item)
		}
		sb.WriteString(end)
	case kDict:
		sb.WriteByte('{')
		for i, key := range n.keys {
			if i > 0 {
				sb.WriteString(", ")
			}
			writeRepr(sb, key)
			sb.WriteString(": ")
			writeRepr(sb, n.items[i])
		}
		sb.WriteByte('}')
	}
}

// reprOf is writeRepr into a string.
func reprOf(n node) string {
	var sb strings.Builder
	writeRepr(&sb, n)
	return sb.String()
}

// writeStr writes Python's repr() of a str (Objects/unicodeobject.c's
// unicode_repr). Bytes that are not UTF-8 are U+FFFD, as Python's
// json.loads never makes them.
func writeStr(sb *strings.Builder, s string) {
	quote := '\''
	if strings.ContainsRune(s, '\'') && !strings.ContainsRune(s, '"') {
		quote = '"'
	}
	const hex = "0123456789abcdef"
	sb.WriteRune(quote)
	for _, r := range s {
		switch {
		case r == quote || r == '\\':
			sb.WriteByte('\\')
			sb.WriteRune(r)
		case r == '\t':
			sb.WriteString(`\t`)
		case r == '\n':
			sb.WriteString(`\n`)
		case r == '\r':
			sb.WriteString(`\r`)
		case r < ' ' || r == 0x7f:
			sb.WriteString(`\x`)
			sb.WriteByte(hex[r>>4])
			sb.WriteByte(hex[r&0xf])
		case r < utf8.RuneSelf || strconv.IsPrint(r):
			sb.WriteRune(r)
		case r < 0x100:
			sb.WriteString(`\x`)
			sb.WriteByte(hex[r>>4])
			sb.WriteByte(hex[r&0xf])
		case r < 0x10000:
			sb.WriteString(`\u`)
			for shift := 12; shift >= 0; shift -= 4 {
				sb.WriteByte(hex[(r>>shift)&0xf])
			}
		default:
			sb.WriteString(`\U`)
			for shift := 28; shift >= 0; shift -= 4 {
				sb.WriteByte(hex[(r>>shift)&0xf])
			}
		}
	}
	sb.WriteRune(quote)
}

// compare orders two dict keys as Python's sorted() does with pprint's
// _safe_key: numbers by value, str by code point, tuples and lists item by
// item; values of types that Python cannot compare by the name of their
// type (None, then numbers, dicts, lists, str, tuples), equal ones kept in
// their order.
func compare(a, b node) int {
	if isNumber(a) && isNumber(b) {
		return compareNumbers(a, b)
	}
	if a.kind != b.kind {
		return strings.Compare(typeName(a), typeName(b))
	}
	switch a.kind {
	case kStr, kOther:
		return strings.Compare(a.s, b.s)
	case kList, kTuple:
		for i := 0; i < len(a.items) && i < len(b.items); i++ {
			if c := compare(a.items[i], b.items[i]); c != 0 {
				return c
			}
		}
		return len(a.items) - len(b.items)
	}
	return 0
}

func isNumber(n node) bool { return n.kind == kBool || n.kind == kInt || n.kind == kFloat }

// typeName is what str(type(x)) starts to differ by in Python.
func typeName(n node) string {
	return [...]string{kNone: "NoneType", kBool: "bool", kInt: "int", kFloat: "float",
		kStr: "str", kList: "list", kTuple: "tuple", kDict: "dict", kOther: "object"}[n.kind]
}

func compareNumbers(a, b node) int {
	fa, fb := a.kind == kFloat, b.kind == kFloat
	if fa && math.IsNaN(a.f) || fb && math.IsNaN(b.f) {
		return 0 // unordered, as in Python
	}
	if fa && math.IsInf(a.f, 0) || fb && math.IsInf(b.f, 0) {
		return compareFloats(number(a), number(b))
	}
	return rational(a).Cmp(rational(b))
}

func compareFloats(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// number is n as a float64 (for the infinities).
func number(n node) float64 {
	switch n.kind {
	case kFloat:
		return n.f
	case kBool:
		if n.b {
			return 1
		}
		return 0
	}
	f, _ := strconv.ParseFloat(n.s, 64)
	return f
}

// rational is a finite number exactly.
func rational(n node) *big.Rat {
	r := new(big.Rat)
	switch n.kind {
	case kFloat:
		r.SetFloat64(n.f)
	case kBool:
		if n.b {
			r.SetInt64(1)
		}
	default:
		r.SetString(n.s)
	}
	return r
}
