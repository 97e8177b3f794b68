package reactor

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

func TestResourceVersionOf(t *testing.T) {
	big := `{"apiVersion":"kopf.dev/v1","kind":"KopfExample","metadata":{"annotations":{"kopf.zalando.org/last-handled-configuration":"{\"spec\":{\"resourceVersion\":\"no\"}}\n","resourceVersion":"annotation"},` +
		`"creationTimestamp":"2026-11-23T18:00:00Z","generation":1,"managedFields":[{"fieldsV1":{"f:metadata":{"f:resourceVersion":{}}},"manager":"m"}],` +
		`"name":"obj","namespace":"ns","resourceVersion":"12345","uid":"u"},"spec":{"resourceVersion":"spec"},"status":{}}`
	tests := []struct {
		name, raw, want string
		wantErr         bool
	}{
		{"a custom resource, keys sorted", big, "12345", false},
		{"metadata after the spec", `{"spec":{"metadata":{"resourceVersion":"nested"}},"metadata":{"name":"a","resourceVersion":"7"}}`, "7", false},
		{"escapes in the value", `{"metadata":{"resourceVersion":"1\u0032"}}`, "12", false},
		{"no resourceVersion", `{"metadata":{"name":"a"},"spec":{}}`, "", false},
		{"no metadata", `{"kind":"Status"}`, "", false},
		{"metadata not an object", `{"metadata":"x","kind":"K"}`, "", true},
		{"a resourceVersion that is not a string", `{"metadata":{"resourceVersion":5}}`, "", true},
		{"not an object", `[1,2]`, "", true},
		{"malformed before it", `{"metadata":{"name":}}`, "", true},
		{"truncated", `{"metadata":{"name":"a"`, "", true},
		{"empty", ``, "", true},
		{"escapes in a key", `{"meta\u0064ata":{"resourceVersion":"8"}}`, "8", false},
		{"a label named so", `{"metadata":{"labels":{"resourceVersion":"label"},"resourceVersion":"9"}}`, "9", false},
		{"a string with a bracket and quotes", `{"metadata":{"annotations":{"a":"}\"{["},"resourceVersion":"10"}}`, "10", false},
		{"spaces", " { \"metadata\" : { \"resourceVersion\" : \"11\" } } ", "11", false},
		{"garbage after", `{"metadata":{"resourceVersion":"12"}} x`, "12", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The scan, when it is sure, agrees with encoding/json.
			if rv, ok := scanResourceVersion([]byte(tt.raw)); ok {
				var resp struct {
					Metadata struct {
						ResourceVersion string `json:"resourceVersion"`
					} `json:"metadata"`
				}
				if err := json.Unmarshal([]byte(tt.raw), &resp); err == nil && resp.Metadata.ResourceVersion != rv {
					t.Errorf("the scan found %q, encoding/json %q", rv, resp.Metadata.ResourceVersion)
				}
			}
			// So does the benchmark's jsontext scan.
			if rv, ok := scanResourceVersionJSONText([]byte(tt.raw)); ok && (tt.wantErr || rv != tt.want) {
				t.Errorf("the jsontext scan found %q, want %q (error %t)", rv, tt.want, tt.wantErr)
			}
			got, err := resourceVersionOf([]byte(tt.raw))
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("resourceVersionOf(%s) = %q, %v; want %q, error %t", tt.raw, got, err, tt.want, tt.wantErr)
			}
		})
	}
}

// BenchmarkResourceVersionOf compares reading the resourceVersion of a
// patch's response (a small custom resource with managedFields) with the
// same scan on jsontext's tokens (scanResourceVersionJSONText) and with
// decoding it through encoding/json, as patchOnce did.
func BenchmarkResourceVersionOf(b *testing.B) {
	raw := []byte(`{"apiVersion":"kopf.dev/v1","kind":"KopfExample","metadata":{"annotations":{"kopf.zalando.org/last-handled-configuration":"{\"spec\":{\"duration\":\"1m\",\"field\":\"value\",\"items\":[\"item1\",\"item2\"]}}\n"},` +
		`"creationTimestamp":"2026-11-23T18:00:00Z","generation":1,"managedFields":[` + strings.Repeat(`{"apiVersion":"kopf.dev/v1","fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:annotations":{".":{},"f:kopf.zalando.org/last-handled-configuration":{}}}},"manager":"kopfgo","operation":"Update","time":"2026-11-23T18:00:00Z"},`, 2) +
		`{"apiVersion":"kopf.dev/v1","fieldsType":"FieldsV1","fieldsV1":{"f:status":{".":{},"f:create_fn":{".":{},"f:message":{}}}},"manager":"kopfgo","operation":"Update","subresource":"status","time":"2026-11-23T18:00:00Z"}],` +
		`"name":"paced-00001","namespace":"bench-1","resourceVersion":"123456","uid":"0b3b6b4e-7a0e-4a39-9d1c-3f1e2f0c9a11"},"spec":{"duration":"1m","field":"value","items":["item1","item2"]},"status":{"create_fn":{"message":"hello world"}}}`)
	b.Run("scan", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if rv, err := resourceVersionOf(raw); err != nil || rv != "123456" {
				b.Fatal(rv, err)
			}
		}
	})
	b.Run("jsontext", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if rv, ok := scanResourceVersionJSONText(raw); !ok || rv != "123456" {
				b.Fatal(rv, ok)
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var resp struct {
				Metadata struct {
					ResourceVersion string `json:"resourceVersion"`
				} `json:"metadata"`
			}
			if err := json.Unmarshal(raw, &resp); err != nil || resp.Metadata.ResourceVersion != "123456" {
				b.Fatal(err)
			}
		}
	})
}

