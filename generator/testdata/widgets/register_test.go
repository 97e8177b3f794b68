package widgets

import (
	"context"
	"testing"

	"github.com/kopf-go/kopf"
)

func TestPaint(t *testing.T) {
	r := kopf.NewRegistry()
	if err := Register(r); err != nil {
		t.Fatal(err)
	}
	widgets := kopf.Resource{Group: "example.com", Version: "v1alpha1", Plural: "widgets", Singular: "widget", Kind: "Widget"}
	hs := r.ChangingHandlers(widgets, kopf.ReasonUpdate)
	if len(hs) != 1 || hs[0].ID != "paint/spec.parts.wheel.count" {
		t.Fatalf("update handlers = %+v", hs)
	}
	body := func(color string) *kopf.ChangingKwargs {
		return &kopf.ChangingKwargs{Base: kopf.ResourceKwargs{Body: kopf.Body{
			"spec": map[string]any{"color": color, "parts": map[string]any{"wheel": map[string]any{"count": int64(4)}}},
		}}}
	}
	if !hs[0].When(body("blue")) || hs[0].When(body("red")) {
		t.Error("when=isBlue")
	}
	if got, err := hs[0].Fn(context.Background(), body("red")); err != nil || got != "red" {
		t.Errorf("Fn() = %v, %v", got, err)
	}
	if hs := r.ChangingHandlers(widgets, kopf.ReasonCreate); len(hs) != 1 || hs[0].ID != "paint" {
		t.Errorf("create handlers = %+v", hs)
	}
}
