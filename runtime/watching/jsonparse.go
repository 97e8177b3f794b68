package watching

import (
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// parser decodes JSON in one pass into the values that
// sigs.k8s.io/json.UnmarshalCaseSensitivePreserveInts (client-go's
// unstructured decoding) produces for an `any`: map[string]any, []any,
// string, bool, nil, int64 for numbers without a "." that fit, float64 for
// the others. It accepts and rejects the same documents (the fuzz test
// compares them), but its errors are worded differently.
//
// Object keys are interned for the parser's lifetime: the keys of one
// resource's objects repeat in every object, and a shared string costs no
// allocation.
type parser struct {
	data  []byte
	pos   int
	depth int
	keys  map[string]string
}

// maxDepth is encoding/json's limit of nested objects and arrays.
const maxDepth = 10000

// Limits of the key cache: it should hold a resource's field names, not
// every name or UID that appears as a key (labels, annotations).
const (
	maxInternedKeys   = 1024
	maxInternedKeyLen = 64
)

// What an object is, for what may be skipped in it.
type objectKind uint8

const (
	anyObject      objectKind = iota
	resourceObject            // a Kubernetes object: its metadata is metaObject
	metaObject                // metadata: managedFields are skipped
)

func newParser() *parser { return &parser{keys: map[string]string{}} }

func (p *parser) reset(data []byte) {
	p.data, p.pos, p.depth = data, 0, 0
}

// syntaxError is malformed JSON at an offset of the parsed document.
type syntaxError struct {
	msg    string
	offset int
}

func (e *syntaxError) Error() string {
	return fmt.Sprintf("invalid JSON at offset %d: %s", e.offset, e.msg)
}

func (p *parser) fail(msg string) error { return &syntaxError{msg: msg, offset: p.pos} }

func (p *parser) unexpected(context string) error {
	if p.pos >= len(p.data) {
		return p.fail("unexpected end of JSON input")
	}
	return p.fail(fmt.Sprintf("invalid character %q %s", p.data[p.pos], context))
}

func (p *parser) ws() {
	for p.pos < len(p.data) {
		switch p.data[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

// end checks that only whitespace follows the top-level value.
func (p *parser) end() error {
	p.ws()
	if p.pos < len(p.data) {
		return p.unexpected("after top-level value")
	}
	return nil
}

// value parses any JSON value.
func (p *parser) value() (any, error) {
	p.ws()
	if p.pos >= len(p.data) {
		return nil, p.unexpected("")
	}
	switch c := p.data[p.pos]; {
	case c == '{':
		m, err := p.object(anyObject)
		if err != nil {
			return nil, err
		}
		return m, nil
	case c == '[':
		return p.array()
	case c == '"':
		return p.str()
	case c == 't':
		return true, p.literal("true")
	case c == 'f':
		return false, p.literal("false")
	case c == 'n':
		return nil, p.literal("null")
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	}
	return nil, p.unexpected("looking for beginning of value")
}

func (p *parser) literal(lit string) error {
	if len(p.data)-p.pos >= len(lit) && string(p.data[p.pos:p.pos+len(lit)]) == lit {
		p.pos += len(lit)
		return nil
	}
	for i := range len(lit) { // point at the first wrong byte, as encoding/json does
		if p.pos+i >= len(p.data) || p.data[p.pos+i] != lit[i] {
			p.pos += i
			break
		}
	}
	return p.unexpected("in literal " + lit)
}

func (p *parser) enter() error {
	p.depth++
	if p.depth > maxDepth {
		return p.fail("exceeded max depth")
	}
	return nil
}

// object parses an object; p.data[p.pos] is '{'.
func (p *parser) object(kind objectKind) (map[string]any, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	p.pos++
	m := map[string]any{}
	p.ws()
	if p.pos < len(p.data) && p.data[p.pos] == '}' {
		p.pos++
		p.depth--
		return m, nil
	}
	for {
		key, err := p.objectKey()
		if err != nil {
			return nil, err
		}
		switch {
		case kind == metaObject && key == "managedFields":
			err = p.skip()
		case kind == resourceObject && key == "metadata" && p.peek() == '{':
			m[key], err = p.object(metaObject)
		default:
			m[key], err = p.value()
		}
		if err != nil {
			return nil, err
		}
		if done, err := p.objectNext(); err != nil {
			return nil, err
		} else if done {
			return m, nil
		}
	}
}

// peek returns the next byte after whitespace, or 0 at the end.
func (p *parser) peek() byte {
	p.ws()
	if p.pos < len(p.data) {
		return p.data[p.pos]
	}
	return 0
}

// array parses an array; p.data[p.pos] is '['.
func (p *parser) array() ([]any, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	p.pos++
	a := []any{}
	p.ws()
	if p.pos < len(p.data) && p.data[p.pos] == ']' {
		p.pos++
		p.depth--
		return a, nil
	}
	for {
		v, err := p.value()
		if err != nil {
			return nil, err
		}
		a = append(a, v)
		if done, err := p.arrayNext(); err != nil {
			return nil, err
		} else if done {
			return a, nil
		}
	}
}

// objectKey parses a key and its colon.
func (p *parser) objectKey() (string, error) {
	p.ws()
	if p.pos >= len(p.data) || p.data[p.pos] != '"' {
		return "", p.unexpected("looking for beginning of object key string")
	}
	key, err := p.key()
	if err != nil {
		return "", err
	}
	p.ws()
	if p.pos >= len(p.data) || p.data[p.pos] != ':' {
		return "", p.unexpected("after object key")
	}
	p.pos++
	return key, nil
}

// objectNext moves past the comma after a key:value pair, or past the
// closing brace (done).
func (p *parser) objectNext() (done bool, err error) {
	return p.next('}', "after object key:value pair")
}

// arrayNext moves past the comma after an element, or past the closing
// bracket (done).
func (p *parser) arrayNext() (done bool, err error) {
	return p.next(']', "after array element")
}

func (p *parser) next(closing byte, context string) (done bool, err error) {
	p.ws()
	if p.pos >= len(p.data) {
		return false, p.unexpected("")
	}
	switch p.data[p.pos] {
	case ',':
		p.pos++
		return false, nil
	case closing:
		p.pos++
		p.depth--
		return true, nil
	}
	return false, p.unexpected(context)
}

// key parses a string, interned; p.data[p.pos] is '"'.
func (p *parser) key() (string, error) {
	start := p.pos + 1
	for i := start; i < len(p.data); i++ {
		c := p.data[i]
		if c == '"' {
			p.pos = i + 1
			return p.intern(p.data[start:i]), nil
		}
		if c == '\\' || c < 0x20 || c >= utf8.RuneSelf {
			break
		}
	}
	b, err := p.unquote(start)
	if err != nil {
		return "", err
	}
	return p.intern(b), nil
}

func (p *parser) intern(b []byte) string {
	if s, ok := p.keys[string(b)]; ok {
		return s
	}
	s := string(b)
	if len(s) <= maxInternedKeyLen && len(p.keys) < maxInternedKeys {
		p.keys[s] = s
	}
	return s
}

// str parses a string; p.data[p.pos] is '"'.
func (p *parser) str() (string, error) {
	start := p.pos + 1
	for i := start; i < len(p.data); i++ {
		c := p.data[i]
		if c == '"' {
			p.pos = i + 1
			return string(p.data[start:i]), nil
		}
		if c == '\\' || c < 0x20 || c >= utf8.RuneSelf {
			break
		}
	}
	b, err := p.unquote(start)
	return string(b), err
}

// unquote decodes the string that starts at start (after its quote) and
// moves past its closing quote. Like encoding/json, it replaces invalid
// UTF-8 and unpaired surrogates with U+FFFD.
func (p *parser) unquote(start int) ([]byte, error) {
	b := make([]byte, 0, 64)
	i := start
	for {
		if i >= len(p.data) {
			p.pos = i
			return nil, p.unexpected("")
		}
		c := p.data[i]
		switch {
		case c == '"':
			p.pos = i + 1
			return b, nil
		case c < 0x20:
			p.pos = i
			return nil, p.unexpected("in string literal")
		case c == '\\':
			i++
			if i >= len(p.data) {
				p.pos = i
				return nil, p.unexpected("")
			}
			switch e := p.data[i]; e {
			case '"', '\\', '/':
				b = append(b, e)
				i++
			case 'b':
				b = append(b, '\b')
				i++
			case 'f':
				b = append(b, '\f')
				i++
			case 'n':
				b = append(b, '\n')
				i++
			case 'r':
				b = append(b, '\r')
				i++
			case 't':
				b = append(b, '\t')
				i++
			case 'u':
				r, err := p.hex4(i + 1)
				if err != nil {
					return nil, err
				}
				i += 5
				if utf16.IsSurrogate(r) {
					r2 := rune(-1)
					if i+1 < len(p.data) && p.data[i] == '\\' && p.data[i+1] == 'u' {
						if r2, err = p.hex4(i + 2); err != nil {
							return nil, err
						}
					}
					if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
						b = utf8.AppendRune(b, dec)
						i += 6
						break
					}
					r = utf8.RuneError
				}
				b = utf8.AppendRune(b, r)
			default:
				p.pos = i
				return nil, p.unexpected("in string escape code")
			}
		case c < utf8.RuneSelf:
			b = append(b, c)
			i++
		default:
			r, size := utf8.DecodeRune(p.data[i:])
			if r == utf8.RuneError && size == 1 {
				b = utf8.AppendRune(b, utf8.RuneError)
			} else {
				b = append(b, p.data[i:i+size]...)
			}
			i += size
		}
	}
}

// hex4 decodes the 4 hex digits of a \u escape at i.
func (p *parser) hex4(i int) (rune, error) {
	var r rune
	for j := range 4 {
		if i+j >= len(p.data) {
			p.pos = i + j
			return 0, p.unexpected("")
		}
		c := p.data[i+j]
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			p.pos = i + j
			return 0, p.unexpected("in \\u hexadecimal character escape")
		}
		r = r<<4 | rune(c)
	}
	return r, nil
}

// scanNumber moves past a number and reports whether it has no fraction.
func (p *parser) scanNumber() (noDot bool, err error) {
	d, i := p.data, p.pos
	if d[i] == '-' {
		i++
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case i < len(d) && d[i] >= '1' && d[i] <= '9':
		for i++; i < len(d) && d[i] >= '0' && d[i] <= '9'; i++ {
		}
	default:
		p.pos = i
		return false, p.unexpected("in numeric literal")
	}
	noDot = true
	if i < len(d) && d[i] == '.' {
		noDot = false
		i++
		if i >= len(d) || d[i] < '0' || d[i] > '9' {
			p.pos = i
			return false, p.unexpected("after decimal point in numeric literal")
		}
		for ; i < len(d) && d[i] >= '0' && d[i] <= '9'; i++ {
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if i >= len(d) || d[i] < '0' || d[i] > '9' {
			p.pos = i
			return false, p.unexpected("in exponent of numeric literal")
		}
		for ; i < len(d) && d[i] >= '0' && d[i] <= '9'; i++ {
		}
	}
	p.pos = i
	return noDot, nil
}

// number parses a number: an int64 if it has no "." and fits, else a
// float64 (an error if it overflows even that).
func (p *parser) number() (any, error) {
	start := p.pos
	noDot, err := p.scanNumber()
	if err != nil {
		return nil, err
	}
	lit := p.data[start:p.pos]
	if noDot {
		if n, ok := smallInt(lit); ok {
			return n, nil
		}
		if n, err := strconv.ParseInt(string(lit), 10, 64); err == nil {
			return n, nil
		}
	}
	f, err := strconv.ParseFloat(string(lit), 64)
	if err != nil {
		p.pos = start
		return nil, p.fail(fmt.Sprintf("number %s overflows float64", lit))
	}
	return f, nil
}

// smallInt parses an integer of up to 18 digits (which cannot overflow)
// without strconv's string.
func smallInt(lit []byte) (int64, bool) {
	neg := lit[0] == '-'
	digits := lit
	if neg {
		digits = lit[1:]
	}
	if len(digits) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}

// skip moves past a value, checking it as value would, but building
// nothing.
func (p *parser) skip() error {
	p.ws()
	if p.pos >= len(p.data) {
		return p.unexpected("")
	}
	switch c := p.data[p.pos]; {
	case c == '{', c == '[':
		return p.skipContainer()
	case c == '"':
		return p.skipString()
	case c == 't':
		return p.literal("true")
	case c == 'f':
		return p.literal("false")
	case c == 'n':
		return p.literal("null")
	case c == '-' || c >= '0' && c <= '9':
		start := p.pos
		noDot, err := p.scanNumber()
		if err != nil {
			return err
		}
		lit := p.data[start:p.pos]
		if _, ok := smallInt(lit); ok && noDot {
			return nil
		}
		if _, err := strconv.ParseFloat(string(lit), 64); err != nil {
			p.pos = start
			return p.fail(fmt.Sprintf("number %s overflows float64", lit))
		}
		return nil
	}
	return p.unexpected("looking for beginning of value")
}

func (p *parser) skipContainer() error {
	if err := p.enter(); err != nil {
		return err
	}
	isObject := p.data[p.pos] == '{'
	closing := byte(']')
	if isObject {
		closing = '}'
	}
	p.pos++
	p.ws()
	if p.pos < len(p.data) && p.data[p.pos] == closing {
		p.pos++
		p.depth--
		return nil
	}
	for {
		if isObject {
			p.ws()
			if p.pos >= len(p.data) || p.data[p.pos] != '"' {
				return p.unexpected("looking for beginning of object key string")
			}
			if err := p.skipString(); err != nil {
				return err
			}
			p.ws()
			if p.pos >= len(p.data) || p.data[p.pos] != ':' {
				return p.unexpected("after object key")
			}
			p.pos++
		}
		if err := p.skip(); err != nil {
			return err
		}
		p.ws()
		if p.pos >= len(p.data) {
			return p.unexpected("")
		}
		switch p.data[p.pos] {
		case ',':
			p.pos++
		case closing:
			p.pos++
			p.depth--
			return nil
		default:
			if isObject {
				return p.unexpected("after object key:value pair")
			}
			return p.unexpected("after array element")
		}
	}
}

// skipString moves past a string; p.data[p.pos] is '"'.
func (p *parser) skipString() error {
	i := p.pos + 1
	for i < len(p.data) {
		c := p.data[i]
		switch {
		case c == '"':
			p.pos = i + 1
			return nil
		case c < 0x20:
			p.pos = i
			return p.unexpected("in string literal")
		case c == '\\':
			i++
			if i >= len(p.data) {
				break
			}
			switch p.data[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i++
			case 'u':
				if _, err := p.hex4(i + 1); err != nil {
					return err
				}
				i += 5
			default:
				p.pos = i
				return p.unexpected("in string escape code")
			}
		default:
			i++
		}
	}
	p.pos = i
	return p.unexpected("")
}
