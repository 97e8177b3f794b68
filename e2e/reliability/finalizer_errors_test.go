package reliability_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kopf-go/kopf/runtime/causes"
)

// A finalizer that the API server rejects (422, not a qualified name) is
// logged as an error naming the object and the server's reason, not
// dropped silently.
func TestRejectedFinalizerIsLogged(t *testing.T) {
	t.Parallel()
	ns := namespace(t, "finalizer-rejected")
	ri := objects(shared.Config, ns)
	s := fastSettings()
	s.Persistence.Finalizer = "kopf.zalando.org/not a qualified name"
	op := runInProcess(t, shared.Config, ns, s, handler("delete_fn", message("deleted"), causes.Delete))

	create(t, ri, example("rejected", nil, nil, nil))
	waitLog(t, op.logs, fmt.Sprintf(
		"[ERROR   ] [%[1]s/rejected] The object cannot be patched; it will be processed again when it changes: patching %[1]s/rejected: KopfExample.kopf.dev \"rejected\" is invalid: metadata.finalizers: Invalid value: \"kopf.zalando.org/not a qualified name\"", ns),
		30*time.Second)
}

// The reactor tells a finalizer patch that no longer applies (the object
// changed since the version it tested: a conflict, logged at debug level)
// from one rejected by validation (logged as an error) by the shape of
// kube-apiserver's 422 (reactor's isInapplicable): no name and no causes
// for the former. This holds the real server to that shape.
func TestStaleJSONPatchIsABareUnprocessableEntity(t *testing.T) {
	t.Parallel()
	ns := namespace(t, "stale-json-patch")
	ri := objects(shared.Config, ns)
	obj := create(t, ri, example("stale", nil, nil, nil))
	if _, err := ri.Patch(context.Background(), "stale", types.MergePatchType, []byte(`{"metadata":{"labels":{"changed":"yes"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	ops, _ := json.Marshal([]map[string]any{
		{"op": "test", "path": "/metadata/resourceVersion", "value": obj.GetResourceVersion()},
		{"op": "add", "path": "/metadata/finalizers", "value": []string{"kopf.zalando.org/KopfFinalizerMarker"}},
	})
	_, err := ri.Patch(context.Background(), "stale", types.JSONPatchType, ops, metav1.PatchOptions{})
	var status apierrors.APIStatus
	if !apierrors.IsInvalid(err) || !errors.As(err, &status) {
		t.Fatalf("a JSON patch testing a stale resourceVersion: %v (%T), want a 422 Invalid", err, err)
	}
	if d := status.Status().Details; d != nil && (d.Name != "" || len(d.Causes) != 0) {
		t.Errorf("the 422 of a failed test operation has a name %q or causes %v: the reactor would take the conflict for an invalid patch", d.Name, d.Causes)
	}
}
