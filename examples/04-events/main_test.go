package main

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kopf-go/kopf/envtest"
	"github.com/kopf-go/kopf/examples"
	"github.com/kopf-go/kopf/kopftest"
)

// The handler's four events reach the API server with Kopf's types,
// reasons and messages, about the handled object, and no others: Kopf
// 1.44 posts no log records as events by default (settings.posting.loggers;
// the "Success" events in its example's README are older Kopf's).
func TestEvents(t *testing.T) {
	ctx := t.Context()
	env := envtest.Start(t, envtest.WithCRDs("../crd.yaml"))
	op := kopftest.Start(t, env.Config, Register)
	created, err := envtest.Apply(ctx, env.Config, examples.Object)
	if err != nil {
		t.Fatal(err)
	}
	obj := created[0]
	op.WaitOutcome(kopftest.Match{Name: obj.GetName(), Handler: "create_fn", Result: kopftest.Succeeded}, 30*time.Second)
	// Events are posted in the background; the operator's exit posts what
	// is queued before it returns.
	if err := op.Stop(); err != nil {
		t.Fatalf("the operator: %v", err)
	}

	list, err := kubernetes.NewForConfigOrDie(env.Config).CoreV1().Events(obj.GetNamespace()).List(ctx, metav1.ListOptions{
		FieldSelector: "involvedObject.uid=" + string(obj.GetUID()),
	})
	if err != nil {
		t.Fatal(err)
	}
	involved := corev1.ObjectReference{
		APIVersion: "kopf.dev/v1", Kind: "KopfExample",
		Namespace: obj.GetNamespace(), Name: obj.GetName(), UID: obj.GetUID(),
	}
	type event struct{ typ, reason, message string }
	got := map[event]int{}
	for _, ev := range list.Items {
		got[event{ev.Type, ev.Reason, ev.Message}]++
		if ev.InvolvedObject != involved {
			t.Errorf("event %q %q is about %+v, want %+v", ev.Reason, ev.Message, ev.InvolvedObject, involved)
		}
		if ev.Source.Component != "kopf" || ev.ReportingController != "kopf" {
			t.Errorf("event %q %q comes from %q/%q, want kopf", ev.Reason, ev.Message, ev.Source.Component, ev.ReportingController)
		}
	}
	for _, want := range []event{
		{"SomeType", "SomeReason", "Some message"},
		{"Normal", "SomeReason", "Some message"},
		{"Warning", "SomeReason", "Some message"},
		{"Error", "SomeReason", "Some exception: Exception text."},
	} {
		if got[want] != 1 {
			t.Errorf("%d events %+v, want 1; all events: %v", got[want], want, got)
		}
	}
	if len(list.Items) != 4 {
		t.Errorf("%d events about the object, want 4: %v", len(list.Items), got)
	}
}
