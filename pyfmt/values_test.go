package pyfmt

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"
)

type color string

type point struct {
	X int     `json:"x"`
	Y float64 `json:"y,omitempty"`
	z int
}

type pair [2]string

type celsius float64

func (c celsius) MarshalJSON() ([]byte, error) { return []byte(`"` + Float(float64(c)) + `C"`), nil }

type path []string

func (p path) PyValue() any {
	t := make(Tuple, len(p))
	for i, k := range p {
		t[i] = k
	}
	return t
}

// The Go values that JSON does not say how Python sees: the package doc's
// rules, one case each.
func TestGoValues(t *testing.T) {
	seven := 7
	self := map[string]any{}
	self["self"] = self
	tests := []struct {
		name string
		in   any
		repr string
	}{
		{"nil", nil, "None"},
		{"nil pointer", (*point)(nil), "None"},
		{"nil map", map[string]any(nil), "None"},
		{"nil slice", []string(nil), "None"},
		{"empty slice", []string{}, "[]"},
		{"int", 42, "42"},
		{"int8", int8(-8), "-8"},
		{"uint64", uint64(math.MaxUint64), "18446744073709551615"},
		{"duration", 2 * time.Second, "2000000000"},
		{"integral float64", 2.0, "2"},
		{"negative zero", math.Copysign(0, -1), "0"},
		{"float64 below 1e21", 1e20, "100000000000000000000"},
		{"float64 1e21", 1e21, "1e+21"},
		{"fraction", 0.1, "0.1"},
		{"float32", float32(0.1), "0.1"},
		{"float32 integral", float32(3), "3"},
		{"nan", math.NaN(), "nan"},
		{"-inf", math.Inf(-1), "-inf"},
		{"json.Number int", json.Number("7"), "7"},
		{"json.Number float", json.Number("7.0"), "7.0"},
		{"json.Number exponent", json.Number("1e16"), "1e+16"},
		{"json.Number huge", json.Number("1e999"), "inf"},
		{"json.Number not a number", json.Number("x"), "x"},
		{"named string", color("red"), "'red'"},
		{"pointer", &seven, "7"},
		{"array is a tuple", [2]string{"ns", "name"}, "('ns', 'name')"},
		{"array of one", [1]int{1}, "(1,)"},
		{"empty array", [0]int{}, "()"},
		{"Tuple", Tuple{"a", 1, nil}, "('a', 1, None)"},
		{"named array", pair{"a", "b"}, "('a', 'b')"},
		{"map of int keys", map[int]string{10: "ten", 9: "nine", -1: "minus"}, "{-1: 'minus', 9: 'nine', 10: 'ten'}"},
		{"map of tuple keys", map[[2]string][]string{{"b", "a"}: {"x"}, {"a", "z"}: {"y"}, {"a", "b"}: nil},
			"{('a', 'b'): None, ('a', 'z'): ['y'], ('b', 'a'): ['x']}"},
		{"map of mixed keys", map[any]int{"s": 1, 2: 2, 1.5: 3, nil: 4, [1]int{0}: 5, true: 6},
			"{None: 4, True: 6, 1.5: 3, 2: 2, 's': 1, (0,): 5}"},
		{"keys by code point", map[string]int{"é": 1, "z": 2, "Z": 3, "\U0001F600": 4}, "{'Z': 3, 'z': 2, 'é': 1, '😀': 4}"},
		{"struct by its JSON", point{X: 1, z: 3}, "{'x': 1}"},
		{"pointer to struct", &point{X: 1, Y: 0.5}, "{'x': 1, 'y': 0.5}"},
		{"time by its JSON", time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), "'2026-01-02T03:04:05Z'"},
		{"MarshalJSON", celsius(21.5), "'21.5C'"},
		{"bytes as base64", []byte("hi"), "'aGk='"},
		{"Valuer", path{"spec", "field"}, "('spec', 'field')"},
		{"nil Valuer of a slice type", path(nil), "()"},
		{"Valuer inside", map[string]any{"p": path{"x"}}, "{'p': ('x',)}"},
		{"channel", make(chan int), "<chan int object>"},
		{"function", func() {}, "<func() object>"},
		{"complex", complex(1, 2), "<complex128 object>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Repr(tt.in); got != tt.repr {
				t.Errorf("Repr(%#v) = %s, want %s", tt.in, got, tt.repr)
			}
		})
	}
	t.Run("Valuer unwrapped by Pformat", func(t *testing.T) {
		long := make(path, 30)
		for i := range long {
			long[i] = "key"
		}
		if got, want := Pformat([]any{long}), "["+Repr(long)+"]"; got != want {
			t.Errorf("Pformat = %s, want %s", got, want)
		}
		if got, want := Str(path{"x"}), "('x',)"; got != want {
			t.Errorf("Str = %s, want %s", got, want)
		}
	})
	t.Run("self-containing map", func(t *testing.T) {
		if got := Repr(self); !strings.HasPrefix(got, "{'self': {'self': ") || !strings.Contains(got, "...") {
			t.Errorf("Repr(self) = %.80s..., want nested dicts ending in ...", got)
		}
	})
}

func TestStr(t *testing.T) {
	tests := []struct {
		in   any
		want string
	}{
		{"it's", "it's"},
		{color("red"), "red"},
		{nil, "None"},
		{[]string{"it's"}, `["it's"]`},
		{1.5, "1.5"},
		{true, "True"},
	}
	for _, tt := range tests {
		if got := Str(tt.in); got != tt.want {
			t.Errorf("Str(%#v) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

// Float's cases are Python 3.11's repr() of the same floats; runtime/progress
// compares it with Python on 1,100 more (TestPyFloatRandom).
func TestFloat(t *testing.T) {
	tests := []struct {
		in   float64
		want string
	}{
		{1.25e-05, "1.25e-05"}, {1e-07, "1e-07"}, {1.0, "1.0"}, {2, "2.0"}, {1e16, "1e+16"},
		{1e15, "1000000000000000.0"}, {12345678901234567890.0, "1.2345678901234567e+19"},
		{0.0001, "0.0001"}, {0.00001, "1e-05"}, {math.Copysign(0, -1), "-0.0"}, {0.0, "0.0"},
		{1e22, "1e+22"}, {1e21, "1e+21"}, {123456789012345.6, "123456789012345.6"},
		{1234567890123456.7, "1234567890123456.8"}, {5e-324, "5e-324"},
		{1.7976931348623157e308, "1.7976931348623157e+308"}, {0.1, "0.1"}, {-2.5, "-2.5"},
		{1.0 / 3, "0.3333333333333333"}, {-1e100, "-1e+100"}, {0.000123, "0.000123"},
		{math.NaN(), "nan"}, {math.Inf(1), "inf"}, {math.Inf(-1), "-inf"},
	}
	for _, tt := range tests {
		if got := Float(tt.in); got != tt.want {
			t.Errorf("Float(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
