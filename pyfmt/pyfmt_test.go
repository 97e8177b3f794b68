package pyfmt

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"testing"
)

// golden is one case of testdata/golden.json, which testdata/golden.py
// wrote with Python 3.11: a JSON text and Python's repr(), str() and
// pprint.pformat() of what json.loads makes of it.
type golden struct {
	JSON    string `json:"json"`
	Repr    string `json:"repr"`
	Str     string `json:"str"`
	Pformat string `json:"pformat"`
}

func TestGolden(t *testing.T) {
	data, err := os.ReadFile("testdata/golden.json")
	if err != nil {
		t.Fatal(err)
	}
	var cases []golden
	if err := json.Unmarshal(data, &cases); err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		t.Run(c.JSON, func(t *testing.T) {
			v := decode(t, c.JSON)
			if got := Repr(v); got != c.Repr {
				t.Errorf("Repr =\n%s\nwant\n%s", got, c.Repr)
			}
			if got := Str(v); got != c.Str {
				t.Errorf("Str =\n%s\nwant\n%s", got, c.Str)
			}
			if got := Pformat(v); got != c.Pformat {
				t.Errorf("Pformat =\n%s\nwant\n%s", got, c.Pformat)
			}
		})
	}
}

// decode reads a case's JSON as kopf-go's decoders do (numbers kept as
// their literals), with golden.py's conventions for tuples and dicts of
// other keys.
func decode(t *testing.T, text string) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader([]byte(text)))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return convert(v)
}

func convert(v any) any {
	switch x := v.(type) {
	case map[string]any:
		if items, ok := x["__tuple__"].([]any); ok && len(x) == 1 {
			return tupleArray(items)
		}
		if pairs, ok := x["__dict__"].([]any); ok && len(x) == 1 {
			m := map[any]any{}
			for _, pair := range pairs {
				kv := pair.([]any)
				m[convert(kv[0])] = convert(kv[1])
			}
			return m
		}
		for k, item := range x {
			x[k] = convert(item)
		}
	case []any:
		for i, item := range x {
			x[i] = convert(item)
		}
	}
	return v
}

// tupleArray makes a Go array of the items, a tuple that can be a map key.
func tupleArray(items []any) any {
	arr := reflect.New(reflect.ArrayOf(len(items), reflect.TypeFor[any]())).Elem()
	for i, item := range items {
		if c := convert(item); c != nil {
			arr.Index(i).Set(reflect.ValueOf(c))
		}
	}
	return arr.Interface()
}
