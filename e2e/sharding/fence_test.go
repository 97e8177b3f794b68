package sharding_test

import (
	"context"
	"fmt"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/kopf-go/kopf/runtime/reactor"
	"github.com/kopf-go/kopf/runtime/resources"
	"github.com/kopf-go/kopf/runtime/sharding"
)

// replica is a fenced writer, as a sharded operator's reactor has: its
// patches go through a sharding.Writer over the reactor's default Patcher
// (by the REST client, as the operator's).
type replica struct {
	identity string
	w        *sharding.Writer
}

func newReplica(t *testing.T, cfg *rest.Config, identity string) *replica {
	t.Helper()
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfigAndClient(cfg, hc)
	if err != nil {
		t.Fatal(err)
	}
	raw := dynamic.ConfigFor(cfg)
	raw.GroupVersion = nil
	raw.APIPath = "/"
	rc, err := rest.UnversionedRESTClientForConfigAndClient(raw, hc)
	if err != nil {
		t.Fatal(err)
	}
	client := dyn.Resource(kopfexamples)
	res := resources.Resource{Group: "kopf.dev", Version: "v1", Plural: "kopfexamples", Namespaced: true}
	f := &sharding.Fence{Identity: identity}
	w := f.Writer(schema.GroupResource{Group: "kopf.dev", Resource: "kopfexamples"},
		reactor.ClientPatcher{Resource: res, Client: client, REST: rc}, sharding.DynamicGetter{Client: client})
	return &replica{identity: identity, w: w}
}

// stamp takes the object over, as a new owner does before handling it.
func (r *replica) stamp(t *testing.T, name string) {
	t.Helper()
	if _, err := r.w.Stamp(context.Background(), namespace, name); err != nil {
		t.Fatalf("%s stamping %s: %v", r.identity, name, err)
	}
}

func (r *replica) merge(name, field string) error {
	patch := fmt.Appendf(nil, `{"spec":{%q:true}}`, field)
	_, err := r.w.Patch(context.Background(), namespace, name, types.MergePatchType, patch)
	return err
}

func (r *replica) mergeStatus(name, field string) error {
	patch := fmt.Appendf(nil, `{"status":{%q:true}}`, field)
	_, err := r.w.Patch(context.Background(), namespace, name, types.MergePatchType, patch, "status")
	return err
}

// A replica that has lost an object to another (which stamped it) cannot
// write it any more, whatever it believes: its merge patches (object and
// status) and its JSON patches are rejected by the API server; the new
// owner's writes pass, also after a third party's write in between.
func TestStaleOwnerWriteIsRejected(t *testing.T) {
	c := startCluster(t)
	plain := dynamic.NewForConfigOrDie(c.Config).Resource(kopfexamples).Namespace(namespace)
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kopf.dev/v1", "kind": "KopfExample",
		"metadata": map[string]any{"name": "fenced"}, "spec": map[string]any{},
	}}
	if _, err := plain.Create(context.Background(), obj, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	a, b := newReplica(t, c.Config, "replica-a"), newReplica(t, c.Config, "replica-b")
	spec := func() map[string]any {
		t.Helper()
		got, err := plain.Get(context.Background(), "fenced", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return got.Object
	}

	if err := a.merge("fenced", "unowned"); !apierrors.IsConflict(err) {
		t.Errorf("a write before any stamp: got %v, want a conflict (the object is nobody's)", err)
	}
	a.stamp(t, "fenced")
	if err := a.merge("fenced", "byA"); err != nil {
		t.Fatalf("the owner's write failed: %v", err)
	}
	if err := a.mergeStatus("fenced", "byA"); err != nil {
		t.Fatalf("the owner's status write failed: %v", err)
	}

	b.stamp(t, "fenced") // b takes over; a does not know yet
	if err := a.merge("fenced", "staleA"); !apierrors.IsConflict(err) {
		t.Errorf("the stale owner's merge patch: got %v, want a conflict", err)
	}
	if err := a.mergeStatus("fenced", "staleA"); !apierrors.IsConflict(err) {
		t.Errorf("the stale owner's status patch: got %v, want a conflict", err)
	}
	// A JSON patch guarded by the current resourceVersion (as the
	// finalizer's) fails on the stamp's test alone.
	rv, _, _ := unstructured.NestedString(spec(), "metadata", "resourceVersion")
	ops := fmt.Appendf(nil, `[{"op":"test","path":"/metadata/resourceVersion","value":%q},{"op":"add","path":"/spec/staleJSON","value":true}]`, rv)
	if _, err := a.w.Patch(context.Background(), namespace, "fenced", types.JSONPatchType, ops); err == nil {
		t.Errorf("the stale owner's JSON patch was accepted")
	}
	for _, field := range []string{"staleA", "staleJSON", "unowned"} {
		if _, found, _ := unstructured.NestedFieldNoCopy(spec(), "spec", field); found {
			t.Errorf("spec.%s was written by a stale owner", field)
		}
	}
	if _, found, _ := unstructured.NestedFieldNoCopy(spec(), "status", "staleA"); found {
		t.Errorf("status.staleA was written by a stale owner")
	}

	// The owner's writes pass, also when someone else wrote meanwhile
	// (its known version is then stale: it is read again).
	if err := b.merge("fenced", "byB"); err != nil {
		t.Fatalf("the new owner's write failed: %v", err)
	}
	if _, err := plain.Patch(context.Background(), "fenced", types.MergePatchType, []byte(`{"spec":{"byUser":true}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := b.merge("fenced", "byBAfterUser"); err != nil {
		t.Fatalf("the owner's write after a user's write failed: %v", err)
	}
	got := spec()
	for _, field := range []string{"byA", "byB", "byUser", "byBAfterUser"} {
		if v, _, _ := unstructured.NestedBool(got, "spec", field); !v {
			t.Errorf("spec.%s is missing: %v", field, got["spec"])
		}
	}
	if owner, _, _ := unstructured.NestedString(got, "metadata", "annotations", sharding.DefaultAnnotation); owner != "replica-b" {
		t.Errorf("the stamp is %q, want replica-b", owner)
	}
}
