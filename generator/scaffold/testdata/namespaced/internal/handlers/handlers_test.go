package handlers

import (
	"context"
	"log/slog"
	"testing"

	"github.com/kopf-go/kopf"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/acme/widget-operator/api/v1alpha1"
)

// Handlers are plain functions: test them with kwargs made by hand.
func TestCreate(t *testing.T) {
	obj := &v1alpha1.Widget{
		ObjectMeta: metav1.ObjectMeta{Name: "example"},
		Spec:       v1alpha1.WidgetSpec{Greeting: "Hi"},
	}
	kw := CreateKwargs{Object: obj}
	kw.Name = obj.Name
	kw.Logger = slog.New(slog.DiscardHandler)
	kw.Patch = kopf.Patch{} // what the handler asks to change, as the operator gives it
	result, err := Create(context.Background(), kw)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := result.(*v1alpha1.Greeting).Message, "Hi, example!"; got != want {
		t.Errorf("message %q, want %q", got, want)
	}
	conds, err := kw.Conditions()
	if err != nil || len(conds) != 1 || conds[0].Type != "Ready" || conds[0].Status != metav1.ConditionTrue {
		t.Errorf("conditions %+v (%v), want Ready", conds, err)
	}
}
