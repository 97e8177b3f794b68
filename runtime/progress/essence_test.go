package progress

import (
	"reflect"
	"testing"

	"github.com/kopf-go/kopf/runtime/body"
	"github.com/kopf-go/kopf/runtime/diffs"
)

// exampleBody is kopf-docs/data/obj.yaml as the API server would return it
// (with system fields, status, and annotations of Kopf and kubectl).
func exampleBody() body.Body {
	return body.Body{
		"apiVersion": "kopf.dev/v1",
		"kind":       "KopfExample",
		"metadata": map[string]any{
			"name":              "kopf-example-1",
			"namespace":         "default",
			"uid":               "1234-5678",
			"resourceVersion":   "42",
			"generation":        int64(1),
			"creationTimestamp": "2026-01-01T00:00:00Z",
			"finalizers":        []any{"kopf.zalando.org/KopfFinalizerMarker"},
			"labels":            map[string]any{"somelabel": "somevalue"},
			"annotations": map[string]any{
				"someannotation": "somevalue",
				"kubectl.kubernetes.io/last-applied-configuration": `{"apiVersion":"kopf.dev/v1"}`,
				"kopf.zalando.org/last-handled-configuration":      "{\"spec\":{}}\n",
				"kopf.zalando.org/create_fn":                       `{"retries":1}`,
			},
		},
		"spec": map[string]any{
			"duration": "1m",
			"field":    "value",
			"items":    []any{"item1", "item2"},
		},
		"status": map[string]any{"create_fn": map[string]any{"message": "hello"}},
	}
}

