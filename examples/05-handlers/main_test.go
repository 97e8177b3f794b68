package main

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/kopf-go/kopf/envtest"
	"github.com/kopf-go/kopf/examples"
	"github.com/kopf-go/kopf/kopftest"
)

const (
	name      = "kopf-example-1"
	ref       = "[default/kopf-example-1] "
	finalizer = "kopf.zalando.org/KopfFinalizerMarker"
	diffBase  = "kopf.zalando.org/last-handled-configuration"
)

// As Kopf's own end-to-end run of this example, and further: create the
// object, change spec.field, restart the operator, delete the object; each
// cause runs its handlers once each, in the order of their registration.
func TestHandlers(t *testing.T) {
	ctx := context.Background()
	c := examples.StartCluster(t)
	objs := kopftest.NewObjects(t, c.Config, examples.KopfExamples, "default")

	// Creation: the delete handlers need the finalizer, which is added in a
	// cycle of its own first; then both create handlers, in order.
	op := kopftest.Start(t, c.Config, Register)
	if _, err := envtest.Apply(ctx, c.Config, examples.Object); err != nil {
		t.Fatal(err)
	}
	op.WaitLog(ref+"Creation is processed: ", 30*time.Second)
	logs := op.Logs()
	inOrder(t, logs,
		ref+"Adding the finalizer, thus preventing the actual deletion.",
		ref+"CREATED 1st",
		ref+"Handler 'create_fn_1' succeeded.",
		ref+"CREATED 2nd",
		ref+"Handler 'create_fn_2' succeeded.",
		ref+"Creation is processed: ",
	)
	for _, line := range []string{"CREATED 1st", "CREATED 2nd"} {
		if n := op.CountLog(ref + line); n != 1 {
			t.Errorf("%q is logged %d times, want once", line, n)
		}
	}
	checkFieldHandlerOnCreation(t, logs)
	for _, line := range []string{"RESUMED", "UPDATED", "DELETED"} {
		if strings.Contains(logs, line) {
			t.Errorf("%q is logged on creation", line)
		}
	}

	obj := objs.WaitFor(name, 10*time.Second, func(o *unstructured.Unstructured) bool {
		_, stored := o.GetAnnotations()[diffBase]
		return stored
	})
	if got := obj.GetFinalizers(); !reflect.DeepEqual(got, []string{finalizer}) {
		t.Errorf("finalizers = %v, want [%s]", got, finalizer)
	}
	noProgress(t, obj)
	// The handlers return nothing, so nothing is written to the status.
	if status, ok := obj.Object["status"].(map[string]any); ok && len(status) > 0 {
		t.Errorf("the status is written to: %v", status)
	}
	if got := essenceField(t, obj); got != "value" {
		t.Errorf("the diff-base has spec.field %q, want %q", got, "value")
	}

	// Update: spec.field changes, so the update handler runs and then the
	// field handler, with Old and New reduced to the field.
	objs.MergePatch(name, map[string]any{"spec": map[string]any{"field": "changed"}})
	op.WaitLog(ref+"Updating is processed: 2 succeeded; 0 failed.", 30*time.Second)
	logs = op.Logs()
	const diff = "(('change', ('spec', 'field'), 'value', 'changed'),)"
	inOrder(t, logs,
		ref+"Updating diff: "+diff,
		ref+"UPDATED",
		ref+"UPDATED old: ",
		ref+"UPDATED new: ",
		ref+"UPDATED diff: "+diff,
		ref+"Handler 'update_fn' succeeded.",
		ref+"FIELD CHANGED: value -> changed",
		ref+"Handler 'field_fn/spec.field' succeeded.",
		ref+"Updating is processed: 2 succeeded; 0 failed.",
	)
	if old := lineAfter(logs, ref+"UPDATED old: "); !strings.Contains(old, `"field":"value"`) {
		t.Errorf("the old essence lacks spec.field=value: %s", old)
	}
	if newEssence := lineAfter(logs, ref+"UPDATED new: "); !strings.Contains(newEssence, `"field":"changed"`) {
		t.Errorf("the new essence lacks spec.field=changed: %s", newEssence)
	}
	for _, line := range []string{ref + "UPDATED diff: ", ref + "FIELD CHANGED: value -> changed"} {
		if n := op.CountLog(line); n != 1 {
			t.Errorf("%q is logged %d times, want once", line, n)
		}
	}
	obj = objs.WaitFor(name, 10*time.Second, func(o *unstructured.Unstructured) bool {
		return essenceField(t, o) == "changed"
	})
	noProgress(t, obj)
	op.Stop()
	if strings.Contains(op.Logs(), "RESUMED") {
		t.Errorf("the resume handlers ran for an object created while the operator runs")
	}

	// Restart: the object is found in the initial listing, already handled
	// and unchanged, so it is resumed: both resume handlers, in order, once.
	op2 := kopftest.Start(t, c.Config, Register)
	op2.WaitLog(ref+"Resuming is processed: 2 succeeded; 0 failed.", 30*time.Second)
	logs = op2.Logs()
	inOrder(t, logs,
		ref+"RESUMED 1st",
		ref+"Handler 'resume_fn_1' succeeded.",
		ref+"RESUMED 2nd",
		ref+"Handler 'resume_fn_2' succeeded.",
		ref+"Resuming is processed: 2 succeeded; 0 failed.",
	)
	for _, line := range []string{"CREATED", "UPDATED", "FIELD CHANGED", "DELETED", "Adding the finalizer"} {
		if strings.Contains(logs, line) {
			t.Errorf("%q is logged on resuming", line)
		}
	}
	obj = objs.WaitFor(name, 10*time.Second, func(o *unstructured.Unstructured) bool {
		return !hasProgress(o)
	})
	if got := obj.GetFinalizers(); !reflect.DeepEqual(got, []string{finalizer}) {
		t.Errorf("finalizers after resuming = %v, want [%s]", got, finalizer)
	}

	// Deletion: both delete handlers, in order, then the finalizer goes and
	// the object with it.
	objs.Delete(name, 30*time.Second)
	op2.WaitLog(ref+"Deleted, really deleted, and we are notified.", 10*time.Second)
	logs = op2.Logs()
	inOrder(t, logs,
		ref+"DELETED 1st",
		ref+"Handler 'delete_fn_1' succeeded.",
		ref+"DELETED 2nd",
		ref+"Handler 'delete_fn_2' succeeded.",
		ref+"Deletion is processed: 2 succeeded; 0 failed.",
		ref+"Removing the finalizer, thus allowing the actual deletion.",
		ref+"Deleted, really deleted, and we are notified.",
	)
	for _, line := range []string{"RESUMED 1st", "RESUMED 2nd", "DELETED 2nd"} {
		if n := op2.CountLog(ref + line); n != 1 {
			t.Errorf("%q is logged %d times, want once", line, n)
		}
	}
	checkDeletedOnce(t, op2)
	if strings.Contains(logs, "FIELD CHANGED") {
		t.Errorf("the field handler ran though spec.field did not change")
	}
}

