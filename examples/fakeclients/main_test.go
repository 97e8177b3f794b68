package main

import (
	"log/slog"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stesting "k8s.io/client-go/testing"

	v1 "github.com/kopf-go/kopf/examples/apis/kopf/v1"
	"github.com/kopf-go/kopf/examples/generated/clientset/versioned"
	"github.com/kopf-go/kopf/examples/generated/clientset/versioned/fake"
	"github.com/kopf-go/kopf/kopftest"
)

// TestCreateFn calls the handler with kwargs made by hand and a fake
// clientset, and checks what it asked the API for and what it returned.
func TestCreateFn(t *testing.T) {
	obj := &v1.KopfExample{
		ObjectMeta: metav1.ObjectMeta{Name: "kex", Namespace: "default"},
		Spec:       v1.KopfExampleSpec{Field: "value"},
	}
	cs := fake.NewClientset(obj)
	ctx := kopftest.WithClient[versioned.Interface](t.Context(), cs)

	kw := CreateFnKwargs{Object: obj}
	kw.Name, kw.Namespace = obj.Name, obj.Namespace
	kw.Logger = slog.New(slog.DiscardHandler)
	result, err := CreateFn(ctx, kw)
	if err != nil {
		t.Fatal(err)
	}
	if got := result.(*v1.CreateFnStatus).Message; got != "applied" {
		t.Errorf("result %v, want the message applied", result)
	}

	// One request: an apply to the object's status.
	actions := cs.Actions()
	if len(actions) != 1 || !actions[0].Matches("patch", "kopfexamples") || actions[0].GetSubresource() != "status" {
		t.Fatalf("actions %v, want one patch of kopfexamples/status", actions)
	}
	if patch := actions[0].(k8stesting.PatchAction); patch.GetPatchType() != "application/apply-patch+yaml" {
		t.Errorf("patch type %s, want an apply", patch.GetPatchType())
	}
	// The fake's tracker holds the applied status.
	got, err := cs.KopfV1().KopfExamples("default").Get(ctx, "kex", metav1.GetOptions{})
	if err != nil || got.Status.Message != "hello value" {
		t.Errorf("status %+v (%v), want the message hello value", got.Status, err)
	}
}
