package body

import (
	"reflect"
	"testing"
)

func TestDeepCopyValue(t *testing.T) {
	for _, tt := range []struct {
		name   string
		value  any
		mutate func(v any) // changes the copy's mutable parts
	}{
		{"map", map[string]any{"a": map[string]any{"b": []any{"c", map[string]any{"d": 1.0}}}}, func(v any) {
			v.(map[string]any)["a"].(map[string]any)["b"].([]any)[1].(map[string]any)["d"] = 2.0
		}},
		{"slice", []any{[]any{"x"}}, func(v any) { v.([]any)[0].([]any)[0] = "y" }},
		{"string map", map[string]string{"k": "v"}, func(v any) { v.(map[string]string)["k"] = "w" }},
		{"strings", []string{"a"}, func(v any) { v.([]string)[0] = "b" }},
		{"maps", []map[string]any{{"k": []any{"v"}}}, func(v any) { v.([]map[string]any)[0]["k"].([]any)[0] = "w" }},
		{"body", Body{"spec": map[string]any{"k": "v"}}, func(v any) { v.(Body)["spec"].(map[string]any)["k"] = "w" }},
		{"meta", Meta{"labels": map[string]any{"k": "v"}}, func(v any) { v.(Meta)["labels"].(map[string]any)["k"] = "w" }},
		{"spec", Spec{"k": map[string]any{}}, func(v any) { v.(Spec)["k"].(map[string]any)["x"] = 1 }},
		{"status", Status{"k": []any{1}}, func(v any) { v.(Status)["k"].([]any)[0] = 2 }},
		{"scalar", "s", nil},
		{"nil", nil, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			before := DeepCopyValue(tt.value)
			c := DeepCopyValue(tt.value)
			if !reflect.DeepEqual(c, tt.value) {
				t.Fatalf("DeepCopyValue(%v) = %v", tt.value, c)
			}
			if tt.mutate != nil {
				tt.mutate(c)
				if !reflect.DeepEqual(tt.value, before) {
					t.Errorf("changing the copy changed the original: %v", tt.value)
				}
			}
		})
	}
	for _, nilValue := range []any{map[string]any(nil), []any(nil), map[string]string(nil), []string(nil), []map[string]any(nil), Body(nil), Meta(nil), Spec(nil), Status(nil)} {
		if c := DeepCopyValue(nilValue); !reflect.ValueOf(c).IsNil() || reflect.TypeOf(c) != reflect.TypeOf(nilValue) {
			t.Errorf("DeepCopyValue(%T nil) = %#v, want a nil of the same type", nilValue, c)
		}
	}
}
