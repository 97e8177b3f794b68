package filters

import (
	"context"
	"log/slog"
	"reflect"
	"testing"

	"github.com/kopf-go/kopf"
)

var kopfexamples = kopf.Resource{Group: "kopf.dev", Version: "v1", Plural: "kopfexamples", Kind: "KopfExample", Namespaced: true}

func registry(t *testing.T) *kopf.Registry {
	t.Helper()
	r := kopf.NewRegistry()
	if err := Register(r); err != nil {
		t.Fatal(err)
	}
	return r
}

func find(t *testing.T, r *kopf.Registry, reason kopf.Reason, id string) *kopf.ChangingHandler {
	t.Helper()
	for _, h := range r.ChangingHandlers(kopfexamples, reason) {
		if h.ID == id {
			return h
		}
	}
	t.Fatalf("no %s handler %q", reason, id)
	return nil
}

func TestRegistrations(t *testing.T) {
	r := registry(t)
	type reg struct {
		ID           string
		Reasons      []kopf.Reason
		Field        []string
		FieldHandler bool
		When         bool
	}
	// The markers stacked on one function register bottom to top, as
	// Python applies Kopf's decorators.
	want := map[kopf.Reason][]reg{
		kopf.ReasonCreate: {
			{ID: "labelled", Reasons: []kopf.Reason{kopf.ReasonCreate}},
			{ID: "mode/metadata.annotations.example.com/mode", Reasons: []kopf.Reason{kopf.ReasonCreate, kopf.ReasonUpdate}, Field: []string{"metadata", "annotations", "example.com/mode"}, FieldHandler: true},
			{ID: "fields/spec.replicas", Reasons: []kopf.Reason{kopf.ReasonCreate, kopf.ReasonUpdate}, Field: []string{"spec", "replicas"}, FieldHandler: true, When: true},
			{ID: "count/spec.count", Reasons: []kopf.Reason{kopf.ReasonCreate}, Field: []string{"spec", "count"}},
			{ID: "ratio/spec.ratio", Reasons: []kopf.Reason{kopf.ReasonCreate}, Field: []string{"spec", "ratio"}},
			{ID: "flag/spec.flag", Reasons: []kopf.Reason{kopf.ReasonCreate}, Field: []string{"spec", "flag"}},
			{ID: "implicit/spec.field", Reasons: []kopf.Reason{kopf.ReasonResume, kopf.ReasonCreate}, Field: []string{"spec", "field"}},
		},
		kopf.ReasonUpdate: {
			{ID: "mode/metadata.annotations.example.com/mode", Reasons: []kopf.Reason{kopf.ReasonCreate, kopf.ReasonUpdate}, Field: []string{"metadata", "annotations", "example.com/mode"}, FieldHandler: true},
			{ID: "fields/spec.replicas", Reasons: []kopf.Reason{kopf.ReasonCreate, kopf.ReasonUpdate}, Field: []string{"spec", "replicas"}, FieldHandler: true, When: true},
			{ID: "values/spec.any", Reasons: []kopf.Reason{kopf.ReasonUpdate}, Field: []string{"spec", "any"}},
		},
		kopf.ReasonResume: {
			{ID: "values/spec.word", Reasons: []kopf.Reason{kopf.ReasonResume}, Field: []string{"spec", "word"}, When: true},
			{ID: "implicit/spec.field", Reasons: []kopf.Reason{kopf.ReasonResume, kopf.ReasonCreate}, Field: []string{"spec", "field"}},
		},
		kopf.ReasonDelete: {
			{ID: "values/spec.gone", Reasons: []kopf.Reason{kopf.ReasonDelete}, Field: []string{"spec", "gone"}},
		},
	}
	for reason, want := range want {
		var got []reg
		for _, h := range r.ChangingHandlers(kopfexamples, reason) {
			got = append(got, reg{h.ID, h.Reasons, h.Field, h.FieldHandler, h.When != nil})
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %+v\nwant %+v", reason, got, want)
		}
	}
}

