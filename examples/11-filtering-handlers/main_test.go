package main

import (
	"context"
	"fmt"
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
)

// handler is one handler of the example: its id, the line it logs, and
// whether its filters match ../obj.yaml (for creation) or the test's patch
// of spec.field from value to changed (for update).
type handler struct {
	id    string
	line  string
	match bool
}

var creation = []handler{
	{"create_with_labels_matching", "Label is matching.", true},
	{"create_with_labels_mismatching", "Label is mismatching.", false},
	{"create_with_labels_present", "Label is present.", true},
	{"create_with_labels_not_present", "Label is not present.", false},
	{"create_with_labels_absent", "Label is absent.", true},
	{"create_with_labels_not_absent", "Label is not absent.", false},
	{"create_with_labels_callback_matching", "Label callback matching.", true},
	{"create_with_labels_callback_mismatching", "Label callback mismatch.", false},
	{"create_with_annotations_matching", "Annotation is matching.", true},
	{"create_with_annotations_mismatching", "Annotation is mismatching.", false},
	{"create_with_annotations_present", "Annotation is present.", true},
	{"create_with_annotations_not_present", "Annotation is not present.", false},
	{"create_with_annotations_absent", "Annotation is absent.", true},
	{"create_with_annotations_not_absent", "Annotation is not absent.", false},
	{"create_with_annotations_callback_matching", "Annotation callback matching.", true},
	{"create_with_annotations_callback_mismatching", "Annotation callback mismatch.", false},
	{"create_with_filter_satisfied", "Filter satisfied.", true},
	{"create_with_filter_not_satisfied", "Filter not satisfied.", false},
	{"create_with_field_value_satisfied/spec.field", "Field value is satisfied.", true},
	{"create_with_field_value_not_satisfied/spec.field", "Field value is not satisfied.", false},
	{"create_with_field_presence_satisfied/spec.field", "Field presence is satisfied.", true},
	{"create_with_field_presence_not_satisfied/spec.inexistent", "Field presence is not satisfied.", false},
	{"create_with_field_absence_satisfied/spec.inexistent", "Field absence is satisfied.", true},
	{"create_with_field_absence_not_satisfied/spec.field", "Field absence is not satisfied.", false},
}

var update = []handler{
	{"update_with_field_change_satisfied/spec.field", "Field change is satisfied.", true},
	{"update_with_field_change_not_satisfied/spec.field", "Field change is not satisfied.", false},
}

// daemons match spec.field=value: from the creation until the update.
var daemons = []handler{
	{"daemon_with_field/spec.field", "Field daemon is satisfied.", true},
	{"daemon_with_field_not_satisfied/spec.field", "Field daemon is not satisfied.", false},
}

