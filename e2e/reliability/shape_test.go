package reliability_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kopf-go/kopf"
	"github.com/kopf-go/kopf/kopftest"
	"github.com/kopf-go/kopf/runtime/causes"
	"github.com/kopf-go/kopf/runtime/kwargs"
	"github.com/kopf-go/kopf/runtime/registry"
)

// widget is a Go type of KopfExample objects whose spec has an int.
type widget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              struct {
		Replicas int `json:"replicas"`
	} `json:"spec"`
}

// An object whose fields do not fit the handlers' Go type (a string where
// it has an int; the KopfExample CRD keeps unknown fields, so the API
// server lets it in) fails that object's typed handlers, once per change,
// with an error that names the field, while other objects are handled;
// once fixed, the object's next change is handled.
func TestShapeMismatch(t *testing.T) {
	t.Parallel()
	ns := namespace(t, "shape")
	ri := objects(shared.Config, ns)
	typed := func(id string, reasons ...causes.Reason) registry.ChangingHandler {
		return handler(id, registry.TypedChangingFunc(func(_ context.Context, kw kwargs.TypedChanging[widget]) (any, error) {
			return map[string]any{"replicas": kw.Object.Spec.Replicas}, nil
		}), reasons...)
	}
	op := kopftest.Start(t, shared.Config, register(typed("create_fn", causes.Create), typed("update_fn", causes.Update)), kopf.WithNamespaces(ns))

	create(t, ri, example("bad", map[string]any{"replicas": "three"}, nil, nil))
	for i := range 5 {
		create(t, ri, example(fmt.Sprintf("good-%d", i), map[string]any{"replicas": i}, nil, nil))
	}
	failed := op.WaitOutcome(kopftest.Match{Name: "bad", Handler: "create_fn"}, 30*time.Second)
	const named = "decoding the object as reliability_test.widget: field spec.replicas holds a string, not int"
	if failed.Result != kopftest.Failed || !strings.Contains(failed.Message, named) {
		t.Errorf("bad's create_fn: %s, want a permanent failure naming the field (%q)", failed, named)
	}
	op.WaitLog(fmt.Sprintf("[%s/bad] Handler 'create_fn' failed permanently: %s", ns, named), 5*time.Second)
	for i := range 5 {
		obj := waitHandled(t, ri, fmt.Sprintf("good-%d", i), 30*time.Second, "create_fn")
		if got := fmt.Sprint(obj.Object["status"].(map[string]any)["create_fn"]); got != fmt.Sprintf("map[replicas:%d]", i) {
			t.Errorf("good-%d: status.create_fn is %s", i, got)
		}
	}
	// The failure is final for the change: the diff-base is stored, no
	// progress is left, nothing is retried.
	waitHandled(t, ri, "bad", 30*time.Second)

	// Another bad change: update_fn fails once; then a good one: it succeeds.
	change := func(replicas any) {
		t.Helper()
		patch := fmt.Sprintf(`{"spec":{"replicas":%q}}`, replicas)
		if n, ok := replicas.(int); ok {
			patch = fmt.Sprintf(`{"spec":{"replicas":%d}}`, n)
		}
		if _, err := ri.Patch(context.Background(), "bad", types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	change("four")
	op.WaitOutcome(kopftest.Match{Name: "bad", Handler: "update_fn", Result: kopftest.Failed}, 30*time.Second)
	waitHandled(t, ri, "bad", 30*time.Second)
	fixed := time.Now()
	change(4)
	op.WaitOutcome(kopftest.Match{Name: "bad", Handler: "update_fn", Result: kopftest.Succeeded}, 30*time.Second)
	obj := waitHandled(t, ri, "bad", 30*time.Second, "update_fn")
	recovery := time.Since(fixed)
	if got := fmt.Sprint(obj.Object["status"].(map[string]any)["update_fn"]); got != "map[replicas:4]" {
		t.Errorf("bad: status.update_fn is %s", got)
	}

	// Once per change: one failure per bad change, no retries, no re-runs.
	var attempts []string
	for _, o := range op.Outcomes(kopftest.Match{Name: "bad"}) {
		attempts = append(attempts, fmt.Sprintf("%s %s %s", o.Handler, o.Cause, o.Result))
	}
	if want := "create_fn create failed, update_fn update failed, update_fn update succeeded"; strings.Join(attempts, ", ") != want {
		t.Errorf("bad's attempts: %s\nwant: %s", strings.Join(attempts, ", "), want)
	}
	if n := len(op.Outcomes(kopftest.Match{Handler: "create_fn", Result: kopftest.Succeeded})); n != 5 {
		t.Errorf("create_fn succeeded %d times, want 5 (once per good object)", n)
	}
	t.Logf("shape: 1 bad object, 5 good; attempts of the bad one: %s; recovery (fixed to handled): %s", strings.Join(attempts, ", "), recovery.Round(time.Millisecond))
}
