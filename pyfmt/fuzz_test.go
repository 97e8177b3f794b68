package pyfmt

import (
	"bytes"
	"encoding/json"
	"testing"
	"unicode/utf8"
)

// FuzzJSON: no JSON value makes Repr, Str or Pformat panic, decoded with
// numbers as literals or as float64; Pformat is the repr when it fits.
func FuzzJSON(f *testing.F) {
	for _, seed := range []string{
		`null`, `{"a": [1, 2.5, "it's", {"b": null}]}`, `"\u0000\u00e9\ud83d\ude00\u2028"`,
		`[1e400, -0, 123456789012345678901234567890]`, `{"": [[[[]]]]}`, `"` + string(bytes.Repeat([]byte("word "), 40)) + `"`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		var literal, floats any
		if dec.Decode(&literal) != nil || json.Unmarshal(data, &floats) != nil {
			return
		}
		for _, v := range []any{literal, floats} {
			repr, _, pformat := Repr(v), Str(v), Pformat(v)
			if utf8.RuneCountInString(repr) <= width && pformat != repr {
				t.Errorf("Pformat = %q, want the repr %q", pformat, repr)
			}
		}
	})
}
