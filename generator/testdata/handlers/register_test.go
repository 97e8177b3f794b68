package handlers

import (
	"context"
	"log/slog"
	"reflect"
	"testing"
	"time"

	"github.com/kopf-go/kopf"
)

var (
	pods         = kopf.Resource{Version: "v1", Plural: "pods", Singular: "pod", Kind: "Pod", Namespaced: true}
	kopfexamples = kopf.Resource{Group: "kopf.dev", Version: "v1", Plural: "kopfexamples", Kind: "KopfExample", Namespaced: true}
)

func TestRegistrations(t *testing.T) {
	r := kopf.NewRegistry()
	if err := Register(r); err != nil {
		t.Fatal(err)
	}
	type reg struct {
		ID       string
		Selector kopf.Selector
		Reasons  []kopf.Reason
		Param    any
		Errors   kopf.ErrorsMode
		Timeout  time.Duration
		Retries  int
		Backoff  time.Duration
		Optional bool
		Deleted  bool
	}
	summary := func(hs []*kopf.ChangingHandler) []reg {
		var out []reg
		for _, h := range hs {
			out = append(out, reg{h.ID, h.Selector, h.Reasons, h.Param, h.Errors, h.Timeout, h.Retries, h.Backoff, h.Optional, h.Deleted})
		}
		return out
	}
	ex := func(g, v string) kopf.Selector { return kopf.Selector{Group: g, Version: v, Name: "kopfexamples"} }
	tests := []struct {
		res    kopf.Resource
		reason kopf.Reason
		want   []reg
	}{
		{pods, kopf.ReasonResume, []reg{{ID: "start_killing", Selector: kopf.Selector{Version: "v1", Name: "pods", Core: true}, Reasons: []kopf.Reason{kopf.ReasonResume, kopf.ReasonCreate}, Deleted: true}}},
		{pods, kopf.ReasonCreate, []reg{{ID: "start_killing", Selector: kopf.Selector{Version: "v1", Name: "pods", Core: true}, Reasons: []kopf.Reason{kopf.ReasonResume, kopf.ReasonCreate}, Deleted: true}}},
		{pods, kopf.ReasonDelete, []reg{{ID: "stop_killing", Selector: kopf.Selector{Name: "pods"}, Reasons: []kopf.Reason{kopf.ReasonDelete}, Optional: true}}},
		{pods, kopf.ReasonUpdate, nil},
		{kopfexamples, kopf.ReasonUpdate, []reg{{ID: "update-fn", Selector: ex("kopf.dev", "v1"), Reasons: []kopf.Reason{kopf.ReasonUpdate},
			Param: "first", Errors: kopf.ErrorsPermanent, Timeout: 90 * time.Second, Retries: 3, Backoff: 90 * time.Second}}},
		{kopfexamples, kopf.ReasonCreate, []reg{
			// Stacked markers register bottom to top, as Kopf's decorators.
			{ID: "create-b", Selector: ex("kopf.dev", ""), Reasons: []kopf.Reason{kopf.ReasonCreate}, Param: "b", Errors: kopf.ErrorsTemporary, Timeout: 250 * time.Millisecond},
			{ID: "create-a", Selector: ex("kopf.dev", ""), Reasons: []kopf.Reason{kopf.ReasonCreate}, Param: "a", Errors: kopf.ErrorsIgnored},
			{ID: "later", Selector: ex("", ""), Reasons: []kopf.Reason{kopf.ReasonCreate}, Backoff: time.Hour},
		}},
		{kopfexamples, kopf.ReasonDelete, []reg{{ID: "many", Selector: kopf.Selector{Name: "KopfExample"}, Reasons: []kopf.Reason{kopf.ReasonDelete}}}},
		{kopfexamples, kopf.ReasonResume, []reg{{ID: "resume", Selector: ex("", ""), Reasons: []kopf.Reason{kopf.ReasonResume}}}},
	}
	for _, tt := range tests {
		if got := summary(r.ChangingHandlers(tt.res, tt.reason)); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s %s:\n got %+v\nwant %+v", tt.res, tt.reason, got, tt.want)
		}
	}
}

// TestKwargsAreCopied checks that the generated closure copies every field
// of the runtime's kwargs into the handler's, by name and type.
func TestKwargsAreCopied(t *testing.T) {
	r := kopf.NewRegistry()
	if err := Register(r); err != nil {
		t.Fatal(err)
	}
	hs := r.ChangingHandlers(kopfexamples, kopf.ReasonResume)
	if len(hs) != 1 {
		t.Fatalf("resume handlers = %d, want 1", len(hs))
	}
	kw := &kopf.ChangingKwargs{
		Base: kopf.ResourceKwargs{
			Resource:    kopfexamples,
			Body:        kopf.Body{"kind": "KopfExample"},
			Spec:        kopf.Spec{"field": "value"},
			Meta:        kopf.Meta{"name": "kopf-example-1"},
			Status:      kopf.Status{"ok": true},
			UID:         "uid-1",
			Name:        "kopf-example-1",
			Namespace:   "default",
			Labels:      map[string]string{"somelabel": "somevalue"},
			Annotations: map[string]string{"someannotation": "somevalue"},
			Patch:       kopf.Patch{},
			Logger:      slog.New(slog.DiscardHandler),
			Memo:        kopf.Memo{},
		},
		Param:   "param",
		Retry:   2,
		Started: time.Unix(1700000000, 0),
		Runtime: 3 * time.Second,
		Reason:  kopf.ReasonResume,
		Old:     map[string]any{"old": 1},
		New:     map[string]any{"new": 2},
		Diff:    kopf.Diff{{Op: kopf.DiffChange, Path: []string{"spec", "field"}, Old: 1, New: 2}},
	}
	got, err := hs[0].Fn(context.Background(), kw)
	if err != nil || got != "kopf-example-1" {
		t.Fatalf("Fn() = %v, %v", got, err)
	}
	seen := reflect.ValueOf(kw.Memo["kwargs"])
	if seen.Type() != reflect.TypeFor[ResumeKwargs]() {
		t.Fatalf("memo holds %T", kw.Memo["kwargs"])
	}
	// The handler's kwargs type is the kind's, not a copy of it: it gets
	// the runtime's kwargs as they are.
	if reflect.TypeFor[ResumeKwargs]() != reflect.TypeFor[kopf.ChangingKwargs]() {
		t.Errorf("ResumeKwargs is %v, want an alias of kopf.ChangingKwargs", reflect.TypeFor[ResumeKwargs]())
	}
	if !reflect.DeepEqual(seen.Interface(), *kw) {
		t.Errorf("the handler got %+v, want %+v", seen.Interface(), *kw)
	}
}
