package apply

import (
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	"github.com/kopf-go/kopf/runtime/execution"
)

func TestEncode(t *testing.T) {
	for _, tc := range []struct {
		name   string
		obj    any
		target string
		body   string
		err    string
	}{
		{name: "client-go apply configuration",
			obj:    corev1ac.ConfigMap("child", "ns").WithData(map[string]string{"k": "v"}),
			target: "ConfigMap ns/child",
			body:   `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"child","namespace":"ns"},"data":{"k":"v"}}`},
		{name: "unstructured",
			obj: &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "kopf.dev/v1", "kind": "KopfExample",
				"metadata": map[string]any{"name": "x", "namespace": "ns"}, "status": map[string]any{"a": 1}}},
			target: "KopfExample ns/x",
			body:   `{"apiVersion":"kopf.dev/v1","kind":"KopfExample","metadata":{"name":"x","namespace":"ns"},"status":{"a":1}}`},
		{name: "map, cluster-scoped",
			obj:    map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "n"}},
			target: "Namespace n",
			body:   `{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"n"}}`},
		{name: "typed object refused", obj: &corev1.ConfigMap{}, err: "not an apply configuration"},
		{name: "nil unstructured", obj: (*unstructured.Unstructured)(nil), err: "nil object"},
		{name: "no name", obj: corev1ac.ConfigMap("", "ns"), err: "metadata.name are required"},
		{name: "no kind", obj: map[string]any{"apiVersion": "v1", "metadata": map[string]any{"name": "n"}}, err: "are required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			target, body, err := Encode(tc.obj)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one with %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if target.String() != tc.target || string(body) != tc.body {
				t.Errorf("got %s %s, want %s %s", target, body, tc.target, tc.body)
			}
		})
	}
}

func TestOptions(t *testing.T) {
	if o := resolve(nil); o.fieldOwner != FieldManager || o.force || o.noRetry || o.conflictDelay != 0 {
		t.Errorf("defaults: %+v", o)
	}
	o := resolve([]Option{FieldOwner("me"), ForceOwnership(), ConflictDelay(time.Second), ConflictNotRetried()})
	if o.fieldOwner != "me" || !o.force || !o.noRetry || o.conflictDelay != time.Second {
		t.Errorf("options: %+v", o)
	}
}

// applyConflict is the API server's answer to a conflicting apply, as
// its field manager makes it.
func applyConflict() error {
	return apierrors.NewApplyConflict([]metav1.StatusCause{
		{Type: metav1.CauseTypeFieldManagerConflict, Message: `conflict with "other"`, Field: ".data.b"},
		{Type: metav1.CauseTypeFieldManagerConflict, Message: `conflict with "before" using v1`, Field: ".data.a"},
		{Type: metav1.CauseTypeFieldManagerConflict, Message: `conflict with "other"`, Field: ".data.a"},
	}, "Apply failed with 3 conflicts")
}

func TestClassify(t *testing.T) {
	target := Target{Namespace: "ns", Name: "child"}
	target.GVK.Version, target.GVK.Kind = "v1", "ConfigMap"
	const msg = `applying ConfigMap ns/child as "kopf": conflict with "before", "other" on .data.a, .data.b (ForceOwnership takes these fields)`

	t.Run("conflict, retried", func(t *testing.T) {
		err := classify(target, resolve([]Option{ConflictDelay(time.Second)}), applyConflict())
		var ce *ConflictError
		var tmp *execution.TemporaryError
		if !errors.As(err, &ce) || !errors.As(err, &tmp) || !apierrors.IsConflict(err) {
			t.Fatalf("%#v is not a ConflictError, TemporaryError and API conflict", err)
		}
		if err.Error() != msg || tmp.Message != msg || tmp.Delay != time.Second {
			t.Errorf("got %q, %q after %s; want %q", err, tmp.Message, tmp.Delay, msg)
		}
	})
	t.Run("conflict, not retried", func(t *testing.T) {
		err := classify(target, resolve([]Option{ConflictNotRetried()}), applyConflict())
		var tmp *execution.TemporaryError
		if errors.As(err, &tmp) || !apierrors.IsConflict(err) {
			t.Errorf("%v: a TemporaryError, or not an API conflict", err)
		}
	})
	t.Run("other errors wrapped", func(t *testing.T) {
		for _, in := range []error{
			apierrors.NewConflict(corev1.Resource("configmaps"), "child", errors.New("the object has been modified")),
			apierrors.NewForbidden(corev1.Resource("configmaps"), "child", errors.New("no")),
		} {
			err := classify(target, resolve(nil), in)
			var ce *ConflictError
			if errors.As(err, &ce) || !errors.Is(err, in) || !strings.HasPrefix(err.Error(), `applying ConfigMap ns/child as "kopf": `) {
				t.Errorf("%v: not wrapped as it is", err)
			}
		}
	})
}