// checkDeletedOnce checks that DeleteFn1 ran once: in particular, not
// again on a stale version of the object after the finalizer is removed.
func checkDeletedOnce(t *testing.T, op *kopftest.Operator) {
	t.Helper()
	if n := op.CountLog(ref + "DELETED 1st"); n != 1 {
		t.Errorf("%q is logged %d times, want once", "DELETED 1st", n)
	}
}

// checkFieldHandlerOnCreation checks what Kopf does with an on.field
// handler on creation: the field goes from absent to "value" (Kopf's diff
// of a new object is one "add" of the whole essence), so FieldFn runs
// after both create handlers, with old None.
func checkFieldHandlerOnCreation(t *testing.T, logs string) {
	t.Helper()
	inOrder(t, logs,
		ref+"Handler 'create_fn_2' succeeded.",
		ref+"FIELD CHANGED: None -> value",
		ref+"Handler 'field_fn/spec.field' succeeded.",
		ref+"Creation is processed: 3 succeeded; 0 failed.",
	)
}

// inOrder fails the test unless the log has the lines in this order.
func inOrder(t *testing.T, logs string, lines ...string) {
	t.Helper()
	pos := 0
	for _, line := range lines {
		i := strings.Index(logs[pos:], line)
		if i < 0 {
			t.Fatalf("the log lacks %q after position %d:\n%s", line, pos, logs)
		}
		pos += i + len(line)
	}
}

