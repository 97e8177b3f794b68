package hierarchies_test

import (
	"encoding/json"
	"iter"
	"reflect"
	"slices"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	batchv1ac "k8s.io/client-go/applyconfigurations/batch/v1"

	"github.com/kopf-go/kopf/runtime/body"
)

// The owner of Kopf's tests/hierarchies.
const (
	ownerAPIVersion = "owner-api-version"
	ownerNamespace  = "owner-namespace"
	ownerKind       = "OwnerKind"
	ownerName       = "owner-name"
	ownerUID        = "owner-uid"
)

func ownerBody() body.Body {
	return body.Body{
		"apiVersion": ownerAPIVersion,
		"kind":       ownerKind,
		"metadata": map[string]any{
			"namespace": ownerNamespace,
			"name":      ownerName,
			"uid":       ownerUID,
			"labels":    map[string]any{"label-1": "value-1", "label-2": "value-2"},
		},
	}
}

// A form is one way to hold a child: the cases run on each, from the same
// JSON tree, and compare the same JSON tree after.
type form struct {
	name string
	make func(t *testing.T, obj map[string]any) any
	dump func(t *testing.T, child any) map[string]any
}

var forms = []form{
	{
		name: "map",
		make: func(t *testing.T, obj map[string]any) any { return obj },
		dump: func(t *testing.T, child any) map[string]any { return child.(map[string]any) },
	},
	{
		name: "body",
		make: func(t *testing.T, obj map[string]any) any { return body.Body(obj) },
		dump: func(t *testing.T, child any) map[string]any { return child.(body.Body) },
	},
	{
		name: "unstructured",
		make: func(t *testing.T, obj map[string]any) any { return &unstructured.Unstructured{Object: obj} },
		dump: func(t *testing.T, child any) map[string]any { return child.(*unstructured.Unstructured).Object },
	},
	{
		// Kopf's fixture of the kubernetes client's models: a CronJob.
		name: "typed",
		make: func(t *testing.T, obj map[string]any) any {
			t.Helper()
			cj := &batchv1.CronJob{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj, cj); err != nil {
				t.Fatal(err)
			}
			return cj
		},
		dump: func(t *testing.T, child any) map[string]any {
			t.Helper()
			m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(child)
			if err != nil {
				t.Fatal(err)
			}
			return m
		},
	},
	{
		// client-go's apply configuration of the same CronJob: absent
		// fields are nil pointers, as in untyped objects.
		name: "apply",
		make: func(t *testing.T, obj map[string]any) any {
			t.Helper()
			data, err := json.Marshal(obj)
			if err != nil {
				t.Fatal(err)
			}
			cj := &batchv1ac.CronJobApplyConfiguration{}
			if err := json.Unmarshal(data, cj); err != nil {
				t.Fatal(err)
			}
			return cj
		},
		dump: func(t *testing.T, child any) map[string]any {
			t.Helper()
			data, err := json.Marshal(child)
			if err != nil {
				t.Fatal(err)
			}
			var m map[string]any
			if err := json.Unmarshal(data, &m); err != nil {
				t.Fatal(err)
			}
			return m
		},
	},
}

// A shape is how several children are passed (Kopf's list, tuple and
// custom iterable); "one" passes the child alone.
type shape struct {
	name  string
	count int
	pack  func(children []any) any
}

var shapes = []shape{
	{"one", 1, func(c []any) any { return c[0] }},
	{"slice", 2, func(c []any) any { return c }},
	{"array-pointer", 2, func(c []any) any { return &[2]any{c[0], c[1]} }},
	{"nested-slices", 2, func(c []any) any { return []any{[]any{c[0]}, [][]any{{c[1]}}} }},
	{"iterator", 2, func(c []any) any { return iter.Seq[any](slices.Values(c)) }},
}

// normalize drops what JSON renderings of typed and untyped objects
// differ in: nulls, empty strings, empty objects and lists.
func normalize(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, x := range v {
			if x = normalize(x); x != nil {
				out[k] = x
			}
		}
		if len(out) == 0 {
			return nil
		}
		return out
	case body.Body:
		return normalize(map[string]any(v))
	case []any:
		if len(v) == 0 {
			return nil
		}
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = normalize(x)
		}
		return out
	case string:
		if v == "" {
			return nil
		}
	}
	return v
}

// deepCopy copies a JSON tree of the cases.
func deepCopy(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return body.DeepCopyValue(m).(map[string]any)
}

// runForms runs fn on every form and shape, with children made of in, and
// checks that each child is want after (normalized).
func runForms(t *testing.T, in, want map[string]any, fn func(objs any) error) {
	t.Helper()
	for _, f := range forms {
		for _, s := range shapes {
			t.Run(f.name+"/"+s.name, func(t *testing.T) {
				children := make([]any, s.count)
				for i := range children {
					children[i] = f.make(t, deepCopy(in))
				}
				if err := fn(s.pack(children)); err != nil {
					t.Fatalf("error: %v", err)
				}
				for i, c := range children {
					got := normalize(f.dump(t, c))
					if w := normalize(want); !reflect.DeepEqual(got, w) {
						t.Errorf("child %d:\n got %v\nwant %v", i, got, w)
					}
				}
			})
		}
	}
}

func metadata(md map[string]any) map[string]any { return map[string]any{"metadata": md} }
