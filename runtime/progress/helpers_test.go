package progress

import (
	"reflect"
	"testing"

	"github.com/kopf-go/kopf/runtime/body"
	"github.com/kopf-go/kopf/runtime/diffs"
	"github.com/kopf-go/kopf/runtime/patches"
)

// withAnnotations returns a KopfExample body with the given annotations.
func withAnnotations(annotations map[string]any) body.Body {
	b := body.Body{
		"apiVersion": "kopf.dev/v1",
		"kind":       "KopfExample",
		"metadata":   map[string]any{"name": "kopf-example-1", "namespace": "default"},
	}
	if annotations != nil {
		b["metadata"].(map[string]any)["annotations"] = annotations
	}
	return b
}

// assertPatch compares a patch with the expected one (nil or {} meaning
// "empty").
func assertPatch(t *testing.T, got patches.Patch, want map[string]any) {
	t.Helper()
	if len(want) == 0 && len(got) == 0 {
		return
	}
	if !reflect.DeepEqual(map[string]any(got), want) {
		t.Errorf("patch =\n  %#v\nwant\n  %#v", map[string]any(got), want)
	}
}

// assertUnchanged fails if a body differs from its snapshot.
func assertUnchanged(t *testing.T, b body.Body, snapshot any) {
	t.Helper()
	if !diffs.Equal(map[string]any(b), snapshot) {
		t.Errorf("the body was modified: %#v", b)
	}
}

func annotationsPatch(kv map[string]any) map[string]any {
	return map[string]any{"metadata": map[string]any{"annotations": kv}}
}
