package kopftest

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// Objects is a test's handle on the objects of one resource in one
// namespace, through the dynamic client: every method fails the test
// (t.Fatalf) on an error, so that a test reads as its steps.
type Objects struct {
	t  testing.TB
	ri dynamic.ResourceInterface
}

// NewObjects returns a handle on the objects of a resource in a namespace
// ("" for a cluster-scoped resource).
func NewObjects(t testing.TB, cfg *rest.Config, gvr schema.GroupVersionResource, namespace string) *Objects {
	t.Helper()
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatalf("a dynamic client: %v", err)
	}
	var ri dynamic.ResourceInterface = dyn.Resource(gvr)
	if namespace != "" {
		ri = dyn.Resource(gvr).Namespace(namespace)
	}
	return &Objects{t: t, ri: ri}
}

// Create creates an object given as its JSON tree (apiVersion, kind,
// metadata.name, ...) and returns it as created.
func (o *Objects) Create(obj map[string]any) *unstructured.Unstructured {
	o.t.Helper()
	created, err := o.ri.Create(context.Background(), &unstructured.Unstructured{Object: obj}, metav1.CreateOptions{})
	if err != nil {
		o.t.Fatalf("creating %v: %v", obj["metadata"], err)
	}
	return created
}

// Get returns an object.
func (o *Objects) Get(name string) *unstructured.Unstructured {
	o.t.Helper()
	obj, err := o.ri.Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		o.t.Fatalf("getting %s: %v", name, err)
	}
	return obj
}

// MergePatch applies a JSON merge patch given as a Go value (e.g.
// map[string]any{"spec": map[string]any{"field": "value"}}) and returns
// the patched object.
func (o *Objects) MergePatch(name string, patch any) *unstructured.Unstructured {
	o.t.Helper()
	data, err := json.Marshal(patch)
	if err != nil {
		o.t.Fatalf("encoding the patch of %s: %v", name, err)
	}
	obj, err := o.ri.Patch(context.Background(), name, types.MergePatchType, data, metav1.PatchOptions{})
	if err != nil {
		o.t.Fatalf("patching %s: %v", name, err)
	}
	return obj
}

// Delete deletes an object and waits until it is gone: its finalizers,
// the operator's among them, are released. It fails the test after the
// timeout.
func (o *Objects) Delete(name string, timeout time.Duration) {
	o.t.Helper()
	if err := o.ri.Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
		o.t.Fatalf("deleting %s: %v", name, err)
	}
	if err := o.poll(timeout, func(ctx context.Context) (bool, error) {
		_, err := o.ri.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	}); err != nil {
		o.t.Fatalf("%s is not gone: %v", name, err)
	}
}

// WaitFor waits until cond holds for the object (which must exist) and
// returns the object as last seen. It fails the test after the timeout,
// showing the object as last seen.
func (o *Objects) WaitFor(name string, timeout time.Duration, cond func(*unstructured.Unstructured) bool) *unstructured.Unstructured {
	o.t.Helper()
	var last *unstructured.Unstructured
	if err := o.poll(timeout, func(ctx context.Context) (bool, error) {
		obj, err := o.ri.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		last = obj
		return cond(obj), nil
	}); err != nil {
		o.t.Fatalf("%s: the condition does not hold: %v; last seen: %v", name, err, last)
	}
	return last
}

// poll checks cond every 50 ms until it holds or the timeout passes; the
// last error of cond (transient: a restarting API server) is reported
// with the timeout.
func (o *Objects) poll(timeout time.Duration, cond func(ctx context.Context) (bool, error)) error {
	return pollUntil(context.Background(), 50*time.Millisecond, timeout, cond)
}
