package progress

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/kopf-go/kopf/pyfmt"
)

// keyOrder returns the order in which the keys of the map at path (the keys
// leading to it from the encoded value's root) are written. It may reorder
// keys in place and return it.
type keyOrder func(path []string, keys []string) []string

// encodeOrdered encodes v as compact JSON the way Python's
// json.dumps(v, separators=(',', ':')) does with its default ensure_ascii:
// no spaces, no HTML escaping, every character outside printable ASCII
// escaped as \uXXXX (surrogate pairs beyond the BMP), floats as Kopf would
// write the same number (see pyNumber), the keys of every map in the order
// given by order. Values that are not JSON-like trees (map[string]any and
// named types of it, []any, string, bool, nil, int64, int, int32, float64,
// json.Number) are encoded by encoding/json and then ASCII-escaped.
func encodeOrdered(v any, order keyOrder) ([]byte, error) {
	e := pyEncoder{order: order}
	if err := e.value(v); err != nil {
		return nil, err
	}
	return e.buf, nil
}

type pyEncoder struct {
	buf   []byte
	order keyOrder
	path  []string
}

func (e *pyEncoder) value(v any) error {
	if m, ok := asMap(v); ok {
		if m == nil {
			e.buf = append(e.buf, "null"...)
			return nil
		}
		return e.object(m)
	}
	switch x := v.(type) {
	case nil:
		e.buf = append(e.buf, "null"...)
	case string:
		e.buf = appendPyString(e.buf, x)
	case bool:
		e.buf = strconv.AppendBool(e.buf, x)
	case int64:
		e.buf = strconv.AppendInt(e.buf, x, 10)
	case int:
		e.buf = strconv.AppendInt(e.buf, int64(x), 10)
	case int32:
		e.buf = strconv.AppendInt(e.buf, int64(x), 10)
	case float64:
		s, err := pyNumber(x)
		if err != nil {
			return err
		}
		e.buf = append(e.buf, s...)
	case json.Number:
		e.buf = append(e.buf, x...)
	case []any:
		if x == nil {
			e.buf = append(e.buf, "null"...)
			return nil
		}
		e.buf = append(e.buf, '[')
		for i, item := range x {
			if i > 0 {
				e.buf = append(e.buf, ',')
			}
			if err := e.value(item); err != nil {
				return err
			}
		}
		e.buf = append(e.buf, ']')
	default:
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			return err
		}
		e.buf = append(e.buf, asciiEscape(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))...)
	}
	return nil
}

func (e *pyEncoder) object(m map[string]any) error {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	keys = e.order(e.path, keys)
	e.buf = append(e.buf, '{')
	for i, k := range keys {
		if i > 0 {
			e.buf = append(e.buf, ',')
		}
		e.buf = appendPyString(e.buf, k)
		e.buf = append(e.buf, ':')
		e.path = append(e.path, k)
		err := e.value(m[k])
		e.path = e.path[:len(e.path)-1]
		if err != nil {
			return err
		}
	}
	e.buf = append(e.buf, '}')
	return nil
}

// pyFloat formats f as Python's json.dumps does: its repr (pyfmt.Float:
// "1.0", "0.0001", "1e+16", "1e-05", "-0.0"). NaN and the infinities are
// errors (Python would write NaN and Infinity, which are not JSON).
func pyFloat(f float64) (string, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "", fmt.Errorf("unsupported value: %v", f)
	}
	return pyfmt.Float(f), nil
}

// pyNumber formats a float64 of a decoded object as Kopf would write the
// same number: as pyFloat, except for integral values of magnitude 2^63 or
// more and below 1e21, which are written as integers in Go's shortest
// digits ("12345678901234567000"). Such a float64 comes from an integer
// literal too large for an int64 (client-go's decoding, and ours, keep
// integers as int64 only when they fit): the API server writes every
// float64 in that range as a plain integer (Go's encoding/json), so Python
// reads it as an int and json.dumps writes its digits. Written as a float
// ("1.2345678901234567e+19"), Kopf would read back a float unequal to its
// own int and see a change that never happened.
func pyNumber(f float64) (string, error) {
	if abs := math.Abs(f); abs >= 1<<63 && abs < 1e21 && f == math.Trunc(f) {
		return strconv.FormatFloat(f, 'f', -1, 64), nil
	}
	return pyFloat(f)
}

// appendPyString appends s as Python's json.dumps writes a string with
// ensure_ascii: `"` and `\` escaped, \n \r \t \b \f as such, every other
// character outside printable ASCII (controls, DEL, non-ASCII) as \uXXXX in
// lowercase hex, with surrogate pairs beyond the BMP. Bytes that are not
// valid UTF-8 become \ufffd, as in Go's encoding/json.
func appendPyString(buf []byte, s string) []byte {
	buf = append(buf, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < 0x7f {
			if c == '"' || c == '\\' {
				buf = append(buf, '\\')
			}
			buf = append(buf, c)
			i++
			continue
		}
		switch c {
		case '\n':
			buf = append(buf, `\n`...)
			i++
			continue
		case '\r':
			buf = append(buf, `\r`...)
			i++
			continue
		case '\t':
			buf = append(buf, `\t`...)
			i++
			continue
		case '\b':
			buf = append(buf, `\b`...)
			i++
			continue
		case '\f':
			buf = append(buf, `\f`...)
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		buf = appendPyRune(buf, r)
	}
	return append(buf, '"')
}

func appendPyRune(buf []byte, r rune) []byte {
	if r >= 0x10000 {
		r -= 0x10000
		return fmt.Appendf(buf, `\u%04x\u%04x`, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
	}
	return fmt.Appendf(buf, `\u%04x`, r)
}

// asciiEscape escapes every non-ASCII character and DEL of valid JSON text.
// Such characters can only occur inside JSON strings, so this is safe.
func asciiEscape(b []byte) []byte {
	ascii := true
	for _, c := range b {
		if c >= 0x7f {
			ascii = false
			break
		}
	}
	if ascii {
		return b
	}
	out := make([]byte, 0, len(b)+16)
	for len(b) > 0 {
		if b[0] < 0x7f {
			out = append(out, b[0])
			b = b[1:]
			continue
		}
		r, size := utf8.DecodeRune(b)
		b = b[size:]
		out = appendPyRune(out, r)
	}
	return out
}

// encodeString encodes one string as a Python-compatible JSON string.
func encodeString(s string) []byte {
	return appendPyString(nil, s)
}

// decodeJSON decodes exactly one JSON value from s. Objects become
// map[string]any, arrays []any; integer literals that fit become int64,
// other numbers float64 (json.Number if they do not fit a float64 either).
func decodeJSON(s string) (any, error) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("unexpected data after the JSON value")
	}
	return convertNumbers(v), nil
}

func convertNumbers(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, item := range x {
			x[k] = convertNumbers(item)
		}
	case []any:
		for i, item := range x {
			x[i] = convertNumbers(item)
		}
	case json.Number:
		s := string(x)
		if !strings.ContainsAny(s, ".eE") {
			if i, err := strconv.ParseInt(s, 10, 64); err == nil {
				return i
			}
		}
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return f
		}
	}
	return v
}