func TestMetaFilters(t *testing.T) {
	h := find(t, registry(t), kopf.ReasonCreate, "labelled")
	base := func() *kopf.ResourceKwargs {
		return &kopf.ResourceKwargs{
			Name:        "ex",
			Labels:      map[string]string{"app": "web", "example.com/tier": "front end", "env": "", "owner": "team-a", "stage": "", "word": "PRESENT"},
			Annotations: map[string]string{"note": "hello", "flag": "true"},
		}
	}
	if !h.Filter.MatchMeta(base()) {
		t.Fatal("the matching object does not match")
	}
	for name, change := range map[string]func(kw *kopf.ResourceKwargs){
		"wrong literal":                 func(kw *kopf.ResourceKwargs) { kw.Labels["app"] = "db" },
		"quoted PRESENT is a literal":   func(kw *kopf.ResourceKwargs) { kw.Labels["word"] = "other" },
		"ABSENT label present":          func(kw *kopf.ResourceKwargs) { kw.Labels["canary"] = "yes" },
		"PRESENT label absent":          func(kw *kopf.ResourceKwargs) { delete(kw.Labels, "env") },
		"string callback refuses":       func(kw *kopf.ResourceKwargs) { kw.Labels["owner"] = "someone" },
		"absent label gives \"\"":       func(kw *kopf.ResourceKwargs) { delete(kw.Labels, "owner") },
		"callback with kwargs refuses":  func(kw *kopf.ResourceKwargs) { kw.Name = "" },
		"absent annotation gives \"\"":  func(kw *kopf.ResourceKwargs) { delete(kw.Annotations, "note") },
		"absent label gives nil":        func(kw *kopf.ResourceKwargs) { delete(kw.Labels, "stage") },
		"empty annotation is not nil":   func(kw *kopf.ResourceKwargs) { kw.Annotations["audit"] = "" },
		"bare true is a string literal": func(kw *kopf.ResourceKwargs) { kw.Annotations["flag"] = "True" },
	} {
		kw := base()
		change(kw)
		if h.Filter.MatchMeta(kw) {
			t.Errorf("%s: matches", name)
		}
	}
}

func TestValueFilters(t *testing.T) {
	r := registry(t)
	kw := &kopf.ResourceKwargs{Name: "ex"}
	fields := find(t, r, kopf.ReasonUpdate, "fields/spec.replicas")
	if !fields.Filter.Old.Match(1, true, kw) || fields.Filter.Old.Match(2, true, kw) || fields.Filter.Value != nil {
		t.Error("old=1")
	}
	if !fields.Filter.New.Match(11.0, true, kw) || fields.Filter.New.Match(5.0, true, kw) || fields.Filter.New.Match(nil, false, kw) {
		t.Error("new=fn:isLarge")
	}
	for id, cases := range map[string][]struct {
		v    any
		ok   bool
		want bool
	}{
		"flag/spec.flag":      {{true, true, true}, {"true", true, false}, {nil, false, false}},
		"ratio/spec.ratio":    {{0.5, true, true}, {int64(1), true, false}},
		"count/spec.count":    {{-3.0, true, true}, {int64(-3), true, true}, {"-3", true, false}},
		"implicit/spec.field": {{"x", true, true}, {nil, false, false}},
	} {
		h := find(t, r, kopf.ReasonCreate, id)
		for _, c := range cases {
			if got := h.Filter.Value.Match(c.v, c.ok, kw); got != c.want {
				t.Errorf("%s: Match(%#v, %v) = %v", id, c.v, c.ok, got)
			}
		}
	}
	word := find(t, r, kopf.ReasonResume, "values/spec.word")
	if !word.Filter.Value.Match("hello", true, kw) || word.Filter.Value.Match("bye", true, kw) {
		t.Error("value=hello")
	}
	gone := find(t, r, kopf.ReasonDelete, "values/spec.gone")
	if !gone.Filter.Value.Match(nil, false, kw) || gone.Filter.Value.Match("x", true, kw) || !gone.Optional {
		t.Error("value=ABSENT")
	}
	anything := find(t, r, kopf.ReasonUpdate, "values/spec.any")
	if !anything.Filter.Value.Match(0, true, kw) || anything.Filter.Value.Match(nil, false, kw) || anything.Errors != kopf.ErrorsIgnored {
		t.Error("value=fn:isAnything")
	}
	mode := find(t, r, kopf.ReasonUpdate, "mode/metadata.annotations.example.com/mode")
	if !mode.Filter.Value.Match("on", true, kw) || mode.Filter.Value.Match(true, true, kw) || mode.Param != "annotation" {
		t.Error(`value="on"`)
	}
}

