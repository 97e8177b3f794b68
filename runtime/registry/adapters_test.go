package registry

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/kopf-go/kopf/runtime/body"
	"github.com/kopf-go/kopf/runtime/kwargs"
)

// The typed adapters of changing, event and index handlers decode the
// object as T: a body that does not decode is the handler's error, and
// makes its when= callback match so that the handler runs and reports it.
func TestTypedAdapters(t *testing.T) {
	good := body.Body{"spec": map[string]any{"size": int64(3)}}
	bad := body.Body{"spec": map[string]any{"size": "three"}}
	changing := TypedChangingFunc(func(_ context.Context, kw kwargs.TypedChanging[widget]) (any, error) {
		return kw.Object.Spec.Size, nil
	})
	var eventSize int
	event := TypedEventFunc(func(_ context.Context, kw kwargs.TypedEvent[widget]) error {
		eventSize = kw.Object.Spec.Size
		return nil
	})
	cwhen := TypedChangingWhen(func(kw kwargs.TypedChanging[widget]) bool { return kw.Object.Spec.Size > 5 })
	ewhen := TypedEventWhen(func(kw kwargs.TypedEvent[widget]) bool { return kw.Object.Spec.Size > 5 })
	iwhen := TypedIndexWhen(func(kw kwargs.TypedIndex[widget]) bool { return kw.Object.Spec.Size > 5 })
	for _, tt := range []struct {
		name     string
		b        body.Body
		wantErr  bool
		wantWhen bool
	}{
		{"decodes", good, false, false},
		{"does not decode", bad, true, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ckw := &kwargs.Changing{Base: kwargs.Base{Body: tt.b}}
			ekw := &kwargs.Event{Base: kwargs.Base{Body: tt.b}}
			ikw := &kwargs.Index{Base: kwargs.Base{Body: tt.b}}
			got, err := changing(context.Background(), ckw)
			if (err != nil) != tt.wantErr || (!tt.wantErr && got != 3) {
				t.Errorf("changing = %v, %v", got, err)
			}
			eventSize = 0
			err = event(context.Background(), ekw)
			if (err != nil) != tt.wantErr || (!tt.wantErr && eventSize != 3) {
				t.Errorf("event: %v, saw size %d", err, eventSize)
			}
			for what, when := range map[string]bool{"changing": cwhen(ckw), "event": ewhen(ekw), "index": iwhen(ikw)} {
				if when != tt.wantWhen {
					t.Errorf("%s when = %v, want %v", what, when, tt.wantWhen)
				}
			}
		})
	}
}

// The body-only adapters pass the kwargs and the results through.
func TestBodyOnlyAdapters(t *testing.T) {
	plainErr := errors.New("plain")
	c := ChangingFunc(func(_ context.Context, kw kwargs.Changing) (any, error) { return kw.Name, plainErr })
	if got, err := c(context.Background(), &kwargs.Changing{Base: kwargs.Base{Name: "n"}}); got != "n" || err != plainErr {
		t.Errorf("ChangingFunc = %v, %v", got, err)
	}
	var seen string
	e := EventFunc(func(_ context.Context, kw kwargs.Event) error { seen = kw.Type; return plainErr })
	if err := e(context.Background(), &kwargs.Event{Type: "ADDED"}); seen != "ADDED" || err != plainErr {
		t.Errorf("EventFunc: saw %q, %v", seen, err)
	}
	n := NoResult(func(_ context.Context, kw kwargs.Changing) error { return plainErr })
	if got, err := n(context.Background(), kwargs.Changing{}); got != nil || err != plainErr {
		t.Errorf("NoResult = %v, %v", got, err)
	}
	for _, tt := range []struct {
		name string
		want bool
	}{{"kept", true}, {"not kept", false}} {
		t.Run(tt.name, func(t *testing.T) {
			cw := ChangingWhen(func(kw kwargs.Changing) bool { return kw.Name == "kept" })
			ew := EventWhen(func(kw kwargs.Event) bool { return kw.Name == "kept" })
			iw := IndexWhen(func(kw kwargs.Index) bool { return kw.Name == "kept" })
			base := kwargs.Base{Name: tt.name}
			if cw(&kwargs.Changing{Base: base}) != tt.want || ew(&kwargs.Event{Base: base}) != tt.want || iw(&kwargs.Index{Base: base}) != tt.want {
				t.Errorf("the when= adapters of %q do not say %v", tt.name, tt.want)
			}
		})
	}
}

// The reconcile adapters: the typed one decodes the object (a body that
// does not decode is the handler's error and makes when= match), the
// body-only ones pass kwargs and results through, and ReconcileOnlyError
// returns the zero result.
func TestReconcileAdapters(t *testing.T) {
	good := body.Body{"spec": map[string]any{"size": int64(3)}}
	bad := body.Body{"spec": map[string]any{"size": "three"}}
	typed := TypedReconcileFunc(func(_ context.Context, kw kwargs.TypedReconcile[widget]) (ReconcileResult, error) {
		return ReconcileResult{RequeueAfter: time.Duration(kw.Object.Spec.Size) * time.Second}, nil
	})
	when := TypedReconcileWhen(func(kw kwargs.TypedReconcile[widget]) bool { return kw.Object.Spec.Size > 5 })
	for _, tt := range []struct {
		name     string
		b        body.Body
		wantErr  bool
		wantWhen bool
	}{
		{"decodes", good, false, false},
		{"does not decode", bad, true, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			kw := &kwargs.Reconcile{Base: kwargs.Base{Body: tt.b}}
			kw.ShareDecoded()
			got, err := typed(context.Background(), kw)
			if (err != nil) != tt.wantErr || (!tt.wantErr && got.RequeueAfter != 3*time.Second) {
				t.Errorf("typed = %v, %v", got, err)
			}
			if w := when(kw); w != tt.wantWhen {
				t.Errorf("when = %v, want %v", w, tt.wantWhen)
			}
		})
	}
	boom := errors.New("boom")
	var seen kwargs.Reconcile
	plain := ReconcileFunc(ReconcileOnlyError(func(_ context.Context, kw kwargs.Reconcile) error {
		seen = kw
		return boom
	}))
	res, err := plain(context.Background(), &kwargs.Reconcile{Trigger: kwargs.TriggerResync, Retry: 2})
	if !errors.Is(err, boom) || res != (ReconcileResult{}) || seen.Trigger != kwargs.TriggerResync || seen.Retry != 2 {
		t.Errorf("plain = %v, %v; saw %+v", res, err, seen)
	}
	pwhen := ReconcileWhen(func(kw kwargs.Reconcile) bool { return kw.Deleting })
	if !pwhen(&kwargs.Reconcile{Deleting: true}) || pwhen(&kwargs.Reconcile{}) {
		t.Error("ReconcileWhen does not pass the kwargs through")
	}
}
