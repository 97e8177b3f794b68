package diffs

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"
)

type named map[string]any

func TestCompute(t *testing.T) {
	tests := []struct {
		name     string
		old, new any
		want     Diff
	}{
		{"both nil", nil, nil, nil},
		{"equal scalars", "a", "a", nil},
		{"equal maps", map[string]any{"a": 1.0, "b": []any{"x"}}, map[string]any{"b": []any{"x"}, "a": 1.0}, nil},
		{"int64 vs float64", int64(1), 1.0, nil},
		{"json.Number vs int64", json.Number("5"), int64(5), nil},
		{"json.Number float vs float64", json.Number("1.50"), 1.5, nil},
		{"nested numbers of mixed types", map[string]any{"a": []any{int64(2)}}, map[string]any{"a": []any{2.0}}, nil},
		{"nil-valued key is absent", map[string]any{"a": nil}, map[string]any{}, nil},
		{"absent vs nil-valued key", map[string]any{}, map[string]any{"a": nil}, nil},
		{"typed nil map is absent", map[string]any(nil), nil, nil},
		{"root add", nil, map[string]any{"a": "b"},
			Diff{{Add, []string{}, nil, map[string]any{"a": "b"}}}},
		{"root remove", "x", nil,
			Diff{{Remove, []string{}, "x", nil}}},
		{"root change", "x", "y",
			Diff{{Change, []string{}, "x", "y"}}},
		{"map to scalar", map[string]any{"a": 1.0}, "y",
			Diff{{Change, []string{}, map[string]any{"a": 1.0}, "y"}}},
		{"bool is not a number", true, 1.0,
			Diff{{Change, []string{}, true, 1.0}}},
		{"number change", int64(1), 2.0,
			Diff{{Change, []string{}, int64(1), 2.0}}},
		{"key added", map[string]any{}, map[string]any{"a": "v"},
			Diff{{Add, []string{"a"}, nil, "v"}}},
		{"key removed", map[string]any{"a": "v"}, map[string]any{},
			Diff{{Remove, []string{"a"}, "v", nil}}},
		{"key set to nil is removed", map[string]any{"a": "v"}, map[string]any{"a": nil},
			Diff{{Remove, []string{"a"}, "v", nil}}},
		{"key from nil is added", map[string]any{"a": nil}, map[string]any{"a": "v"},
			Diff{{Add, []string{"a"}, nil, "v"}}},
		{"nested change", map[string]any{"spec": map[string]any{"field": "old", "same": "s"}},
			map[string]any{"spec": map[string]any{"field": "new", "same": "s"}},
			Diff{{Change, []string{"spec", "field"}, "old", "new"}}},
		{"list changed as a whole", map[string]any{"items": []any{"a", "b"}}, map[string]any{"items": []any{"a", "c"}},
			Diff{{Change, []string{"items"}, []any{"a", "b"}, []any{"a", "c"}}}},
		{"list of maps with nil values differs", []any{map[string]any{"a": nil}}, []any{map[string]any{}},
			Diff{{Change, []string{}, []any{map[string]any{"a": nil}}, []any{map[string]any{}}}}},
		{"whole sub-map added", map[string]any{"spec": map[string]any{}}, map[string]any{"spec": map[string]any{}, "status": map[string]any{"x": "y"}},
			Diff{{Add, []string{"status"}, nil, map[string]any{"x": "y"}}}},
		{"groups: added, removed, common; sorted within", map[string]any{"r2": 1.0, "r1": 1.0, "c2": 1.0, "c1": 1.0},
			map[string]any{"a2": 1.0, "a1": 1.0, "c2": 2.0, "c1": 2.0},
			Diff{
				{Add, []string{"a1"}, nil, 1.0},
				{Add, []string{"a2"}, nil, 1.0},
				{Remove, []string{"r1"}, 1.0, nil},
				{Remove, []string{"r2"}, 1.0, nil},
				{Change, []string{"c1"}, 1.0, 2.0},
				{Change, []string{"c2"}, 1.0, 2.0},
			}},
		{"named map types and map[string]string", named{"labels": map[string]string{"a": "1"}},
			map[string]any{"labels": map[string]any{"a": "2"}},
			Diff{{Change, []string{"labels", "a"}, "1", "2"}}},
		{"typed slices compare to []any", map[string]any{"l": []string{"a"}}, map[string]any{"l": []any{"a"}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Compute(tt.old, tt.new)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Compute() =\n  %#v\nwant\n  %#v", got, tt.want)
			}
		})
	}
}

