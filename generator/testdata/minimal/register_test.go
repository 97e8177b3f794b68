package minimal

import (
	"context"
	"log/slog"
	"reflect"
	"testing"

	"github.com/kopf-go/kopf"
)

func TestRegister(t *testing.T) {
	r := kopf.NewRegistry()
	if err := Register(r); err != nil {
		t.Fatal(err)
	}
	res := kopf.Resource{Group: "kopf.dev", Version: "v1", Plural: "kopfexamples", Kind: "KopfExample"}
	hs := r.ChangingHandlers(res, kopf.ReasonCreate)
	if len(hs) != 1 || hs[0].ID != "create_fn" {
		t.Fatalf("handlers = %+v, want CreateFn", hs)
	}
	kw := &kopf.ChangingKwargs{
		Base:   kopf.ResourceKwargs{Name: "kopf-example-1", Spec: kopf.Spec{"field": "value"}, Logger: slog.New(slog.DiscardHandler)},
		Reason: kopf.ReasonCreate,
	}
	got, err := hs[0].Fn(context.Background(), kw)
	if want := map[string]any{"message": "hello world"}; err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("Fn() = %v, %v; want %v", got, err, want)
	}
	for _, reason := range []kopf.Reason{kopf.ReasonUpdate, kopf.ReasonDelete, kopf.ReasonResume} {
		if hs := r.ChangingHandlers(res, reason); len(hs) != 0 {
			t.Errorf("%s handlers = %+v, want none", reason, hs)
		}
	}
	if err := Register(r); err == nil {
		t.Error("registering twice succeeded, want a duplicate id error")
	}
}
