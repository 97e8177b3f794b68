package chaos

import (
	"encoding/json"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Unhandled returns why the object is not fully handled by the handlers
// (nothing if it is): each handler's result must be in status, a
// diff-base (a JSON object) must be stored, and no progress may be left
// (no annotation of the operator's other than the diff-base, no
// status.kopf).
func Unhandled(obj *unstructured.Unstructured, handlers []string) []string {
	var why []string
	for _, id := range handlers {
		if _, ok, _ := unstructured.NestedFieldNoCopy(obj.Object, "status", id); !ok {
			why = append(why, "no status."+id)
		}
	}
	if _, ok, _ := unstructured.NestedFieldNoCopy(obj.Object, "status", "kopf"); ok {
		why = append(why, "status.kopf left")
	}
	var essence map[string]any
	if raw, ok := obj.GetAnnotations()[DiffBaseKey]; !ok {
		why = append(why, "no diff-base")
	} else if err := json.Unmarshal([]byte(raw), &essence); err != nil || essence == nil {
		why = append(why, "the diff-base is not a JSON object")
	}
	var left []string
	for key := range obj.GetAnnotations() {
		if strings.HasPrefix(key, AnnotationPrefix) && key != DiffBaseKey {
			left = append(left, key)
		}
	}
	sort.Strings(left)
	for _, key := range left {
		why = append(why, "annotation "+key+" left")
	}
	return why
}
