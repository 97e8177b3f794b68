package chaos

import (
	"encoding/json"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// TouchKey is the annotation that the operator sets to wake an object up
// after a handler's delay, and removes with its next patch.
const TouchKey = AnnotationPrefix + "touch-dummy"

// Unhandled returns why the object is not fully handled by the handlers
// (nothing if it is): each handler's result must be in status, a
// diff-base (a JSON object) must be stored, and no progress may be left
// (no annotation of the operator's other than the diff-base and the touch
// annotation, no status.kopf).
//
// The touch annotation is not progress: it can be left behind when
// kube-apiserver stores a touch and dies before answering, and the
// operator's next patch is computed from the version before it (Kopf
// 1.44 leaves it too: it removes it only with a patch it sends anyway).
// TouchLeft tells whether it is there.
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
		if strings.HasPrefix(key, AnnotationPrefix) && key != DiffBaseKey && key != TouchKey {
			left = append(left, key)
		}
	}
	sort.Strings(left)
	for _, key := range left {
		why = append(why, "annotation "+key+" left")
	}
	return why
}

// TouchLeft reports whether the object still has the touch annotation.
func TouchLeft(obj *unstructured.Unstructured) bool {
	_, ok := obj.GetAnnotations()[TouchKey]
	return ok
}
