package progress

import (
	"bufio"
	"github.com/kopf-go/kopf/runtime/body"
	"github.com/kopf-go/kopf/runtime/patches"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
)

// The expected values of these tests are Python 3.11's outputs
// (json.dumps), generated with python3; see testdata/*.py.

func TestPyFloat(t *testing.T) {
	tests := []struct {
		in   float64
		want string
	}{
		{1.25e-05, "1.25e-05"},
		{1e-07, "1e-07"},
		{1.0, "1.0"},
		{1e16, "1e+16"},
		{1e15, "1000000000000000.0"},
		{12345678901234567890.0, "1.2345678901234567e+19"},
		{0.0001, "0.0001"},
		{0.00001, "1e-05"},
		{math.Copysign(0, -1), "-0.0"},
		{0.0, "0.0"},
		{1e22, "1e+22"},
		{1e21, "1e+21"},
		{1e20, "1e+20"},
		{123456789012345.6, "123456789012345.6"},
		{1234567890123456.7, "1234567890123456.8"},
		{5e-324, "5e-324"},
		{2.2250738585072014e-308, "2.2250738585072014e-308"},
		{1.7976931348623157e308, "1.7976931348623157e+308"},
		{0.1, "0.1"},
		{2.5, "2.5"},
		{-2.5, "-2.5"},
		{100.0, "100.0"},
		{0.3, "0.3"},
		{1.0 / 3, "0.3333333333333333"},
		{1 << 53, "9007199254740992.0"},
		{9007199254740993.0, "9007199254740992.0"},
		{1e-06, "1e-06"},
		{1e-5, "1e-05"},
		{123.456e10, "1234560000000.0"},
		{-1e100, "-1e+100"},
		{0.000123, "0.000123"},
	}
	for _, tt := range tests {
		got, err := pyFloat(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("pyFloat(%v) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if got, err := pyFloat(bad); err == nil {
			t.Errorf("pyFloat(%v) = %q, want an error", bad, got)
		}
	}
}

// TestPyFloatRandom compares pyFloat with Python on 1,100 values: random
// bit patterns (every magnitude), random numbers in ±1e6, and short
// decimals times powers of ten (testdata/pyfloats.py).
func TestPyFloatRandom(t *testing.T) {
	f, err := os.Open("testdata/pyfloats.txt")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	scanner := bufio.NewScanner(f)
	n := 0
	for scanner.Scan() {
		line := scanner.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		hexBits, want, ok := strings.Cut(line, " ")
		bits, err := strconv.ParseUint(hexBits, 16, 64)
		if !ok || err != nil {
			t.Fatalf("bad line %q", line)
		}
		in := math.Float64frombits(bits)
		if got, err := pyFloat(in); err != nil || got != want {
			t.Errorf("pyFloat(%v) = %q, %v; want %q", in, got, err, want)
		}
		n++
	}
	if err := scanner.Err(); err != nil {
		t.Fatal(err)
	}
	if n < 1000 {
		t.Fatalf("only %d values read", n)
	}
}

// TestPyNumber: what Kopf writes for a float64 of a body is
// json.dumps(json.loads(L)), where L is the literal the API server wrote
// for it (Go's encoding/json).
func TestPyNumber(t *testing.T) {
	tests := []struct {
		in   float64
		want string
	}{
		{1.25e-05, "1.25e-05"}, // the API server writes 0.0000125
		{1e-07, "1e-07"},       // the API server writes 1e-7
		{1.5, "1.5"},           // the API server writes 1.5
		{0.1, "0.1"},           // the API server writes 0.1
		{1e+21, "1e+21"},       // the API server writes 1e+21
		{1e+22, "1e+22"},       // the API server writes 1e+22
		{1.2345678901234567e+19, "12345678901234567000"}, // the API server writes 12345678901234567000
		{9.223372036854776e+18, "9223372036854776000"},   // the API server writes 9223372036854776000
		{-9.22337203685478e+18, "-9223372036854780000"},  // the API server writes -9223372036854780000
		{1e+20, "100000000000000000000"},                 // the API server writes 100000000000000000000
		{9.999999999999999e+20, "999999999999999900000"}, // the API server writes 999999999999999900000
		{1e-06, "1e-06"},                                     // the API server writes 0.000001
		{9.99e-07, "9.99e-07"},                               // the API server writes 9.99e-7
		{1.23456789125e+08, "123456789.125"},                 // the API server writes 123456789.125
		{1.7976931348623157e+308, "1.7976931348623157e+308"}, // the API server writes 1.7976931348623157e+308
		{-1e+300, "-1e+300"},                                 // the API server writes -1e+300
	}
	for _, tt := range tests {
		got, err := pyNumber(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("pyNumber(%v) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

func TestAppendPyString(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"plain", "plain", `"plain"`},
		{"quote and backslash", "a\"b\\c", `"a\"b\\c"`},
		{"html", "<a href='x'>&</a>", `"<a href='x'>&</a>"`},
		{"controls", "\n\r\t\b\f\u0000\u001f", `"\n\r\t\b\f\u0000\u001f"`},
		{"del", "\x7f", `"\u007f"`},
		{"latin", "é", `"\u00e9"`},
		{"bmp", "日本", `"\u65e5\u672c"`},
		{"astral", "😀", `"\ud83d\ude00"`},
		{"line separator", "\u2028", `"\u2028"`},
		{"slash", "a/b", `"a/b"`},
		{"invalid utf-8 as in Go", "a\xffb", `"a\ufffdb"`},
	}
	for _, tt := range tests {
		if got := string(appendPyString(nil, tt.in)); got != tt.want {
			t.Errorf("%s: got %s, want %s", tt.name, got, tt.want)
		}
	}
}

// TestEncodeEssenceAsKopf stores the essences of bodies, as the API server
// sends them, and compares the annotation byte for byte with what Kopf
// 1.44.6's own code stores for the same bodies (testdata/kopf_essences.py).
func TestEncodeEssenceAsKopf(t *testing.T) {
	tests := []struct {
		name  string
		body  string
		extra [][]string
		want  string
	}{
		{"spec, labels and annotations",
			`{"apiVersion":"kopf.dev/v1","kind":"KopfExample","metadata":{"annotations":{"kopf.zalando.org/create_fn":"{}","kubectl.kubernetes.io/last-applied-configuration":"{}","someannotation":"somevalue"},"labels":{"app":"x","somelabel":"somevalue"},"name":"kopf-example-1","namespace":"default","resourceVersion":"1","uid":"u"},"spec":{"duration":"1m","field":"value","items":["item1","item2"],"nested":{"a":[{"b":3,"y":2}],"z":1}},"status":{"phase":"x"}}`,
			nil,
			"{\"spec\":{\"duration\":\"1m\",\"field\":\"value\",\"items\":[\"item1\",\"item2\"],\"nested\":{\"a\":[{\"b\":3,\"y\":2}],\"z\":1}},\"metadata\":{\"labels\":{\"app\":\"x\",\"somelabel\":\"somevalue\"},\"annotations\":{\"someannotation\":\"somevalue\"}}}\n"},
		{"top-level fields around metadata",
			`{"aaa":true,"apiVersion":"v1","data":{"k":"v"},"kind":"Thing","metadata":{"annotations":{"a":"b"},"name":"n"},"zzz":1}`,
			nil,
			"{\"aaa\":true,\"data\":{\"k\":\"v\"},\"zzz\":1,\"metadata\":{\"annotations\":{\"a\":\"b\"}}}\n"},
		{"extra fields in status and metadata",
			`{"apiVersion":"kopf.dev/v1","kind":"KopfExample","metadata":{"generation":3,"labels":{"l":"v"},"name":"n"},"spec":{"x":1},"status":{"count":2,"other":"dropped","phase":"Ready"}}`,
			[][]string{{"status", "phase"}, {"metadata", "generation"}},
			"{\"spec\":{\"x\":1},\"metadata\":{\"labels\":{\"l\":\"v\"},\"generation\":3},\"status\":{\"phase\":\"Ready\"}}\n"},
		{"numbers as the API server writes them",
			`{"apiVersion":"kopf.dev/v1","kind":"KopfExample","metadata":{"name":"n"},"spec":{"beyond":9223372036854776000,"big":12345678901234567000,"half":0.5,"huge":1e+21,"int":42,"maxint":9223372036854775807,"neg":-2.5,"small":0.0000125,"tiny":1e-7}}`,
			nil,
			"{\"spec\":{\"beyond\":9223372036854776000,\"big\":12345678901234567000,\"half\":0.5,\"huge\":1e+21,\"int\":42,\"maxint\":9223372036854775807,\"neg\":-2.5,\"small\":1.25e-05,\"tiny\":1e-07}}\n"},
		{"strings with escapes",
			`{"apiVersion":"kopf.dev/v1","kind":"KopfExample","metadata":{"labels":{"l":"\u00e9"},"name":"n"},"spec":{"msg":"<\u65e5\u672c>&\"\\\n\ud83d\ude00"}}`,
			nil,
			"{\"spec\":{\"msg\":\"<\\u65e5\\u672c>&\\\"\\\\\\n\\ud83d\\ude00\"},\"metadata\":{\"labels\":{\"l\":\"\\u00e9\"}}}\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			decoded, err := decodeJSON(tt.body)
			if err != nil {
				t.Fatal(err)
			}
			b := body.Body(decoded.(map[string]any))
			s := NewAnnotationsDiffBaseStorage()
			p := patches.New()
			s.Store(b, p, s.Build(b, tt.extra))
			got := p["metadata"].(map[string]any)["annotations"].(map[string]any)["kopf.zalando.org/last-handled-configuration"]
			if got != tt.want {
				t.Errorf("stored\n  %q\nKopf stores\n  %q", got, tt.want)
			}
		})
	}
}

func TestEssenceOrder(t *testing.T) {
	tests := []struct {
		name string
		in   map[string]any
		want string
	}{
		{"empty", map[string]any{}, `{}`},
		{"metadata after the body's fields, status and type fields last",
			map[string]any{"status": map[string]any{"b": int64(1), "a": int64(2)}, "kind": "K", "metadata": map[string]any{}, "zeta": true, "alpha": false, "apiVersion": "v1"},
			`{"alpha":false,"zeta":true,"metadata":{},"apiVersion":"v1","kind":"K","status":{"a":2,"b":1}}`},
		{"labels, annotations, then other metadata sorted",
			map[string]any{"metadata": map[string]any{"name": "n", "annotations": map[string]any{"z": "1", "a": "2"}, "generation": int64(1), "labels": map[string]any{}}},
			`{"metadata":{"labels":{},"annotations":{"a":"2","z":"1"},"generation":1,"name":"n"}}`},
		{"nested metadata is not special",
			map[string]any{"spec": map[string]any{"metadata": map[string]any{"name": "x", "labels": "y"}, "a": []any{map[string]any{"status": int64(1), "metadata": int64(2)}}}},
			`{"spec":{"a":[{"metadata":2,"status":1}],"metadata":{"labels":"y","name":"x"}}}`},
	}
	for _, tt := range tests {
		got, err := EncodeEssence(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("%s: EncodeEssence() = %s, %v; want %s", tt.name, got, err, tt.want)
		}
	}
}