func TestComputeDoesNotAliasPaths(t *testing.T) {
	d := Compute(
		map[string]any{"s": map[string]any{"a": 1.0, "b": 1.0, "c": 1.0, "d": 1.0, "e": 1.0}},
		map[string]any{"s": map[string]any{"a": 2.0, "b": 2.0, "c": 2.0, "d": 2.0, "e": 2.0}},
	)
	want := []string{"a", "b", "c", "d", "e"}
	for i, item := range d {
		if len(item.Path) != 2 || item.Path[0] != "s" || item.Path[1] != want[i] {
			t.Fatalf("item %d has path %v", i, item.Path)
		}
	}
}

func TestReduce(t *testing.T) {
	d := Diff{
		{Change, []string{"spec", "field"}, "old", "new"},
		{Add, []string{"spec", "struct", "sub"}, nil, "x"},
		{Remove, []string{"metadata", "labels", "l"}, "v", nil},
	}
	tests := []struct {
		name string
		d    Diff
		path []string
		want Diff
	}{
		{"empty path keeps all", d, nil, Diff{
			{Change, []string{"spec", "field"}, "old", "new"},
			{Add, []string{"spec", "struct", "sub"}, nil, "x"},
			{Remove, []string{"metadata", "labels", "l"}, "v", nil},
		}},
		{"exact field", d, []string{"spec", "field"}, Diff{{Change, []string{}, "old", "new"}}},
		{"parent field", d, []string{"spec"}, Diff{
			{Change, []string{"field"}, "old", "new"},
			{Add, []string{"struct", "sub"}, nil, "x"},
		}},
		{"unrelated field", d, []string{"status"}, nil},
		{"sibling with common prefix", d, []string{"spec", "fiel"}, nil},
		{"empty diff", nil, []string{"spec"}, nil},
		{"field below an added root", Diff{{Add, []string{}, nil, map[string]any{"spec": map[string]any{"field": "v"}}}},
			[]string{"spec", "field"}, Diff{{Add, []string{}, nil, "v"}}},
		{"field below an added parent, structure", Diff{{Add, []string{"spec"}, nil, map[string]any{"struct": map[string]any{"a": "b"}}}},
			[]string{"spec", "struct"}, Diff{{Add, []string{}, nil, map[string]any{"a": "b"}}}},
		{"field below a changed parent", Diff{{Change, []string{"spec"}, map[string]any{"field": "a", "x": 1.0}, map[string]any{"field": "b", "x": 2.0}}},
			[]string{"spec", "field"}, Diff{{Change, []string{}, "a", "b"}}},
		{"field below a changed parent, unchanged", Diff{{Change, []string{"spec"}, map[string]any{"field": "a", "x": 1.0}, map[string]any{"field": "a", "x": 2.0}}},
			[]string{"spec", "field"}, nil},
		{"field below a removed parent", Diff{{Remove, []string{"spec"}, map[string]any{"field": "a"}, nil}},
			[]string{"spec", "field"}, Diff{{Remove, []string{}, "a", nil}}},
		{"field below a scalar parent", Diff{{Change, []string{"spec"}, "str", map[string]any{"field": "a"}}},
			[]string{"spec", "field"}, Diff{{Add, []string{}, nil, "a"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Reduce(tt.d, tt.path)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Reduce() =\n  %#v\nwant\n  %#v", got, tt.want)
			}
		})
	}
}

func TestResolve(t *testing.T) {
	obj := map[string]any{
		"spec":   map[string]any{"field": "v", "null": nil, "list": []any{"a"}},
		"labels": map[string]string{"k": "v"},
		"named":  named{"x": "y"},
	}
	tests := []struct {
		name      string
		obj       any
		path      []string
		want      any
		wantFound bool
	}{
		{"empty path", obj, nil, obj, true},
		{"nil obj, empty path", nil, nil, nil, true},
		{"leaf", obj, []string{"spec", "field"}, "v", true},
		{"sub-map", obj, []string{"spec", "list"}, []any{"a"}, true},
		{"present null", obj, []string{"spec", "null"}, nil, true},
		{"missing key", obj, []string{"spec", "nope"}, nil, false},
		{"missing parent", obj, []string{"status", "x"}, nil, false},
		{"through a scalar", obj, []string{"spec", "field", "x"}, nil, false},
		{"through a list", obj, []string{"spec", "list", "0"}, nil, false},
		{"through a null", obj, []string{"spec", "null", "x"}, nil, false},
		{"nil obj", nil, []string{"x"}, nil, false},
		{"map[string]string", obj, []string{"labels", "k"}, "v", true},
		{"named map type", obj, []string{"named", "x"}, "y", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, found := Resolve(tt.obj, tt.path)
			if found != tt.wantFound || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Resolve() = %#v, %v; want %#v, %v", got, found, tt.want, tt.wantFound)
			}
		})
	}
}

