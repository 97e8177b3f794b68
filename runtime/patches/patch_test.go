package patches

import (
	"encoding/json"
	"reflect"
	"testing"
)

func ptr(s string) *string { return &s }

func TestNewIsEmpty(t *testing.T) {
	p := New()
	if p == nil {
		t.Fatal("New() = nil, want a usable empty patch")
	}
	if !p.IsEmpty() {
		t.Errorf("New().IsEmpty() = false, want true")
	}
}

func TestDict(t *testing.T) {
	tests := []struct {
		name  string
		patch Patch
		path  []string
		want  Patch // the whole patch after the call
	}{
		{name: "no path returns the root", patch: Patch{"a": "b"}, path: nil, want: Patch{"a": "b"}},
		{name: "creates intermediate maps", patch: Patch{}, path: []string{"metadata", "annotations"},
			want: Patch{"metadata": map[string]any{"annotations": map[string]any{}}}},
		{name: "keeps existing maps and siblings",
			patch: Patch{"metadata": map[string]any{"labels": map[string]any{"x": "y"}}},
			path:  []string{"metadata", "annotations"},
			want:  Patch{"metadata": map[string]any{"labels": map[string]any{"x": "y"}, "annotations": map[string]any{}}}},
		{name: "replaces a scalar in the way", patch: Patch{"spec": "scalar"}, path: []string{"spec", "x"},
			want: Patch{"spec": map[string]any{"x": map[string]any{}}}},
		{name: "replaces a nil (removal) in the way", patch: Patch{"status": nil}, path: []string{"status"},
			want: Patch{"status": map[string]any{}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := tt.patch.Dict(tt.path...)
			if d == nil {
				t.Fatal("Dict() = nil")
			}
			d["written"] = true // must land in the patch at the path
			delete(d, "written")
			if !reflect.DeepEqual(tt.patch, tt.want) {
				t.Errorf("patch = %#v, want %#v", tt.patch, tt.want)
			}
		})
	}
}

func TestDictReturnsTheLiveMap(t *testing.T) {
	p := New()
	p.Dict("status", "kopf")["dummy"] = "x"
	p.Status()["other"] = "y"
	p.Metadata()["name"] = "n"
	p.Spec()["field"] = "v"
	want := Patch{
		"status":   map[string]any{"kopf": map[string]any{"dummy": "x"}, "other": "y"},
		"metadata": map[string]any{"name": "n"},
		"spec":     map[string]any{"field": "v"},
	}
	if !reflect.DeepEqual(p, want) {
		t.Errorf("patch = %#v, want %#v", p, want)
	}
}

