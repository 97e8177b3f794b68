package progress

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// encodeCompact encodes v as compact JSON the way Python's
// json.dumps(v, separators=(',', ':')) does with its default ensure_ascii:
// no spaces, no HTML escaping, and every character outside printable ASCII
// escaped as \uXXXX (surrogate pairs beyond the BMP). Map keys are sorted.
func encodeCompact(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return asciiEscape(bytes.TrimSuffix(buf.Bytes(), []byte("\n"))), nil
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
		if r >= 0x10000 {
			r -= 0x10000
			out = fmt.Appendf(out, `\u%04x\u%04x`, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
		} else {
			out = fmt.Appendf(out, `\u%04x`, r)
		}
	}
	return out
}

// encodeString encodes one string as a Python-compatible JSON string.
func encodeString(s string) []byte {
	b, _ := encodeCompact(s) // strings always encode
	return b
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
