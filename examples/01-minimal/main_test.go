package main

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/kopf-go/kopf/e2e/cluster"
	"github.com/kopf-go/kopf/envtest"
	"github.com/kopf-go/kopf/examples"
	"github.com/kopf-go/kopf/kopftest"
)

var kopfexamples = schema.GroupVersionResource{Group: "kopf.dev", Version: "v1", Resource: "kopfexamples"}

// The diff-base that Kopf 1.44 writes for ../obj.yaml (kopf-wire-format.md).
const kopfDiffBase = `{"spec":{"duration":"1m","field":"value","items":["item1","item2"]},"metadata":{"labels":{"somelabel":"somevalue"},"annotations":{"someannotation":"somevalue"}}}` + "\n"

func TestMinimal(t *testing.T) {
	ctx := context.Background()
	c := examples.StartCluster(t)
	dyn := dynamic.NewForConfigOrDie(c.Config)
	objects := dyn.Resource(kopfexamples).Namespace("default")

	op := kopftest.Start(t, c.Config, Register)
	if _, err := envtest.Apply(ctx, c.Config, examples.Object); err != nil {
		t.Fatal(err)
	}

	var obj *unstructured.Unstructured
	err := cluster.WaitFor(ctx, 30*time.Second, func(ctx context.Context) (bool, error) {
		var err error
		obj, err = objects.Get(ctx, "kopf-example-1", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		// With the status subresource, the result and the diff-base are two
		// writes (status first): wait for both.
		msg, _, _ := unstructured.NestedString(obj.Object, "status", "create_fn", "message")
		_, stored := obj.GetAnnotations()["kopf.zalando.org/last-handled-configuration"]
		return msg == "hello world" && stored, nil
	})
	if err != nil {
		t.Fatalf("status.create_fn.message never became %q with the diff-base stored: %v", "hello world", err)
	}

	// The diff-base is Kopf's, byte for byte: compact JSON in the key order
	// of Kopf's essence, with a trailing newline.
	if got := obj.GetAnnotations()["kopf.zalando.org/last-handled-configuration"]; got != kopfDiffBase {
		t.Errorf("the diff-base differs from Kopf's:\n got: %q\nwant: %q", got, kopfDiffBase)
	}
	// A single successful cycle leaves no progress and no finalizer.
	for key := range obj.GetAnnotations() {
		if strings.HasPrefix(key, "kopf.zalando.org/") && key != "kopf.zalando.org/last-handled-configuration" {
			t.Errorf("unexpected annotation left behind: %s", key)
		}
	}
	if len(obj.GetFinalizers()) != 0 {
		t.Errorf("unexpected finalizers: %v", obj.GetFinalizers())
	}
	op.WaitLog("[default/kopf-example-1] Handler 'create_fn' succeeded.", 5*time.Second)
	op.WaitLog("[default/kopf-example-1] Creation is processed: 1 succeeded; 0 failed.", 5*time.Second)
	if n := op.CountLog("Handler 'create_fn' succeeded."); n != 1 {
		t.Errorf("the handler succeeded %d times, want once", n)
	}
	op.Stop()

	// After a restart, the object is seen in the initial listing, found
	// handled, and left alone: no handler, no write. As Kopf, the operator
	// logs the resuming cause (with no resume handlers to run), then ends
	// the cycle.
	rv := obj.GetResourceVersion()
	op2 := kopftest.Start(t, c.Config, Register)
	op2.WaitLog("[default/kopf-example-1] Resuming is in progress: {", 10*time.Second)
	op2.WaitLog("[default/kopf-example-1] Handling cycle is finished, waiting for new changes.", 10*time.Second)
	op2.Stop()
	if strings.Contains(op2.Logs(), "not interested") {
		t.Errorf("the object found at the start is logged as a change of no interest, not as resuming:\n%s", op2.Logs())
	}
	if strings.Contains(op2.Logs(), "Handler 'create_fn'") {
		t.Errorf("the handler ran again after the restart:\n%s", op2.Logs())
	}
	after, err := objects.Get(ctx, "kopf-example-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if after.GetResourceVersion() != rv {
		t.Errorf("the restarted operator wrote to the object: resourceVersion %s -> %s", rv, after.GetResourceVersion())
	}
}

// TestTakeoverFromKopf: this port names its handler as Kopf's example does
// (CreateFn → create_fn, no id=), so it takes over an object that Kopf's
// 01-minimal has handled — its diff-base and status.create_fn as Kopf
// wrote them — without running the handler again.
func TestTakeoverFromKopf(t *testing.T) {
	ctx := context.Background()
	c := examples.StartCluster(t)
	objects := dynamic.NewForConfigOrDie(c.Config).Resource(kopfexamples).Namespace("default")

	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kopf.dev/v1", "kind": "KopfExample",
		"metadata": map[string]any{
			"name":   "handled-by-kopf",
			"labels": map[string]any{"somelabel": "somevalue"},
			"annotations": map[string]any{
				"someannotation": "somevalue",
				"kopf.zalando.org/last-handled-configuration": kopfDiffBase,
			},
		},
		"spec": map[string]any{"duration": "1m", "field": "value", "items": []any{"item1", "item2"}},
	}}
	if _, err := objects.Create(ctx, obj, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	kopfStatus := []byte(`{"status":{"create_fn":{"message":"by kopf"}}}`)
	if _, err := objects.Patch(ctx, "handled-by-kopf", types.MergePatchType, kopfStatus, metav1.PatchOptions{}, "status"); err != nil {
		t.Fatal(err)
	}

	op := kopftest.Start(t, c.Config, Register)
	op.WaitLog("[default/handled-by-kopf] Handling cycle is finished, waiting for new changes.", 30*time.Second)
	// A new object is handled meanwhile: the operator is not idle by accident.
	if _, err := envtest.Apply(ctx, c.Config, examples.Object); err != nil {
		t.Fatal(err)
	}
	op.WaitLog("[default/kopf-example-1] Handler 'create_fn' succeeded.", 30*time.Second)
	op.Stop()

	if n := op.CountLog("[default/handled-by-kopf] Handler 'create_fn'"); n != 0 {
		t.Errorf("create_fn ran %d times for the object Kopf had handled, want 0", n)
	}
	got, err := objects.Get(ctx, "handled-by-kopf", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if msg, _, _ := unstructured.NestedString(got.Object, "status", "create_fn", "message"); msg != "by kopf" {
		t.Errorf("status.create_fn.message = %q, want Kopf's %q kept", msg, "by kopf")
	}
}
