package reliability_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/kopf-go/kopf"
	"github.com/kopf-go/kopf/e2e/cluster"
	"github.com/kopf-go/kopf/kopftest"
	"github.com/kopf-go/kopf/runtime/causes"
	"github.com/kopf-go/kopf/runtime/kwargs"
)

// An object whose diff-base cannot be stored (its essence, a spec of
// 300 KiB, exceeds the 256 KiB limit on all annotations together): the
// operator says why in a clear error, does not loop on it, and keeps
// serving other objects.
//
// The handler returns a new value on every invocation, as handlers that
// create children and return their names or uids do (Kopf's 02-children
// example): a loop on the object would show as ever more invocations.
func TestOversizedDiffBase(t *testing.T) {
	t.Parallel()
	ns := namespace(t, "oversized")
	ri := objects(shared.Config, ns)
	var rec calls
	var seq atomic.Int64
	fn := rec.recording("create_fn", func(_ context.Context, kw *kwargs.Changing) (any, error) {
		return map[string]any{"children": []any{fmt.Sprintf("child-%d", seq.Add(1))}}, nil
	})
	op := kopftest.Start(t, shared.Config, register(handler("create_fn", fn, causes.Create)), kopf.WithNamespaces(ns))

	blob := strings.Repeat("x", 300*1024)
	create(t, ri, example("huge", map[string]any{"blob": blob}, nil, nil))
	op.WaitLog(fmt.Sprintf("[%s/huge] The object cannot be patched", ns), 30*time.Second)
	logs := op.Logs()
	if !strings.Contains(logs, "annotations: Too long") || !strings.Contains(logs, "does not fit into annotations") {
		t.Errorf("the error does not say that the annotations are too long and why")
	}

	// Bounded: a few seconds later, the handler has not been run again and
	// again. (One re-run is tolerable: the object did change, by the
	// handler's own result.)
	time.Sleep(5 * time.Second)
	n := len(rec.of("create_fn", "huge"))
	if n > 2 {
		t.Errorf("create_fn ran %d times in ~5 s for the object whose diff-base does not fit: the operator loops on it", n)
	}
	errors := strings.Count(op.Logs(), fmt.Sprintf("[%s/huge] The object cannot be patched", ns))
	t.Logf("create_fn ran %d times for huge; the error was logged %d times", n, errors)

	// Not crashed, not stuck: another object is handled.
	create(t, ri, example("normal", nil, nil, nil))
	waitHandled(t, ri, "normal", 30*time.Second, "create_fn")

	// Nothing half-written is left on the huge object either: no progress.
	obj, err := ri.Get(context.Background(), "huge", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := leftovers(obj); len(got) != 0 {
		t.Errorf("huge: progress left behind: %v", got)
	}
}

// The same object, with the diff-base kept in the status
// (kopf.StatusDiffBaseStorage, as the error above advises): it is handled,
// and its next change runs the update handler once, diffed against the
// 300 KiB essence in the status.
func TestOversizedDiffBaseInStatus(t *testing.T) {
	t.Parallel()
	ns := namespace(t, "oversized-status")
	ri := objects(shared.Config, ns)
	var rec calls
	s := fastSettings()
	s.Persistence.DiffBaseStorage = &kopf.StatusDiffBaseStorage{}
	op := kopftest.Start(t, shared.Config, register(
		handler("create_fn", rec.recording("create_fn", message("created")), causes.Create),
		handler("update_fn", rec.recording("update_fn", message("updated")), causes.Update),
	), kopf.WithNamespaces(ns), withSettings(s))

	blob := strings.Repeat("x", 300*1024)
	create(t, ri, example("huge", map[string]any{"blob": blob, "field": "v1"}, nil, nil))
	stored := func(obj *unstructured.Unstructured, id string) bool {
		raw, _, _ := unstructured.NestedString(obj.Object, "status", "kopf", "last-handled-configuration")
		_, done, _ := unstructured.NestedFieldNoCopy(obj.Object, "status", id)
		return done && strings.Contains(raw, blob) && len(leftovers(obj)) == 0
	}
	waitObject(t, ri, "huge", 30*time.Second, func(obj *unstructured.Unstructured) bool { return stored(obj, "create_fn") })
	changed := time.Now()
	patch := []byte(`{"spec":{"field":"v2"}}`)
	if _, err := ri.Patch(context.Background(), "huge", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	waitObject(t, ri, "huge", 30*time.Second, func(obj *unstructured.Unstructured) bool { return stored(obj, "update_fn") })
	recovery := time.Since(changed)
	if n, m := len(rec.of("create_fn", "huge")), len(rec.of("update_fn", "huge")); n != 1 || m != 1 {
		t.Errorf("create_fn ran %d times, update_fn %d times, want once each", n, m)
	}
	if calls := rec.of("update_fn", "huge"); len(calls) == 1 && !strings.Contains(calls[0].Diff, "field") {
		t.Errorf("update_fn's diff: %s", calls[0].Diff)
	}
	if strings.Contains(op.Logs(), "cannot be patched") {
		t.Errorf("a patch was rejected with the diff-base in the status")
	}
	t.Logf("size: a 300 KiB essence, diff-base in the status: handled; the update handled in %s", recovery.Round(time.Millisecond))
}

// An object of about 1.4 MiB (near etcd's 1.5 MiB request limit), its
// bulk in the status written by another controller, is handled with
// Kopf's default settings: created, then changed, each handler once.
func TestHugeObject(t *testing.T) {
	t.Parallel()
	ns := namespace(t, "huge-object")
	ri := objects(shared.Config, ns)
	var rec calls
	kopftest.Start(t, shared.Config, register(
		handler("create_fn", rec.recording("create_fn", message("created")), causes.Create),
		handler("update_fn", rec.recording("update_fn", message("updated")), causes.Update),
	), kopf.WithNamespaces(ns))

	const size = 1400 * 1024
	create(t, ri, example("huge", map[string]any{"field": "v1"}, nil, nil))
	report, _ := json.Marshal(map[string]any{"status": map[string]any{"report": strings.Repeat("y", size)}})
	if _, err := ri.Patch(context.Background(), "huge", types.MergePatchType, report, metav1.PatchOptions{}, "status"); err != nil {
		t.Fatalf("writing the 1.4 MiB status: %v", err)
	}
	big := func(obj *unstructured.Unstructured) bool {
		r, _, _ := unstructured.NestedString(obj.Object, "status", "report")
		return len(r) == size
	}
	obj := waitHandled(t, ri, "huge", 60*time.Second, "create_fn")
	changed := time.Now()
	if _, err := ri.Patch(context.Background(), "huge", types.MergePatchType, []byte(`{"spec":{"field":"v2"}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	obj = waitHandled(t, ri, "huge", 60*time.Second, "update_fn")
	recovery := time.Since(changed)
	if !big(obj) {
		t.Errorf("the 1.4 MiB status report is gone")
	}
	if n, m := len(rec.of("create_fn", "huge")), len(rec.of("update_fn", "huge")); n != 1 || m != 1 {
		t.Errorf("create_fn ran %d times, update_fn %d times, want once each", n, m)
	}
	data, _ := json.Marshal(obj.Object)
	t.Logf("size: an object of %.2f MiB handled; its update handled in %s", float64(len(data))/(1<<20), recovery.Round(time.Millisecond))
}

// waitObject waits until cond holds for the object.
func waitObject(t *testing.T, ri dynamic.ResourceInterface, name string, timeout time.Duration, cond func(*unstructured.Unstructured) bool) *unstructured.Unstructured {
	t.Helper()
	var obj *unstructured.Unstructured
	err := cluster.WaitFor(context.Background(), timeout, func(ctx context.Context) (bool, error) {
		var err error
		obj, err = ri.Get(ctx, name, metav1.GetOptions{})
		return err == nil && cond(obj), err
	})
	if err != nil {
		t.Fatalf("%s: not as expected in %s: %v\nlast seen: %s", name, timeout, err, dump(obj))
	}
	return obj
}