func TestSetAnnotation(t *testing.T) {
	tests := []struct {
		name  string
		key   string
		value *string
		want  Patch
	}{
		{name: "set", key: "kopf.zalando.org/create_fn", value: ptr(`{"retries":1}`),
			want: Patch{"metadata": map[string]any{"annotations": map[string]any{"kopf.zalando.org/create_fn": `{"retries":1}`}}}},
		{name: "set empty string", key: "k", value: ptr(""),
			want: Patch{"metadata": map[string]any{"annotations": map[string]any{"k": ""}}}},
		{name: "remove with nil", key: "k", value: nil,
			want: Patch{"metadata": map[string]any{"annotations": map[string]any{"k": nil}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := New()
			p.SetAnnotation(tt.key, tt.value)
			if !reflect.DeepEqual(p, tt.want) {
				t.Errorf("patch = %#v, want %#v", p, tt.want)
			}
			if p.IsEmpty() {
				t.Error("IsEmpty() = true after SetAnnotation, want false")
			}
		})
	}
}

func TestSetAnnotationOverwrites(t *testing.T) {
	p := New()
	p.SetAnnotation("k", ptr("v1"))
	p.SetAnnotation("k", nil)
	p.SetAnnotation("other", ptr("o"))
	want := Patch{"metadata": map[string]any{"annotations": map[string]any{"k": nil, "other": "o"}}}
	if !reflect.DeepEqual(p, want) {
		t.Errorf("patch = %#v, want %#v", p, want)
	}
}

func TestIsEmpty(t *testing.T) {
	tests := []struct {
		name  string
		patch Patch
		want  bool
	}{
		{"nil", nil, true},
		{"empty", Patch{}, true},
		{"empty stanzas", Patch{"metadata": map[string]any{"annotations": map[string]any{}}, "status": map[string]any{}}, true},
		{"a scalar", Patch{"spec": map[string]any{"x": "y"}}, false},
		{"a removal (nil) is a change", Patch{"metadata": map[string]any{"annotations": map[string]any{"k": nil}}}, false},
		{"a top-level removal", Patch{"status": nil}, false},
		{"an empty list is a value", Patch{"spec": map[string]any{"items": []any{}}}, false},
		{"deep value among empty maps", Patch{"a": map[string]any{}, "b": map[string]any{"c": map[string]any{"d": 0.0}}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.patch.IsEmpty(); got != tt.want {
				t.Errorf("IsEmpty() = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestSplit(t *testing.T) {
	tests := []struct {
		name       string
		patch      Patch
		wantMain   Patch
		wantStatus Patch
	}{
		{name: "nil", patch: nil},
		{name: "empty", patch: Patch{}},
		{name: "main only",
			patch:    Patch{"metadata": map[string]any{"annotations": map[string]any{"k": "v"}}},
			wantMain: Patch{"metadata": map[string]any{"annotations": map[string]any{"k": "v"}}}},
		{name: "status only",
			patch:      Patch{"status": map[string]any{"create_fn": map[string]any{"message": "hi"}}},
			wantStatus: Patch{"status": map[string]any{"create_fn": map[string]any{"message": "hi"}}}},
		{name: "both",
			patch: Patch{
				"metadata": map[string]any{"annotations": map[string]any{"k": nil}},
				"spec":     map[string]any{"replicas": 1.0},
				"status":   map[string]any{"phase": "Ready"},
			},
			wantMain: Patch{
				"metadata": map[string]any{"annotations": map[string]any{"k": nil}},
				"spec":     map[string]any{"replicas": 1.0},
			},
			wantStatus: Patch{"status": map[string]any{"phase": "Ready"}}},
		{name: "empty stanzas on both sides give nils",
			patch: Patch{"metadata": map[string]any{}, "status": map[string]any{"kopf": map[string]any{}}}},
		{name: "status removed as a whole",
			patch:      Patch{"status": nil},
			wantStatus: Patch{"status": nil}},
		{name: "status replaced by a scalar",
			patch:      Patch{"status": "x"},
			wantStatus: Patch{"status": "x"}},
		{name: "status-like keys elsewhere stay in main",
			patch:    Patch{"spec": map[string]any{"status": "x"}},
			wantMain: Patch{"spec": map[string]any{"status": "x"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := clone(t, tt.patch)
			main, status := tt.patch.Split()
			if !reflect.DeepEqual(main, tt.wantMain) {
				t.Errorf("main = %#v, want %#v", main, tt.wantMain)
			}
			if !reflect.DeepEqual(status, tt.wantStatus) {
				t.Errorf("status = %#v, want %#v", status, tt.wantStatus)
			}
			if !reflect.DeepEqual(tt.patch, before) {
				t.Errorf("Split modified the receiver: %#v, was %#v", tt.patch, before)
			}
		})
	}
}

func TestMergeResult(t *testing.T) {
	tests := []struct {
		name   string
		before Patch
		id     string
		result any
		want   Patch
	}{
		{name: "nil result changes nothing", before: Patch{}, id: "fn", result: nil, want: Patch{}},
		{name: "scalar is stored", before: Patch{}, id: "fn", result: "done",
			want: Patch{"status": map[string]any{"fn": "done"}}},
		{name: "number is stored", before: Patch{}, id: "fn", result: 42.0,
			want: Patch{"status": map[string]any{"fn": 42.0}}},
		{name: "list is stored whole", before: Patch{}, id: "fn", result: []any{"a", "b"},
			want: Patch{"status": map[string]any{"fn": []any{"a", "b"}}}},
		{name: "map is stored", before: Patch{}, id: "create_fn/item1", result: map[string]any{"message": "hello"},
			want: Patch{"status": map[string]any{"create_fn/item1": map[string]any{"message": "hello"}}}},
		{name: "map merges key by key",
			before: Patch{"status": map[string]any{"fn": map[string]any{"a": 1.0, "b": 2.0}}},
			id:     "fn", result: map[string]any{"b": 3.0, "c": 4.0},
			want: Patch{"status": map[string]any{"fn": map[string]any{"a": 1.0, "b": 3.0, "c": 4.0}}}},
		{name: "map replaces a scalar",
			before: Patch{"status": map[string]any{"fn": "old"}},
			id:     "fn", result: map[string]any{"a": 1.0},
			want: Patch{"status": map[string]any{"fn": map[string]any{"a": 1.0}}}},
		{name: "scalar replaces a map",
			before: Patch{"status": map[string]any{"fn": map[string]any{"a": 1.0}}},
			id:     "fn", result: "new",
			want: Patch{"status": map[string]any{"fn": "new"}}},
		{name: "other handlers' results are kept",
			before: Patch{"status": map[string]any{"other": "x"}, "metadata": map[string]any{"k": "v"}},
			id:     "fn", result: true,
			want: Patch{"status": map[string]any{"other": "x", "fn": true}, "metadata": map[string]any{"k": "v"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := tt.before
			p.MergeResult(tt.id, tt.result)
			if !reflect.DeepEqual(p, tt.want) {
				t.Errorf("patch = %#v, want %#v", p, tt.want)
			}
		})
	}
}

func TestMergeResultDoesNotAliasTheResult(t *testing.T) {
	result := map[string]any{"a": 1.0}
	p := New()
	p.MergeResult("fn", result)
	p.MergeResult("fn", map[string]any{"b": 2.0})
	if want := map[string]any{"a": 1.0}; !reflect.DeepEqual(result, want) {
		t.Errorf("the handler's result was modified: %v, want %v", result, want)
	}
}

// TestPatchJSON checks the rendered merge patch: nil values become JSON
// nulls, which RFC 7386 reads as removals.
func TestPatchJSON(t *testing.T) {
	p := New()
	p.SetAnnotation("kopf.zalando.org/touch-dummy", nil)
	p.SetAnnotation("kopf.zalando.org/last-handled-configuration", ptr("{\"spec\":{}}\n"))
	p.MergeResult("create_fn", map[string]any{"message": "done"})
	data, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"metadata":{"annotations":{"kopf.zalando.org/last-handled-configuration":"{\"spec\":{}}\n","kopf.zalando.org/touch-dummy":null}},"status":{"create_fn":{"message":"done"}}}`
	if string(data) != want {
		t.Errorf("json =\n%s\nwant\n%s", data, want)
	}
}

func clone(t *testing.T, p Patch) Patch {
	t.Helper()
	if p == nil {
		return nil
	}
	data, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var out Patch
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	return out
}