func TestWhen(t *testing.T) {
	r := registry(t)
	fields := find(t, r, kopf.ReasonUpdate, "fields/spec.replicas")
	ready := &kopf.ChangingKwargs{Base: kopf.ResourceKwargs{Status: kopf.Status{"ready": true}}}
	if !fields.When(ready) || fields.When(&kopf.ChangingKwargs{}) {
		t.Error("when=isReady (the handler's kwargs)")
	}
	word := find(t, r, kopf.ReasonResume, "values/spec.word")
	if !word.When(&kopf.ChangingKwargs{Reason: kopf.ReasonResume}) || word.When(&kopf.ChangingKwargs{}) {
		t.Error("when=fn:isChanging (the kind's kwargs)")
	}
}

func TestEventHandlers(t *testing.T) {
	hs := registry(t).EventHandlers(kopfexamples)
	// Bottom to top, as Kopf's decorators.
	if len(hs) != 2 || hs[1].ID != "watch" || hs[0].ID != "nodes/spec.node" {
		t.Fatalf("event handlers = %+v", hs)
	}
	watch, nodes := hs[1], hs[0]
	if watch.Param != "p" || watch.Field != nil || !reflect.DeepEqual(nodes.Field, []string{"spec", "node"}) {
		t.Errorf("options: %+v, %+v", watch, nodes)
	}
	if !watch.When(&kopf.EventKwargs{Type: "ADDED"}) || watch.When(&kopf.EventKwargs{Type: "DELETED"}) {
		t.Error("when=isAdded")
	}
	if !nodes.When(&kopf.EventKwargs{}) || nodes.When(&kopf.EventKwargs{Type: "ADDED"}) {
		t.Error("when=isListed")
	}
	meta := &kopf.ResourceKwargs{Labels: map[string]string{"app": "x"}, Annotations: map[string]string{}}
	if !watch.Filter.MatchMeta(meta) {
		t.Error("labels={app: PRESENT}")
	}
	meta.Annotations["skip"] = ""
	if watch.Filter.MatchMeta(meta) {
		t.Error("annotations={skip: ABSENT}")
	}
	if !nodes.Filter.Value.Match("node-1", true, meta) || nodes.Filter.Value.Match("pod-1", true, meta) {
		t.Error("value=fn:isNode")
	}
}

// TestEventKwargsAreCopied checks that the generated code copies every
// field of the runtime's event kwargs into the handler's.
func TestEventKwargsAreCopied(t *testing.T) {
	hs := registry(t).EventHandlers(kopfexamples)
	kw := &kopf.EventKwargs{
		Base: kopf.ResourceKwargs{
			Resource:    kopfexamples,
			Body:        kopf.Body{"kind": "KopfExample"},
			Spec:        kopf.Spec{"field": "value"},
			Meta:        kopf.Meta{"name": "kopf-example-1"},
			Status:      kopf.Status{"ok": true},
			UID:         "uid-1",
			Name:        "kopf-example-1",
			Namespace:   "default",
			Labels:      map[string]string{"app": "x"},
			Annotations: map[string]string{"a": "b"},
			Patch:       kopf.Patch{},
			Logger:      slog.New(slog.DiscardHandler),
			Memo:        kopf.Memo{},
		},
		Param: "p",
		Type:  "ADDED",
		Event: map[string]any{"type": "ADDED", "object": map[string]any{"kind": "KopfExample"}},
	}
	if err := hs[0].Fn(context.Background(), kw); err != nil {
		t.Fatal(err)
	}
	seen := reflect.ValueOf(kw.Memo["kwargs"])
	if seen.Type() != reflect.TypeFor[WatchKwargs]() {
		t.Fatalf("memo holds %T", kw.Memo["kwargs"])
	}
	// The handler's kwargs type is the kind's, not a copy of it: it gets
	// the runtime's kwargs as they are.
	if reflect.TypeFor[WatchKwargs]() != reflect.TypeFor[kopf.EventKwargs]() {
		t.Errorf("WatchKwargs is %v, want an alias of kopf.EventKwargs", reflect.TypeFor[WatchKwargs]())
	}
	if !reflect.DeepEqual(seen.Interface(), *kw) {
		t.Errorf("the handler got %+v, want %+v", seen.Interface(), *kw)
	}
}
