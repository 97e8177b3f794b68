package watching

import (
	"bytes"
	"fmt"
	"io"
	"strconv"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// This file is the only one that imports jsontext (see the package doc).

// newJSONDecoder reads JSON values from r, accepting what client-go's
// decoding accepts: duplicate names (the last one wins, as in a map) and
// invalid UTF-8 (which becomes U+FFFD, as do unpaired surrogate escapes).
// A *bytes.Buffer is read in place, neither copied nor modified.
func newJSONDecoder(r io.Reader) *jsontext.Decoder {
	return jsontext.NewDecoder(r, jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
}

// syntaxError is malformed JSON at an offset of the input, beyond what
// jsontext checks.
func syntaxError(offset int64, err error) error {
	return &jsontext.SyntacticError{ByteOffset: offset, Err: err}
}

// valueDecoder builds values from the tokens of a jsontext.Decoder: the
// values that sigs.k8s.io/json.UnmarshalCaseSensitivePreserveInts
// (client-go's unstructured decoding) produces for an `any` —
// map[string]any, []any, string, bool, nil, int64 for numbers that parse
// as one, float64 for the others. jsontext checks the syntax (with
// encoding/json's nesting limit of 10,000); this type adds only what
// client-go adds on top: numbers that overflow float64 are errors, even in
// skipped values. It accepts and rejects the same documents as client-go
// (the fuzz test compares them), but its errors are worded as jsontext's.
//
// Object names are interned for the decoder's lifetime: the names of one
// resource's objects repeat in every object, and a shared string costs no
// allocation.
type valueDecoder struct {
	dec     *jsontext.Decoder
	names   map[string]string
	unquote []byte // scratch for strings with escapes or non-ASCII bytes
}

// Limits of the name cache: it should hold a resource's field names, not
// every name or UID that appears as a key (labels, annotations).
const (
	maxInternedNames   = 1024
	maxInternedNameLen = 64
)

// What an object is, for what may be skipped in it.
type objectKind uint8

const (
	anyObject      objectKind = iota
	resourceObject            // a Kubernetes object: its metadata is metaObject
	metaObject                // metadata: managedFields are skipped
)

func newValueDecoder(dec *jsontext.Decoder) *valueDecoder {
	return &valueDecoder{dec: dec, names: map[string]string{}}
}

// readError returns the error that made PeekKind return 0, or a syntax
// error if the next token is valid but not what was expected (want).
func (v *valueDecoder) readError(want string) error {
	if _, err := v.dec.ReadToken(); err != nil {
		return err
	}
	return syntaxError(v.dec.InputOffset(), fmt.Errorf("expected %s", want))
}

// value decodes the next value.
func (v *valueDecoder) value() (any, error) {
	switch v.dec.PeekKind() {
	case '{':
		m, err := v.object(anyObject)
		if err != nil {
			return nil, err
		}
		return m, nil
	case '[':
		return v.array()
	case '"':
		return v.str()
	case '0':
		return v.number()
	case 't', 'f':
		tok, err := v.dec.ReadToken()
		if err != nil {
			return nil, err
		}
		return tok.Bool(), nil
	case 'n':
		_, err := v.dec.ReadToken()
		return nil, err
	}
	return nil, v.readError("a value")
}

// object decodes an object; the next token is '{'.
func (v *valueDecoder) object(kind objectKind) (map[string]any, error) {
	if _, err := v.dec.ReadToken(); err != nil {
		return nil, err
	}
	m := map[string]any{}
	for {
		switch v.dec.PeekKind() {
		case '}':
			_, err := v.dec.ReadToken()
			return m, err
		case '"':
		default:
			return nil, v.readError("an object name")
		}
		name, err := v.name()
		if err != nil {
			return nil, err
		}
		switch {
		case kind == metaObject && name == "managedFields":
			err = v.skip()
		case kind == resourceObject && name == "metadata" && v.dec.PeekKind() == '{':
			m[name], err = v.object(metaObject)
		default:
			m[name], err = v.value()
		}
		if err != nil {
			return nil, err
		}
	}
}

// array decodes an array; the next token is '['.
func (v *valueDecoder) array() ([]any, error) {
	if _, err := v.dec.ReadToken(); err != nil {
		return nil, err
	}
	a := []any{}
	for v.dec.PeekKind() != ']' {
		e, err := v.value()
		if err != nil {
			return nil, err
		}
		a = append(a, e)
	}
	_, err := v.dec.ReadToken()
	return a, err
}

// name decodes an object name, interned.
func (v *valueDecoder) name() (string, error) {
	raw, err := v.dec.ReadValue()
	if err != nil {
		return "", err
	}
	b := v.unquoted(raw)
	if s, ok := v.names[string(b)]; ok {
		return s, nil
	}
	s := string(b)
	if len(s) <= maxInternedNameLen && len(v.names) < maxInternedNames {
		v.names[s] = s
	}
	return s, nil
}

// str decodes a string; the next token is one.
func (v *valueDecoder) str() (string, error) {
	raw, err := v.dec.ReadValue()
	if err != nil {
		return "", err
	}
	return string(v.unquoted(raw)), nil
}

// unquoted returns the contents of a JSON string that the decoder has
// checked, valid until the next call. Without escapes or invalid UTF-8
// they are its bytes between the quotes; otherwise jsontext unquotes them,
// replacing invalid UTF-8 and unpaired surrogates with U+FFFD as
// encoding/json does (the error that says so is expected, not a failure).
func (v *valueDecoder) unquoted(raw jsontext.Value) []byte {
	inner := raw[1 : len(raw)-1]
	if bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		return inner
	}
	v.unquote, _ = jsontext.AppendUnquote(v.unquote[:0], raw)
	return v.unquote
}

// number decodes a number: an int64 if it parses as one (no fraction, no
// exponent, in range), else a float64 (an error if it overflows even
// that), as sigs.k8s.io/json's ints-preserving decoding does.
func (v *valueDecoder) number() (any, error) {
	offset := v.dec.InputOffset()
	lit, err := v.dec.ReadValue()
	if err != nil {
		return nil, err
	}
	if n, ok := smallInt(lit); ok {
		return n, nil
	}
	if n, err := strconv.ParseInt(string(lit), 10, 64); err == nil {
		return n, nil
	}
	f, err := strconv.ParseFloat(string(lit), 64)
	if err != nil {
		return nil, overflow(lit, offset)
	}
	return f, nil
}

func overflow(lit []byte, offset int64) error {
	return syntaxError(offset, fmt.Errorf("number %s overflows float64", lit))
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

// skip moves past the next value, building nothing. client-go would
// decode it, so a number in it that overflows float64 is an error here
// too: jsontext reads the value whole (checking its syntax in one pass, the
// fast way), and only if it might hold such a number are its tokens read
// again, one by one.
func (v *valueDecoder) skip() error {
	offset := v.dec.InputOffset()
	raw, err := v.dec.ReadValue()
	if err != nil {
		return err
	}
	if !mayOverflow(raw) {
		return nil
	}
	tokens := newJSONDecoder(bytes.NewBuffer(raw))
	for {
		if tokens.PeekKind() != '0' {
			if _, err := tokens.ReadToken(); err == io.EOF {
				return nil
			} else if err != nil {
				return err
			}
			continue
		}
		at := offset + tokens.InputOffset()
		lit, err := tokens.ReadValue()
		if err != nil {
			return err
		}
		if _, err := strconv.ParseFloat(string(lit), 64); err != nil {
			return overflow(lit, at)
		}
	}
}

// mayOverflow reports whether a JSON value may hold a number that
// overflows float64: one with an exponent (a digit followed by "e" or "E",
// wherever it appears) or of over 308 digits. It errs on the side of yes,
// and is cheaper than reading the tokens: Kubernetes' managedFields hold no
// numbers at all.
func mayOverflow(raw []byte) bool {
	for _, e := range "eE" {
		for off := 0; ; off++ {
			i := bytes.IndexByte(raw[off:], byte(e))
			if i < 0 {
				break
			}
			off += i
			if off > 0 && isDigit(raw[off-1]) {
				return true
			}
		}
	}
	// A run of 309 digits covers one of the indexes 308, 617, 926...
	for i := 308; i < len(raw); i += 309 {
		if !isDigit(raw[i]) {
			continue
		}
		start, end := i, i+1
		for start > 0 && isDigit(raw[start-1]) {
			start--
		}
		for end < len(raw) && isDigit(raw[end]) {
			end++
		}
		if end-start > 308 {
			return true
		}
	}
	return false
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