func TestEqual(t *testing.T) {
	tests := []struct {
		name string
		a, b any
		want bool
	}{
		{"nils", nil, nil, true},
		{"nil vs typed nil map", nil, map[string]any(nil), true},
		{"nil vs empty map", nil, map[string]any{}, false},
		{"nil vs empty string", nil, "", false},
		{"strings", "a", "a", true},
		{"different strings", "a", "b", false},
		{"string vs number", "1", 1.0, false},
		{"json.Number is not a string", json.Number("1"), "1", false},
		{"bools", true, true, true},
		{"bool vs number", true, int64(1), false},
		{"int vs float", 3, 3.0, true},
		{"int64 vs float fraction", int64(3), 3.5, false},
		{"big int64 vs float64", int64(9007199254740993), 9007199254740992.0, false},
		{"uint64 vs json.Number", uint64(math.MaxUint64), json.Number("18446744073709551615"), true},
		{"json.Number exponent", json.Number("1e3"), int64(1000), true},
		{"NaN", math.NaN(), math.NaN(), false},
		{"Inf", math.Inf(1), math.Inf(1), true},
		{"Inf vs finite", math.Inf(1), 1.0, false},
		{"maps", map[string]any{"a": []any{1.0}}, map[string]any{"a": []any{int64(1)}}, true},
		{"maps with different keys", map[string]any{"a": nil}, map[string]any{"b": nil}, false},
		{"map with nil vs empty", map[string]any{"a": nil}, map[string]any{}, false},
		{"lists of different length", []any{1.0}, []any{1.0, 2.0}, false},
		{"list vs map", []any{}, map[string]any{}, false},
		{"typed slice", []string{"a"}, []any{"a"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Equal(tt.a, tt.b); got != tt.want {
				t.Errorf("Equal(%#v, %#v) = %v, want %v", tt.a, tt.b, got, tt.want)
			}
			if got := Equal(tt.b, tt.a); got != tt.want {
				t.Errorf("Equal(%#v, %#v) = %v, want %v (reversed)", tt.b, tt.a, got, tt.want)
			}
		})
	}
}

func TestString(t *testing.T) {
	tests := []struct {
		name string
		d    Diff
		want string
	}{
		{"empty", nil, "()"},
		{"single item", Diff{{Add, []string{"spec", "field"}, nil, "value"}},
			"(('add', ('spec', 'field'), None, 'value'),)"},
		{"single-element path", Diff{{Remove, []string{"spec"}, map[string]any{"b": 2.0, "a": []any{true, false}}, nil}},
			"(('remove', ('spec',), {'a': [True, False], 'b': 2}, None),)"},
		{"root path and two items", Diff{
			{Change, []string{}, 1.5, int64(2)},
			{Change, []string{"x"}, json.Number("7"), json.Number("0.25")},
		}, "(('change', (), 1.5, 2), ('change', ('x',), 7, 0.25))"},
		{"big and small floats", Diff{{Change, nil, 1e21, 1e-5}},
			"(('change', (), 1e+21, 1e-05),)"},
		{"integral floats below 1e21 are ints", Diff{{Change, nil, 1e16, 2.0}},
			"(('change', (), 10000000000000000, 2),)"},
		{"string quoting", Diff{{Change, []string{"it's"}, "say \"hi\"", "a'b\"c\\\n\x01é"}},
			`(('change', ("it's",), 'say "hi"', 'a\'b"c\\\n\x01é'),)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.d.String(); got != tt.want {
				t.Errorf("String() =\n  %s\nwant\n  %s", got, tt.want)
			}
		})
	}
}
