package watching

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// documents are JSON texts, valid and not, on which the parser must agree
// with client-go's decoding (sigs.k8s.io/json, via apimachinery's util/json).
var documents = []string{
	`{}`, `[]`, `null`, `true`, `false`, `0`, `-0`, `1`, `-1`, `255`, `256`,
	`9223372036854775807`, `-9223372036854775808`, `9223372036854775808`, `-9223372036854775809`,
	`123456789012345678`, `1234567890123456789`, `12345678901234567890123`,
	`1.0`, `1.5`, `-0.0`, `1e3`, `1E3`, `1e+3`, `1e-3`, `1.5e300`, `1e400`, `-1e400`, `1e-400`,
	`0.1e1`, `100000000000000000000000000000000000000000000e-10`,
	`"a"`, `""`, `"\"\\\/\b\f\n\r\t"`, `"\u00e9\u0041"`, `"\ud83d\ude00"`, `"\ud83d"`, `"\ude00"`,
	`"\ud83dx"`, `"\ud83d\u0041"`, `"\ud83d\ud83d\ude00"`, `"é日本"`, "\"\xff\"", "\"a\xc3\"", "\"\xed\xa0\x80\"",
	`{"a":1,"b":[1,2.5,"x",null,true,{"c":{}}],"d":{"e":-7}}`,
	`{"a":1,"a":2}`, `{"a":{"x":1},"a":{"y":2}}`, ` { "a" : [ 1 , 2 ] } `, "\t\r\n{}\n",
	`{"metadata":{"managedFields":[{"manager":"x"}],"name":"n"}}`,
	// malformed
	``, ` `, `{`, `}`, `[`, `]`, `{"a"}`, `{"a":}`, `{"a":1,}`, `[1,]`, `[1 2]`, `{"a" 1}`, `{a:1}`,
	`{"a":1}}`, `{"a":1} x`, `01`, `-`, `-a`, `1.`, `.5`, `1e`, `1e+`, `+1`, `tru`, `truex`, `nul`, `True`,
	`"abc`, `"\x"`, `"\u12"`, `"\u12g4"`, "\"a\tb\"", "\"a\nb\"", `'a'`, `"\'"`, `[1]]`, `{"a":[}`,
	`NaN`, `Infinity`, `[1e400]`, `{"a":1e400}`, `{"metadata":{"managedFields":[1e400]}}`,
	strings.Repeat("[", 10000) + strings.Repeat("]", 10000),
	strings.Repeat("[", 10001) + strings.Repeat("]", 10001),
}

func reference(data []byte) (any, error) {
	var v any
	err := utiljson.Unmarshal(data, &v)
	return v, err
}

func parse(data []byte) (any, error) {
	return parseWith(newValueDecoder(nil), data)
}

// parseWith decodes one document with v, reset to read it.
func parseWith(v *valueDecoder, data []byte) (any, error) {
	v.dec = newJSONDecoder(bytes.NewBuffer(data))
	if v.dec.PeekKind() == 0 {
		_, err := v.dec.ReadToken()
		return nil, endOfInput(err)
	}
	val, err := v.value()
	if err == nil {
		err = v.end()
	}
	return val, err
}

// checkSameAsReference decodes data as a value, and as the managedFields
// of a resource (which are skipped, not built), as client-go does.
func checkSameAsReference(t *testing.T, data []byte) {
	t.Helper()
	want, wantErr := reference(data)
	got, err := parse(data)
	if (err == nil) != (wantErr == nil) {
		t.Fatalf("%q: error %v, client-go's %v", data, err, wantErr)
	}
	if err == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("%q: decoded to %#v, client-go to %#v", data, got, want)
	}

	resource := []byte(`{"metadata":{"managedFields":` + string(data) + `}}`)
	want, wantErr = reference(resource)
	if m, ok := want.(map[string]any); ok {
		if meta, ok := m["metadata"].(map[string]any); ok {
			delete(meta, "managedFields")
		}
	}
	got, err = parseResource(resource)
	if (err == nil) != (wantErr == nil) {
		t.Fatalf("%q: error %v, client-go's %v", resource, err, wantErr)
	}
	if err == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("%q: decoded to %#v, client-go to %#v less managedFields", resource, got, want)
	}
}

// parseResource decodes a document that starts with '{' as a resource.
func parseResource(data []byte) (any, error) {
	v := newValueDecoder(newJSONDecoder(bytes.NewBuffer(data)))
	val, err := v.object(resourceObject)
	if err == nil {
		err = v.end()
	}
	return val, err
}

// mayOverflow errs on the side of yes, never of no.
func TestMayOverflow(t *testing.T) {
	tests := []struct {
		json string
		want bool
	}{
		{`{"manager":"kubectl","time":"2025-01-01T00:00:00Z","fieldsV1":{"f:spec":{}}}`, false},
		{`[1.5,-2,true,false,null]`, false},
		{`[1e3]`, true},
		{`[-2.5E-1]`, true},
		{`["4e5"]`, true},
		{"[" + strings.Repeat("9", 308) + "]", false},
		{"[" + strings.Repeat("9", 309) + "]", true},
		{`["a",` + strings.Repeat("9", 309) + "]", true},
		{`["` + strings.Repeat("x", 300) + `",` + strings.Repeat("9", 600) + "]", true},
		{`["` + strings.Repeat("x", 300) + `",` + strings.Repeat("9", 300) + ",-" + strings.Repeat("9", 300) + "]", false},
		{`["e",{"E1":true}]`, false},
		{`["1e"]`, true},
		{`{"a":-0.5E+1}`, true},
	}
	for _, tt := range tests {
		if got := mayOverflow([]byte(tt.json)); got != tt.want {
			t.Errorf("%.40s: %v, want %v", tt.json, got, tt.want)
		}
	}
}

func TestParserMatchesClientGo(t *testing.T) {
	for _, doc := range documents {
		checkSameAsReference(t, []byte(doc))
	}
}

func FuzzParser(f *testing.F) {
	for _, doc := range documents {
		if len(doc) < 1000 {
			f.Add([]byte(doc))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkSameAsReference(t, data) })
}

// Numbers are int64 when they have no "." and fit, float64 otherwise.
func TestParserNumbers(t *testing.T) {
	tests := []struct {
		json string
		want any
	}{
		{`0`, int64(0)},
		{`-42`, int64(-42)},
		{`9223372036854775807`, int64(9223372036854775807)},
		{`9223372036854775808`, float64(9223372036854775808)},
		{`1.0`, float64(1)},
		{`1e2`, float64(100)},
		{`-2.5E-1`, float64(-0.25)},
	}
	for _, tt := range tests {
		got, err := parse([]byte(tt.json))
		if err != nil || got != tt.want {
			t.Errorf("%s: got %#v (%v), want %#v", tt.json, got, err, tt.want)
		}
	}
}

// Names are shared between the objects of one decoder.
func TestParserInternsNames(t *testing.T) {
	v := newValueDecoder(nil)
	for range 2 {
		if _, err := parseWith(v, []byte(`{"spec":{"field":1}}`)); err != nil {
			t.Fatal(err)
		}
	}
	if len(v.names) != 2 {
		t.Errorf("interned names: %v", v.names)
	}
}