// As Kopf's own end-to-end run of this example: create the object, patch
// spec.field from value to changed, delete; exactly the handlers whose
// filters match run, once each, and the others leave no trace at all. The
// daemon of spec.field=value runs, holding the finalizer, from the
// creation until the update, which stops it and releases the object.
func TestFilteringHandlers(t *testing.T) {
	all := append(append(append([]handler{}, creation...), update...), daemons...)
	// The checks below look for ids and lines as substrings: none may
	// contain another.
	for _, a := range all {
		for _, b := range all {
			if a != b && (strings.Contains(a.id, b.id) || strings.Contains(a.line, b.line)) {
				t.Fatalf("ambiguous test data: %v contains %v", a, b)
			}
		}
	}

	ctx := context.Background()
	env := envtest.Start(t, envtest.WithCRDs("../crd.yaml"))
	objs := kopftest.NewObjects(t, env.Config, examples.KopfExamples, "default")
	op := kopftest.Start(t, env.Config, Register)
	if err := env.Apply(ctx, examples.Object); err != nil {
		t.Fatal(err)
	}

	// Creation.
	matching := 0
	for _, h := range creation {
		if h.match {
			matching++
		}
	}
	op.WaitLog(ref+fmt.Sprintf("Creation is processed: %d succeeded; 0 failed.", matching), 60*time.Second)
	obj := objs.WaitFor(name, 10*time.Second, func(o *unstructured.Unstructured) bool {
		_, stored := o.GetAnnotations()["kopf.zalando.org/last-handled-configuration"]
		return stored
	})
	for _, h := range creation {
		checkRan(t, op, obj, h)
	}
	// The daemon of spec.field=value runs, and holds the finalizer.
	op.WaitLog(ref+daemons[0].line, 10*time.Second)
	if f := obj.GetFinalizers(); len(f) != 1 {
		t.Errorf("finalizers while the daemon runs: %v, want Kopf's", f)
	}

	// Update: only the handler of this very change of spec.field runs.
	objs.MergePatch(name, map[string]any{"spec": map[string]any{"field": "changed"}})
	op.WaitLog(ref+"Updating is processed: 1 succeeded; 0 failed.", 30*time.Second)
	obj = objs.WaitFor(name, 10*time.Second, func(o *unstructured.Unstructured) bool {
		_, ok, _ := unstructured.NestedMap(o.Object, "status", update[0].id)
		return ok
	})
	for _, h := range update {
		checkRan(t, op, obj, h)
	}
	// The creation handlers do not run again, and run nowhere else.
	for _, h := range creation {
		checkRan(t, op, obj, h)
	}
	// The daemon no longer matches: it is stopped, once, for that reason.
	stopped := op.WaitOutcome(kopftest.Match{Name: name, Handler: daemons[0].id, Cause: kopftest.CauseDaemon}, 10*time.Second)
	if stopped.Result != kopftest.Succeeded {
		t.Errorf("the daemon ended with %v, want a success (it returns when kw.Stopped is done)", stopped)
	}
	op.WaitLog(ref+"Daemon '"+daemons[0].id+"' has exited on request and will not be retried or restarted.", 10*time.Second)
	if n := len(op.Outcomes(kopftest.Match{Handler: daemons[0].id})); n != 1 {
		t.Errorf("the daemon ended %d times, want once", n)
	}

	// Deletion: no delete handlers and no daemon running any more, so no
	// finalizer holds the object.
	obj = objs.WaitFor(name, 10*time.Second, func(o *unstructured.Unstructured) bool { return len(o.GetFinalizers()) == 0 })
	objs.Delete(name, 10*time.Second)
	op.WaitLog(ref+"Deleted, really deleted, and we are notified.", 10*time.Second)
	if err := op.Stop(); err != nil {
		t.Errorf("the operator: %v", err)
	}
	logs := op.Logs()
	for _, h := range all {
		if !h.match && strings.Contains(logs, h.id) {
			t.Errorf("the non-matching handler %s appears in the log", h.id)
		}
	}
	if n := op.CountLog(" is processed: "); n != 2 {
		t.Errorf("%d causes are processed, want 2 (creation, update)", n)
	}
}

// checkRan checks that a handler ran exactly once if it matches (its line
// logged, its success logged, its result in status.<id>) and never
// otherwise (its id nowhere in the log, no status.<id>).
func checkRan(t *testing.T, op *kopftest.Operator, obj *unstructured.Unstructured, h handler) {
	t.Helper()
	msg, found, _ := unstructured.NestedString(obj.Object, "status", h.id, "message")
	if !h.match {
		if n := op.CountLog(h.line); n != 0 {
			t.Errorf("%s ran: %q is logged %d times", h.id, h.line, n)
		}
		if n := op.CountLog(h.id); n != 0 {
			t.Errorf("%s appears in the log %d times", h.id, n)
		}
		if found {
			t.Errorf("status.%s is written: %q", h.id, msg)
		}
		return
	}
	if n := op.CountLog(ref + h.line); n != 1 {
		t.Errorf("%s: %q is logged %d times, want once", h.id, h.line, n)
	}
	if n := op.CountLog(ref + "Handler '" + h.id + "' succeeded."); n != 1 {
		t.Errorf("%s succeeded %d times, want once", h.id, n)
	}
	if msg != h.line {
		t.Errorf("status.%s.message = %q (found: %v), want %q", h.id, msg, found, h.line)
	}
}
