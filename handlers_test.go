package kopf_test

import (
	"context"
	"testing"

	"github.com/kopf-go/kopf"
	"github.com/kopf-go/kopf/runtime/registry"
)

type widget struct {
	Spec struct {
		Size int `json:"size"`
	} `json:"spec"`
}

func TestSubhandlerFuncs(t *testing.T) {
	ctx, subs := registry.WithSubhandlers(context.Background())
	var got []string
	if err := kopf.SubhandlerFunc(ctx, "plain", func(ctx context.Context, kw kopf.ChangingKwargs) error {
		got = append(got, "plain "+kw.Name)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := kopf.TypedSubhandlerFunc(ctx, "typed", func(ctx context.Context, kw kopf.TypedChangingKwargs[widget]) error {
		if kw.Object == nil || kw.Object.Spec.Size != 3 {
			t.Errorf("the typed sub-handler got %+v", kw.Object)
		}
		got = append(got, "typed "+kw.Name)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	kw := &kopf.ChangingKwargs{Base: kopf.ResourceKwargs{Name: "w1", Body: kopf.Body{"spec": map[string]any{"size": int64(3)}}}}
	list := subs.List()
	if len(list) != 2 || list[0].ID != "plain" || list[1].ID != "typed" {
		t.Fatalf("sub-handlers %+v", list)
	}
	for _, h := range list {
		if result, err := h.Fn(ctx, kw); result != nil || err != nil {
			t.Errorf("%s: %v, %v", h.ID, result, err)
		}
	}
	if len(got) != 2 || got[0] != "plain w1" || got[1] != "typed w1" {
		t.Errorf("calls %v", got)
	}
	// A body that does not decode is the sub-handler's error.
	kw.Body = kopf.Body{"spec": map[string]any{"size": "three"}}
	if _, err := list[1].Fn(ctx, kw); err == nil {
		t.Error("a body that does not decode is no error")
	}
}

func TestSpawningFuncs(t *testing.T) {
	b := kopf.Body{"spec": map[string]any{"size": int64(4)}}
	d := kopf.TypedDaemonFunc(func(_ context.Context, kw kopf.TypedDaemonKwargs[widget]) (any, error) {
		return kw.Object.Spec.Size, nil
	})
	if got, err := d(context.Background(), &kopf.DaemonKwargs{Base: kopf.ResourceKwargs{Body: b}}); got != 4 || err != nil {
		t.Errorf("TypedDaemonFunc = %v, %v", got, err)
	}
	tm := kopf.TypedTimerFunc(func(_ context.Context, kw kopf.TypedTimerKwargs[widget]) (any, error) {
		return kw.Object.Spec.Size, nil
	})
	if got, err := tm(context.Background(), &kopf.TimerKwargs{Base: kopf.ResourceKwargs{Body: b}}); got != 4 || err != nil {
		t.Errorf("TypedTimerFunc = %v, %v", got, err)
	}
	r := kopf.NewRegistry()
	if err := r.AddDaemon(kopf.DaemonHandler{ID: "d", Fn: kopf.DaemonFunc(kopf.NoResult(func(context.Context, kopf.DaemonKwargs) error { return nil }))}); err != nil {
		t.Error(err)
	}
	if err := r.AddTimer(kopf.TimerHandler{ID: "t", Fn: kopf.TimerFunc(kopf.NoResult(func(context.Context, kopf.TimerKwargs) error { return nil })), Interval: 1}); err != nil {
		t.Error(err)
	}
}