// scanResourceVersionJSONText is scanResourceVersion written on jsontext's
// tokens, as runtime/watching reads JSON: the names are compared raw
// (unquoted only when escaped), every other value is skipped. It is kept
// for the benchmark, which shows it about twice as slow as the scan (see
// resourceVersionOf).
func scanResourceVersionJSONText(raw []byte) (string, bool) {
	dec := jsontext.NewDecoder(bytes.NewBuffer(raw), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	if !enterObject(dec) {
		return "", false
	}
	for dec.PeekKind() == '"' {
		if !nextName(dec, "metadata") {
			if dec.SkipValue() != nil {
				return "", false
			}
			continue
		}
		if !enterObject(dec) {
			return "", false
		}
		for dec.PeekKind() == '"' {
			if nextName(dec, "resourceVersion") {
				v, err := dec.ReadValue()
				if err != nil || v.Kind() != '"' {
					return "", false
				}
				u, err := jsontext.AppendUnquote(nil, v)
				return string(u), err == nil
			}
			if dec.SkipValue() != nil {
				return "", false
			}
		}
		return "", false
	}
	return "", false
}

// nextName reads an object's name and reports whether it is want.
func nextName(dec *jsontext.Decoder, want string) bool {
	v, err := dec.ReadValue()
	if err != nil {
		return false
	}
	if len(v) == len(want)+2 && string(v[1:len(v)-1]) == want {
		return true
	}
	if bytes.IndexByte(v, '\\') < 0 {
		return false
	}
	u, err := jsontext.AppendUnquote(nil, v)
	return err == nil && string(u) == want
}

// enterObject reads the start of an object, if one is next.
func enterObject(dec *jsontext.Decoder) bool {
	if dec.PeekKind() != '{' {
		return false
	}
	_, err := dec.ReadToken()
	return err == nil
}

// FuzzResourceVersionOf: whenever the scan is sure, it agrees with
// encoding/json on JSON as the API server writes it (see serverShaped).
func FuzzResourceVersionOf(f *testing.F) {
	for _, seed := range []string{
		`{"metadata":{"name":"a","resourceVersion":"1"},"spec":{}}`,
		`{"spec":{"metadata":{"resourceVersion":"x"}},"metadata":{"resourceVersion":"2"}}`,
		`{"metadata":{"annotations":{"resourceVersion":"a","b":"\"}"},"resourceVersion":"3"}}`,
		`{"metadata":{"labels":[{"resourceVersion":"4"}],"resourceVersion":"5"}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		rv, ok := scanResourceVersion(raw)
		if !ok || !serverShaped(raw) {
			return
		}
		var resp struct {
			Metadata struct {
				ResourceVersion string `json:"resourceVersion"`
			} `json:"metadata"`
		}
		if err := json.Unmarshal(raw, &resp); err != nil {
			t.Fatalf("the scan found %q in %s, which encoding/json rejects: %v", rv, raw, err)
		}
		if resp.Metadata.ResourceVersion != rv {
			t.Fatalf("the scan found %q in %s, encoding/json %q", rv, raw, resp.Metadata.ResourceVersion)
		}
	})
}

// serverShaped reports whether raw is JSON as the API server writes it:
// valid I-JSON (RFC 7493: no duplicate names, valid UTF-8), with metadata
// and resourceVersion spelled so, never in another case (which
// encoding/json would match too). The scan takes the first exact
// metadata.resourceVersion and reads no further (see resourceVersionOf).
func serverShaped(raw []byte) bool {
	if !jsontext.Value(raw).IsValid() {
		return false
	}
	dec := jsontext.NewDecoder(bytes.NewReader(raw))
	for {
		tok, err := dec.ReadToken()
		if err != nil {
			return err == io.EOF
		}
		if kind, n := dec.StackIndex(dec.StackDepth()); kind == '{' && n%2 == 1 && tok.Kind() == '"' {
			for _, key := range []string{"metadata", "resourceVersion"} {
				if name := tok.String(); name != key && strings.EqualFold(name, key) {
					return false
				}
			}
		}
	}
}
