package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kopf-go/kopf/envtest"
	"github.com/kopf-go/kopf/examples"
	"github.com/kopf-go/kopf/kopftest"
)

const (
	name = "kopf-example-1"
	ref  = "[default/kopf-example-1] "
	// grace is how long the test waits to see that the operator does NOT
	// write to the object after handling an event.
	grace = 2 * time.Second
)

// Every kind of raw event (creation, modification, listing at start,
// deletion) reaches the event handlers once; the failing one is logged and
// ignored, never retried; and the operator never writes to the object.
func TestEvents(t *testing.T) {
	ctx := context.Background()
	c := examples.StartCluster(t)
	objs := kopftest.NewObjects(t, c.Config, examples.KopfExamples, "default")

	// Creation.
	op := kopftest.Start(t, c.Config, Register)
	created, err := envtest.Apply(ctx, c.Config, examples.Object)
	if err != nil {
		t.Fatal(err)
	}
	rv := created[0].GetResourceVersion()
	op.WaitLog(ref+"Event received: type=ADDED, name=kopf-example-1", 30*time.Second)
	untouched(t, objs, rv)

	// Modification: our own patch is the only write.
	rv = objs.MergePatch(name, map[string]any{"spec": map[string]any{"field": "changed"}}).GetResourceVersion()
	op.WaitLog(ref+"Event received: type=MODIFIED, name=kopf-example-1", 10*time.Second)
	untouched(t, objs, rv)
	op.Stop()
	checkEvents(t, op, map[string]int{"ADDED": 1, "MODIFIED": 1})

	// Listing: a restarted operator sees the object in its first listing,
	// an event of type None.
	op2 := kopftest.Start(t, c.Config, Register)
	op2.WaitLog(ref+"Event received: type=None, name=kopf-example-1", 30*time.Second)
	untouched(t, objs, rv)

	// Deletion: nothing holds the object, so it goes at once.
	objs.Delete(name, 10*time.Second)
	op2.WaitLog(ref+"Event received: type=DELETED, name=kopf-example-1", 10*time.Second)
	op2.Stop()
	checkEvents(t, op2, map[string]int{"None": 1, "DELETED": 1})

	for _, logs := range []string{op.Logs(), op2.Logs()} {
		// "Deleted, really deleted": as Kopf, only for resources with
		// changing handlers.
		for _, text := range []string{"Adding the finalizer", "is in progress", "is processed", "Patching", "Sleeping", "really deleted"} {
			if strings.Contains(logs, text) {
				t.Errorf("the operator did more than watch: it logged %q", text)
			}
		}
	}
}

// checkEvents checks that the log has exactly these events (by type, with
// their counts), each handled once by both handlers: the failing one
// logged and ignored, never retried.
func checkEvents(t *testing.T, op *kopftest.Operator, want map[string]int) {
	t.Helper()
	total := 0
	for typ, n := range want {
		total += n
		if got := op.CountLog(ref + "Event received: type=" + typ + ", name=kopf-example-1"); got != n {
			t.Errorf("events of type %s: %d, want %d", typ, got, n)
		}
	}
	for text, n := range map[string]int{
		ref + "Event received: ":                                                                 total,
		ref + "Handler 'normal_event_fn' is invoked.":                                            total,
		ref + "Handler 'normal_event_fn' succeeded.":                                             total,
		ref + "Handler 'event_fn_with_error' is invoked.":                                        total,
		ref + "Handler 'event_fn_with_error' failed with an exception and will ignore it: Oops!": total,
		"Handler 'event_fn_with_error' succeeded.":                                               0,
		"will try again": 0,
	} {
		if got := op.CountLog(text); got != n {
			t.Errorf("%q is logged %d times, want %d", text, got, n)
		}
	}
}

// untouched checks, after a grace period, that the object is still at the
// resourceVersion rv (nobody wrote to it) and carries nothing of Kopf's.
func untouched(t *testing.T, objs *kopftest.Objects, rv string) {
	t.Helper()
	time.Sleep(grace)
	obj := objs.Get(name)
	if got := obj.GetResourceVersion(); got != rv {
		t.Errorf("the operator wrote to the object: resourceVersion %s -> %s: %v", rv, got, obj.Object)
	}
	noKopf(t, obj)
}

func noKopf(t *testing.T, obj *unstructured.Unstructured) {
	t.Helper()
	for key := range obj.GetAnnotations() {
		if strings.Contains(key, "kopf.zalando.org") {
			t.Errorf("Kopf's annotation on the object: %s", key)
		}
	}
	if f := obj.GetFinalizers(); len(f) != 0 {
		t.Errorf("finalizers on the object: %v", f)
	}
	if status, ok := obj.Object["status"]; ok {
		t.Errorf("status on the object: %v", status)
	}
}
