package reliability_test

import (
	"context"
	"fmt"
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kopf-go/kopf"
	"github.com/kopf-go/kopf/kopftest"
	"github.com/kopf-go/kopf/runtime/causes"
	"github.com/kopf-go/kopf/runtime/filters"
	"github.com/kopf-go/kopf/runtime/kwargs"
	"github.com/kopf-go/kopf/runtime/registry"
	"github.com/kopf-go/kopf/runtime/resources"
)

// vandalize changes everything user code can reach of the object.
func vandalize(res *kwargs.Base) {
	res.Spec["field"] = "vandalized"
	res.Spec["items"] = []any{"vandalized"}
	res.Meta["annotations"] = map[string]any{diffBaseKey: `{"spec":{"field":"vandalized"}}`}
	res.Meta["labels"] = map[string]any{"vandalized": "yes"}
	res.Body["status"] = map[string]any{"vandalized": true}
	res.Labels["vandalized"] = "yes"
	res.Annotations[diffBaseKey] = "garbage"
}

// User code neither corrupts the operator's state nor crashes it: on.event
// handlers, when= and label callbacks and a creation handler that change
// every map they get cause no spurious update, and the diff-base stored is
// the object's own; callbacks that panic make their handlers not match,
// logged once per object and cause, while other objects are served.
func TestUserCodeIsolated(t *testing.T) {
	t.Parallel()
	ns := namespace(t, "user-code")
	ri := objects(shared.Config, ns)
	var rec calls
	var events atomic.Int64
	sel := resources.Selector{Name: "kopfexamples"}
	op := kopftest.Start(t, shared.Config, func(reg *registry.Registry) error {
		create := handler("create_fn", rec.recording("create_fn", func(_ context.Context, kw *kwargs.Changing) (any, error) {
			vandalize(&kw.Base)
			if m, ok := kw.New.(map[string]any); ok {
				m["spec"] = "vandalized"
			}
			return map[string]any{"message": "created"}, nil
		}), causes.Create)
		create.When = func(kw *kwargs.Changing) bool { vandalize(&kw.Base); return true }
		create.Filter.Labels = map[string]filters.Matcher{"app": filters.Func(func(_ any, _ bool, res *kwargs.Base) bool {
			vandalize(res)
			return true
		})}
		update := handler("update_fn", rec.recording("update_fn", message("updated")), causes.Update)
		// Evaluated in every cycle, for the finalizer: it panics each time.
		del := handler("delete_fn", message("deleted"), causes.Delete)
		del.When = func(kw *kwargs.Changing) bool { panic("when= exploded") }
		for _, h := range []registry.ChangingHandler{create, update, del} {
			if err := reg.AddChanging(h); err != nil {
				return err
			}
		}
		for _, h := range []registry.EventHandler{
			{ID: "event_fn", Selector: sel, Fn: func(_ context.Context, kw *kwargs.Event) error {
				events.Add(1)
				vandalize(&kw.Base)
				return nil
			}},
			{ID: "event_panics", Selector: sel, Fn: func(context.Context, *kwargs.Event) error { return nil },
				Filter: filters.Filter{Labels: map[string]filters.Matcher{"app": filters.Func(func(any, bool, *kwargs.Base) bool {
					panic("label callback exploded")
				})}}},
		} {
			if err := reg.AddEvent(h); err != nil {
				return err
			}
		}
		return nil
	}, kopf.WithNamespaces(ns))

	labels := map[string]string{"app": "demo"}
	create(t, ri, example("target", nil, labels, nil))
	obj := waitHandled(t, ri, "target", 30*time.Second, "create_fn")
	want := map[string]any{"spec": example("target", nil, nil, nil).Object["spec"], "metadata": map[string]any{"labels": map[string]any{"app": "demo"}}}
	if got := diffBase(t, obj); !reflect.DeepEqual(got, want) {
		t.Errorf("the diff-base stored is %v, want %v", got, want)
	}

	// Events that change nothing of the essence: each is a cycle in which
	// user code vandalizes its copy again.
	for i := range 3 {
		before := events.Load()
		if _, err := ri.Patch(context.Background(), "target", types.MergePatchType, fmt.Appendf(nil, `{"status":{"poke":%d}}`, i), metav1.PatchOptions{}, "status"); err != nil {
			t.Fatalf("poking the status: %v", err)
		}
		deadline := time.Now().Add(10 * time.Second)
		for events.Load() == before {
			if time.Now().After(deadline) {
				t.Fatalf("no event of the poke %d in 10 s", i)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	// A bystander, created after the pokes, is handled: so are they.
	create(t, ri, example("bystander", nil, nil, nil))
	waitHandled(t, ri, "bystander", 30*time.Second, "create_fn")

	if calls := rec.of("update_fn", "target"); len(calls) != 0 {
		t.Errorf("the update handler ran for changes that never happened: %+v", calls)
	}
	if calls := rec.of("create_fn", "target"); len(calls) != 1 {
		t.Errorf("the create handler ran %d times, want once", len(calls))
	}
	obj, err := ri.Get(context.Background(), "target", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := diffBase(t, obj); !reflect.DeepEqual(got, want) {
		t.Errorf("after the events, the diff-base is %v, want %v", got, want)
	}
	if spec, _, _ := unstructured.NestedMap(obj.Object, "spec"); spec["field"] != "value" {
		t.Errorf("spec = %v", spec)
	}
	for _, line := range []string{
		fmt.Sprintf("[%s/target] Handler 'delete_fn' does not match: its filters have failed: panic: when= exploded", ns),
		fmt.Sprintf("[%s/target] Handler 'event_panics' does not match: its filters have failed: panic: label callback exploded", ns),
	} {
		if n := op.CountLog(line); n != 1 {
			t.Errorf("%q is logged %d times, want once", line, n)
		}
	}
}