// lineAfter returns the rest of the first log line containing prefix.
func lineAfter(logs, prefix string) string {
	i := strings.Index(logs, prefix)
	if i < 0 {
		return ""
	}
	rest := logs[i+len(prefix):]
	if j := strings.IndexByte(rest, '\n'); j >= 0 {
		rest = rest[:j]
	}
	return rest
}

// essenceField returns spec.field of the stored diff-base ("" if none).
func essenceField(t *testing.T, obj *unstructured.Unstructured) string {
	t.Helper()
	raw, ok := obj.GetAnnotations()[diffBase]
	if !ok {
		return ""
	}
	var essence struct {
		Spec struct {
			Field string `json:"field"`
		} `json:"spec"`
	}
	if err := json.Unmarshal([]byte(raw), &essence); err != nil {
		t.Fatalf("the diff-base is not JSON: %v: %q", err, raw)
	}
	return essence.Spec.Field
}

// hasProgress reports whether any Kopf annotation other than the diff-base
// (a handler's progress record) is on the object.
func hasProgress(obj *unstructured.Unstructured) bool {
	for key := range obj.GetAnnotations() {
		if strings.HasPrefix(key, "kopf.zalando.org/") && key != diffBase {
			return true
		}
	}
	return false
}

func noProgress(t *testing.T, obj *unstructured.Unstructured) {
	t.Helper()
	for key := range obj.GetAnnotations() {
		if strings.HasPrefix(key, "kopf.zalando.org/") && key != diffBase {
			t.Errorf("progress left behind: %s", key)
		}
	}
}

// TestTakeoverMidCreationFromKopf: Kopf's 05-handlers stopped after
// create_fn_1 succeeded and before create_fn_2 ran (its record as Kopf
// writes it, the finalizer in place). This port, whose functions are named
// as Kopf's (CreateFn_1 → create_fn_1, no id=), takes the object over: it
// runs create_fn_2 and does not run create_fn_1 again.
func TestTakeoverMidCreationFromKopf(t *testing.T) {
	ctx := context.Background()
	c := examples.StartCluster(t)
	objects := dynamic.NewForConfigOrDie(c.Config).Resource(examples.KopfExamples).Namespace("default")

	started := time.Now().UTC().Add(-time.Minute)
	kopfTime := func(t time.Time) string { return t.Format("2006-01-02T15:04:05.000000") + "+00:00" }
	record := fmt.Sprintf(`{"started":"%s","stopped":"%s","purpose":"create","retries":1,"success":true,"failure":false}`,
		kopfTime(started), kopfTime(started.Add(100*time.Millisecond)))
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kopf.dev/v1", "kind": "KopfExample",
		"metadata": map[string]any{
			"name":       "half-created",
			"finalizers": []any{"kopf.zalando.org/KopfFinalizerMarker"},
			"labels":     map[string]any{"somelabel": "somevalue"},
			"annotations": map[string]any{
				"someannotation":               "somevalue",
				"kopf.zalando.org/create_fn_1": record,
			},
		},
		"spec": map[string]any{"duration": "1m", "field": "value", "items": []any{"item1", "item2"}},
	}}
	if _, err := objects.Create(ctx, obj, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	const half = "[default/half-created] "
	op := kopftest.Start(t, c.Config, Register)
	op.WaitLog(half+"Creation is processed: ", 30*time.Second)
	op.Stop()
	if n := op.CountLog(half + "Handler 'create_fn_1'"); n != 0 {
		t.Errorf("create_fn_1, done by Kopf, ran %d times, want 0", n)
	}
	if n := op.CountLog(half + "Handler 'create_fn_2' succeeded."); n != 1 {
		t.Errorf("create_fn_2 succeeded %d times, want once", n)
	}
	if n := op.CountLog(half + "CREATED 1st"); n != 0 {
		t.Errorf("create_fn_1's body ran %d times, want 0", n)
	}
	// Done: Kopf's record is purged with the others and the diff-base stored.
	got, err := objects.Get(ctx, "half-created", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, left := got.GetAnnotations()["kopf.zalando.org/create_fn_1"]; left {
		t.Errorf("Kopf's progress record of create_fn_1 is left: %v", got.GetAnnotations())
	}
	if _, stored := got.GetAnnotations()["kopf.zalando.org/last-handled-configuration"]; !stored {
		t.Errorf("no diff-base stored: %v", got.GetAnnotations())
	}
}
