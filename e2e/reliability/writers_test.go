package reliability_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"

	"github.com/kopf-go/kopf"
	"github.com/kopf-go/kopf/e2e/cluster"
	"github.com/kopf-go/kopf/kopftest"
	"github.com/kopf-go/kopf/runtime/causes"
	"github.com/kopf-go/kopf/runtime/execution"
	"github.com/kopf-go/kopf/runtime/kwargs"
)

// writerBackoff lets the other client retry its read-modify-write for
// seconds: the operator writes the same object several times per change
// (progress, status, diff-base), and on a loaded machine client-go's
// DefaultRetry (5 tries in about 50 ms) can lose every race to it.
var writerBackoff = wait.Backoff{Steps: 30, Duration: 10 * time.Millisecond, Factor: 1.5, Jitter: 0.5, Cap: time.Second}

// Another client changes labels, annotations and spec of an object in a
// loop, by merge patches and by read-modify-write updates, while the
// operator handles every change and writes status and its own annotations
// (progress records of a handler that asks to be retried, the diff-base).
// None of the other client's changes is lost, and the operator ends up
// having handled the final state.
func TestConcurrentWriter(t *testing.T) {
	t.Parallel()
	ns := namespace(t, "concurrent-writer")
	ri := objects(shared.Config, ns)
	var rec calls
	updateFn := rec.recording("update_fn", func(_ context.Context, kw *kwargs.Changing) (any, error) {
		if kw.Retry == 0 {
			// Progress annotations are written while the other client writes.
			return nil, execution.NewTemporaryError("Not yet.", 200*time.Millisecond)
		}
		return map[string]any{"counter": kw.Spec["counter"]}, nil
	})
	kopftest.Start(t, shared.Config, register(
		handler("create_fn", rec.recording("create_fn", message("created")), causes.Create),
		handler("update_fn", updateFn, causes.Update),
	), kopf.WithNamespaces(ns))

	ctx := context.Background()
	create(t, ri, example("contended", map[string]any{"counter": int64(0)}, nil, nil))

	const changes = 40
	for i := 1; i <= changes; i++ {
		label := fmt.Sprintf("writer-%d", i)
		if i%2 == 1 {
			patch, _ := json.Marshal(map[string]any{
				"metadata": map[string]any{
					"labels":      map[string]any{label: strconv.Itoa(i)},
					"annotations": map[string]any{"example.com/" + label: strconv.Itoa(i)},
				},
				"spec": map[string]any{"counter": i, label: i},
			})
			if _, err := ri.Patch(ctx, "contended", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
				t.Fatalf("change %d (merge patch): %v", i, err)
			}
		} else {
			err := retry.RetryOnConflict(writerBackoff, func() error {
				obj, err := ri.Get(ctx, "contended", metav1.GetOptions{})
				if err != nil {
					return err
				}
				labels := obj.GetLabels()
				if labels == nil {
					labels = map[string]string{}
				}
				labels[label] = strconv.Itoa(i)
				obj.SetLabels(labels)
				annotations := obj.GetAnnotations()
				if annotations == nil {
					annotations = map[string]string{}
				}
				annotations["example.com/"+label] = strconv.Itoa(i)
				obj.SetAnnotations(annotations)
				spec, _ := obj.Object["spec"].(map[string]any)
				spec["counter"] = int64(i)
				spec[label] = int64(i)
				_, err = ri.Update(ctx, obj, metav1.UpdateOptions{})
				return err
			})
			if err != nil {
				t.Fatalf("change %d (update): %v", i, err)
			}
		}
		time.Sleep(time.Duration(20+i%5*20) * time.Millisecond)
	}

	// The operator catches up: the diff-base is the essence of the final
	// state, and update_fn's last result is the final counter.
	var last map[string]any
	err := cluster.WaitFor(ctx, 30*time.Second, func(ctx context.Context) (bool, error) {
		obj, err := ri.Get(ctx, "contended", metav1.GetOptions{})
		if err != nil || !handled(obj, "create_fn", "update_fn") {
			return false, err
		}
		last = obj.Object
		base := diffBase(t, obj)
		counter, _, _ := unstructured.NestedFieldNoCopy(obj.Object, "status", "update_fn", "counter")
		return mustJSON(base["spec"]) == mustJSON(obj.Object["spec"]) && fmt.Sprint(counter) == strconv.Itoa(changes), nil
	})
	if err != nil {
		t.Fatalf("the operator did not catch up with the final state: %v\nlast seen: %s", err, mustJSON(last))
	}

	obj, err := ri.Get(ctx, "contended", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	spec, _ := obj.Object["spec"].(map[string]any)
	for i := 1; i <= changes; i++ {
		label := fmt.Sprintf("writer-%d", i)
		if obj.GetLabels()[label] != strconv.Itoa(i) {
			t.Errorf("label %s of change %d is lost: labels are %v", label, i, obj.GetLabels())
		}
		if obj.GetAnnotations()["example.com/"+label] != strconv.Itoa(i) {
			t.Errorf("annotation example.com/%s of change %d is lost", label, i)
		}
		if fmt.Sprint(spec[label]) != strconv.Itoa(i) {
			t.Errorf("spec.%s of change %d is lost: spec is %v", label, i, spec)
		}
	}
	if fmt.Sprint(spec["counter"]) != strconv.Itoa(changes) {
		t.Errorf("spec.counter is %v, want %d", spec["counter"], changes)
	}
	base := diffBase(t, obj)
	baseLabels, _, _ := unstructured.NestedMap(base, "metadata", "labels")
	if len(baseLabels) != changes {
		t.Errorf("the diff-base has %d labels, want %d: %v", len(baseLabels), changes, baseLabels)
	}
	baseAnnotations, _, _ := unstructured.NestedMap(base, "metadata", "annotations")
	if len(baseAnnotations) != changes {
		t.Errorf("the diff-base has %d annotations, want %d (the writer's, not the operator's): %v", len(baseAnnotations), changes, baseAnnotations)
	}
	if got := leftovers(obj); len(got) != 0 {
		t.Errorf("progress left behind: %v", got)
	}
	if n := len(rec.of("create_fn", "contended")); n != 1 {
		t.Errorf("create_fn ran %d times, want 1", n)
	}
	calls := rec.of("update_fn", "contended")
	if len(calls) < 2 {
		t.Fatalf("update_fn ran %d times, want at least 2", len(calls))
	}
	if c := calls[len(calls)-1]; fmt.Sprint(c.Spec["counter"]) != strconv.Itoa(changes) {
		t.Errorf("update_fn last saw counter %v, want %d", c.Spec["counter"], changes)
	}
	t.Logf("update_fn ran %d times for %d changes", len(calls), changes)
}