func TestBuildEssence(t *testing.T) {
	tests := []struct {
		name    string
		b       body.Body
		extra   [][]string
		ignored [][]string
		want    map[string]any
	}{
		{"nil body", nil, nil, nil, map[string]any{}},
		{"only system fields", body.Body{"apiVersion": "v1", "kind": "X", "metadata": map[string]any{"name": "n"}, "status": map[string]any{"a": "b"}},
			nil, nil, map[string]any{}},
		{"the example", exampleBody(), nil, nil, map[string]any{
			"spec": map[string]any{"duration": "1m", "field": "value", "items": []any{"item1", "item2"}},
			"metadata": map[string]any{
				"labels":      map[string]any{"somelabel": "somevalue"},
				"annotations": map[string]any{"someannotation": "somevalue"},
			},
		}},
		{"other top-level fields are kept", body.Body{"kind": "ConfigMap", "data": map[string]any{"k": "v"}, "immutable": true},
			nil, nil, map[string]any{"data": map[string]any{"k": "v"}, "immutable": true}},
		{"empty labels and annotations removed", body.Body{"metadata": map[string]any{"labels": map[string]any{}, "annotations": map[string]any{
			"kopf.zalando.org/x": "y", "kubectl.kubernetes.io/last-applied-configuration": "{}"}}},
			nil, nil, map[string]any{}},
		{"null labels removed", body.Body{"metadata": map[string]any{"labels": nil}}, nil, nil, map[string]any{}},
		{"sharding's bucket labels removed", body.Body{"metadata": map[string]any{"labels": map[string]any{
			"kopf.dev/sharding-bucket-of-64": "17", "kopf.dev/sharding-bucket-of-8": "2", "kopf.dev/other": "kept"}}},
			nil, nil, map[string]any{"metadata": map[string]any{"labels": map[string]any{"kopf.dev/other": "kept"}}}},
		{"only a bucket label: no labels", body.Body{"metadata": map[string]any{"labels": map[string]any{"kopf.dev/sharding-bucket-of-64": "17"}}},
			nil, nil, map[string]any{}},
		{"other operators' prefixes removed", body.Body{"metadata": map[string]any{"annotations": map[string]any{
			"my-op.example.com/kopf-managed":               "yes",
			"my-op.example.com/last-handled-configuration": "{}",
			"sub.kopf.zalando.org/fn":                      "{}",
			"kopf.zalando.org/fn":                          "{}",
			"notkopf.zalando.org/fn":                       "kept",
			"example.com/fn":                               "kept",
			"plain":                                        "kept",
		}}}, nil, nil, map[string]any{"metadata": map[string]any{"annotations": map[string]any{
			"notkopf.zalando.org/fn": "kept", "example.com/fn": "kept", "plain": "kept",
		}}}},
		{"extra fields", exampleBody(), [][]string{{"status", "create_fn", "message"}, {"metadata", "name"}, {"status", "absent"}, {"spec", "field", "x"}}, nil,
			map[string]any{
				"spec": map[string]any{"duration": "1m", "field": "value", "items": []any{"item1", "item2"}},
				"metadata": map[string]any{
					"name":        "kopf-example-1",
					"labels":      map[string]any{"somelabel": "somevalue"},
					"annotations": map[string]any{"someannotation": "somevalue"},
				},
				"status": map[string]any{"create_fn": map[string]any{"message": "hello"}},
			}},
		{"extra fields restore filtered annotations", exampleBody(), [][]string{{"metadata", "annotations", "kopf.zalando.org/create_fn"}}, nil,
			map[string]any{
				"spec": map[string]any{"duration": "1m", "field": "value", "items": []any{"item1", "item2"}},
				"metadata": map[string]any{
					"labels":      map[string]any{"somelabel": "somevalue"},
					"annotations": map[string]any{"someannotation": "somevalue", "kopf.zalando.org/create_fn": `{"retries":1}`},
				},
			}},
		{"ignored fields, with emptied parents", exampleBody(), nil,
			[][]string{{"spec", "duration"}, {"spec", "field"}, {"spec", "items"}, {"metadata", "labels", "somelabel"}, {"nope", "x"}, {}, {"spec", "items", "0"}},
			map[string]any{"metadata": map[string]any{"annotations": map[string]any{"someannotation": "somevalue"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var snapshot any
			if tt.b != nil {
				snapshot = deepCopy(tt.b)
			}
			got := BuildEssence(tt.b, tt.extra, tt.ignored)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("BuildEssence() =\n  %#v\nwant\n  %#v", got, tt.want)
			}
			if tt.b != nil {
				assertUnchanged(t, tt.b, snapshot)
			}
		})
	}
}

func TestBuildEssenceSharesNothing(t *testing.T) {
	b := exampleBody()
	essence := BuildEssence(b, [][]string{{"status"}}, nil)
	essence["spec"].(map[string]any)["items"].([]any)[0] = "changed"
	essence["metadata"].(map[string]any)["labels"].(map[string]any)["somelabel"] = "changed"
	essence["status"].(map[string]any)["create_fn"].(map[string]any)["message"] = "changed"
	if !diffs.Equal(map[string]any(b), map[string]any(exampleBody())) {
		t.Errorf("the body shares structure with the essence")
	}
}

func TestMarkedPrefixes(t *testing.T) {
	got := MarkedPrefixes([]string{
		"kopf.zalando.org/a", "x.kopf.zalando.org/b", "my.example.com/kopf-managed", "my.example.com/other",
		"other.example.com/a", "plain", "xkopf.zalando.org/a",
	})
	want := map[string]bool{"kopf.zalando.org": true, "x.kopf.zalando.org": true, "my.example.com": true}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("MarkedPrefixes() = %v", got)
	}
}

func TestIsFalsy(t *testing.T) {
	tests := []struct {
		v    any
		want bool
	}{
		{nil, true}, {false, true}, {"", true}, {0.0, true}, {int64(0), true},
		{map[string]any{}, true}, {[]any{}, true}, {map[string]string{}, true},
		{true, false}, {"x", false}, {1.0, false}, {map[string]any{"a": nil}, false}, {[]any{nil}, false},
	}
	for _, tt := range tests {
		if got := isFalsy(tt.v); got != tt.want {
			t.Errorf("isFalsy(%#v) = %v, want %v", tt.v, got, tt.want)
		}
	}
}
