package handlers

import (
	"context"
	"log/slog"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/acme/widget-operator/api/v1alpha1"
)

// Handlers are plain functions: test them with kwargs made by hand.
func TestCreate(t *testing.T) {
	obj := &v1alpha1.Widget{
		ObjectMeta: metav1.ObjectMeta{Name: "example"},
		Greeting:   "Hi",
	}
	kw := CreateKwargs{Object: obj}
	kw.Name = obj.Name
	kw.Logger = slog.New(slog.DiscardHandler)
	result, err := Create(context.Background(), kw)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := result.(*v1alpha1.Greeting).Message, "Hi, example!"; got != want {
		t.Errorf("message %q, want %q", got, want)
	}
}
