package peering

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kopf-go/kopf"
	"github.com/kopf-go/kopf/envtest"
	"github.com/kopf-go/kopf/kopftest"
	"github.com/kopf-go/kopf/runtime/peering"
)

// -P names a peering that must exist: while it is missing, the operator
// stays paused (Kopf 1.x); once it is created, the operator joins it and
// resumes. Without -P, a missing "default" peering means standalone.
func TestMandatoryAndDefault(t *testing.T) {
	t.Run("mandatory", func(t *testing.T) {
		ns := newNamespace(t, "mandatory")
		objs := kopftest.NewObjects(t, shared.Config, examples, ns)
		op := kopftest.Start(t, shared.Config, register(nil), peered(ns, "later", 0, "kopf-go-mandatory")...)
		op.WaitLog(`The peering "later" is not found, but it is mandatory: the operator is paused until it appears.`, 30*time.Second)
		objs.Create(example("obj-1"))
		op.WaitLog("["+ns+"/obj-1] The operator is paused: the processing waits for the resume.", 30*time.Second)
		created := time.Now()
		newPeering(t, ns, "later")
		if o := op.WaitOutcome(kopftest.Match{Name: "obj-1", Handler: "create_fn", Result: kopftest.Succeeded}, 30*time.Second); o.Time.Before(created) {
			t.Errorf("obj-1 was handled at %s, before the peering was created at %s", o.Time, created)
		}
		waitFor(t, "the operator's record", 30*time.Second, func() bool { return rawRecord(t, ns, "later", "kopf-go-mandatory") != "" })
	})
	t.Run("default missing: standalone", func(t *testing.T) {
		ns := newNamespace(t, "standalone")
		objs := kopftest.NewObjects(t, shared.Config, examples, ns)
		opts := peered(ns, "", 0, "kopf-go-default")
		op := kopftest.Start(t, shared.Config, register(nil), opts...)
		op.WaitLog("Default peering object not found, falling back to the standalone mode.", 30*time.Second)
		objs.Create(example("obj-1"))
		op.WaitOutcome(kopftest.Match{Name: "obj-1", Handler: "create_fn", Result: kopftest.Succeeded}, 30*time.Second)
	})
}

// Where the legacy zalando.org/v1 peering resource is served too, both
// are used (Kopf's note): a Kopf peer's record in the zalando.org object
// pauses the kopf-go operator, which keeps its own record there.
func TestLegacyGroup(t *testing.T) {
	crd := []byte(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: clusterkopfpeerings.zalando.org
spec:
  scope: Cluster
  group: zalando.org
  names:
    kind: ClusterKopfPeering
    plural: clusterkopfpeerings
    singular: clusterkopfpeering
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          properties:
            status:
              type: object
              x-kubernetes-preserve-unknown-fields: true
`)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := envtest.Apply(ctx, shared.Config, crd); err != nil {
		t.Fatal(err)
	}
	legacy := schema.GroupVersionResource{Group: "zalando.org", Version: "v1", Resource: "clusterkopfpeerings"}
	ns := newNamespace(t, "legacy")
	name := ns // cluster-wide, but of this run only
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "zalando.org/v1", "kind": "ClusterKopfPeering", "metadata": map[string]any{"name": name}}}
	if _, err := client(t).Resource(legacy).Create(ctx, obj, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	clusterwide := true
	opts := append(peered(ns, name, 0, "kopf-go-legacy"), kopf.WithSettings(func(s *kopf.Settings) { s.Peering.Clusterwide = &clusterwide }))
	op := kopftest.Start(t, shared.Config, register(nil), opts...)
	record := func() map[string]any {
		got, err := client(t).Resource(legacy).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		rec, _, _ := unstructured.NestedMap(got.Object, "status", "kopf-go-legacy")
		return rec
	}
	waitFor(t, "kopf-go's record in zalando.org", 30*time.Second, func() bool { return record() != nil })
	now := peering.IsoFormat(time.Now().UTC())
	if _, err := client(t).Resource(legacy).Patch(ctx, name, "application/merge-patch+json",
		[]byte(`{"status": {"kopf-python": {"priority": 100, "lifetime": 60, "lastseen": "`+now+`"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	op.WaitLog("Pausing operations in favour of [<Peer kopf-python: priority=100, lifetime=60, lastseen='"+now+"'>].", 30*time.Second)
	if _, err := client(t).Resource(legacy).Patch(ctx, name, "application/merge-patch+json", []byte(`{"status": {"kopf-python": null}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	op.WaitLog("Resuming operations after the pause. Conflicting operators with the same priority are gone.", 30*time.Second)
	// Not paused by the kopf.dev resource, where no "legacy" object exists.
	kopftest.NewObjects(t, shared.Config, examples, ns).Create(example("obj-1"))
	op.WaitOutcome(kopftest.Match{Name: "obj-1", Handler: "create_fn", Result: kopftest.Succeeded}, 30*time.Second)
}
