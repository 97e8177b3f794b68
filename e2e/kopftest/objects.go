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

	"github.com/kopf-go/kopf/e2e/cluster"
)

// KopfExamples is the resource of Kopf's example operators.
var KopfExamples = schema.GroupVersionResource{Group: "kopf.dev", Version: "v1", Resource: "kopfexamples"}

// Objects is a test's handle on the objects of one resource in one
// namespace; every method fails the test on error.
type Objects struct {
	t  testing.TB
	ri dynamic.ResourceInterface
}

// NewObjects returns a handle on a resource in a namespace ("" for
// cluster-scoped resources).
func NewObjects(t testing.TB, cfg *rest.Config, gvr schema.GroupVersionResource, namespace string) *Objects {
	t.Helper()
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var ri dynamic.ResourceInterface = dyn.Resource(gvr)
	if namespace != "" {
		ri = dyn.Resource(gvr).Namespace(namespace)
	}
	return &Objects{t: t, ri: ri}
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

// MergePatch applies a JSON merge patch given as a Go value.
func (o *Objects) MergePatch(name string, patch any) *unstructured.Unstructured {
	o.t.Helper()
	data, err := json.Marshal(patch)
	if err != nil {
		o.t.Fatal(err)
	}
	obj, err := o.ri.Patch(context.Background(), name, types.MergePatchType, data, metav1.PatchOptions{})
	if err != nil {
		o.t.Fatalf("patching %s: %v", name, err)
	}
	return obj
}

// Delete deletes an object and waits until it is really gone (finalizers
// released), failing the test after the timeout.
func (o *Objects) Delete(name string, timeout time.Duration) {
	o.t.Helper()
	ctx := context.Background()
	if err := o.ri.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		o.t.Fatalf("deleting %s: %v", name, err)
	}
	err := cluster.WaitFor(ctx, timeout, func(ctx context.Context) (bool, error) {
		_, err := o.ri.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
	if err != nil {
		o.t.Fatalf("%s is not deleted in %s: %v", name, timeout, err)
	}
}

// WaitFor waits until cond holds for the object, failing the test after the
// timeout. It returns the object as last seen.
func (o *Objects) WaitFor(name string, timeout time.Duration, cond func(*unstructured.Unstructured) bool) *unstructured.Unstructured {
	o.t.Helper()
	var last *unstructured.Unstructured
	err := cluster.WaitFor(context.Background(), timeout, func(ctx context.Context) (bool, error) {
		obj, err := o.ri.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		last = obj
		return cond(obj), nil
	})
	if err != nil {
		o.t.Fatalf("%s: the condition does not hold in %s: %v; last seen: %v", name, timeout, err, last)
	}
	return last
}
