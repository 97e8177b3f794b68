package typed

import (
	"context"
	"reflect"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/kopf-go/kopf"
)

var (
	kopfexamples = kopf.Resource{Group: "kopf.dev", Version: "v1", Plural: "kopfexamples", Singular: "kopfexample", Kind: "KopfExample", Namespaced: true}
	pods         = kopf.Resource{Version: "v1", Plural: "pods", Singular: "pod", Kind: "Pod", ShortNames: []string{"po"}, Namespaced: true}
	deployments  = kopf.Resource{Group: "apps", Version: "v1", Plural: "deployments", Singular: "deployment", Kind: "Deployment", Namespaced: true}
)

func registry(t *testing.T) *kopf.Registry {
	t.Helper()
	r := kopf.NewRegistry()
	if err := Register(r); err != nil {
		t.Fatal(err)
	}
	return r
}

func TestKwargsTypes(t *testing.T) {
	for _, tt := range []struct {
		kwargs               reflect.Type
		object, spec, status reflect.Type
	}{
		{reflect.TypeFor[CreateKwargs](), reflect.TypeFor[*KopfExample](), reflect.TypeFor[kopf.Spec](), reflect.TypeFor[kopf.Status]()},
		{reflect.TypeFor[WatchKwargs](), reflect.TypeFor[*KopfExample](), reflect.TypeFor[kopf.Spec](), reflect.TypeFor[kopf.Status]()},
		{reflect.TypeFor[PodsKwargs](), reflect.TypeFor[*corev1.Pod](), reflect.TypeFor[kopf.Spec](), reflect.TypeFor[kopf.Status]()},
		{reflect.TypeFor[ScaleKwargs](), reflect.TypeFor[*appsv1.Deployment](), reflect.TypeFor[kopf.Spec](), reflect.TypeFor[kopf.Status]()},
		{reflect.TypeFor[ConfigKwargs](), reflect.TypeFor[*corev1.ConfigMap](), reflect.TypeFor[kopf.Spec](), reflect.TypeFor[kopf.Status]()},
		{reflect.TypeFor[MixedKwargs](), nil, reflect.TypeFor[kopf.Spec](), reflect.TypeFor[kopf.Status]()},
	} {
		f, ok := tt.kwargs.FieldByName("Object")
		if ok != (tt.object != nil) || ok && f.Type != tt.object {
			t.Errorf("%s.Object: %v %v, want %v", tt.kwargs, ok, f.Type, tt.object)
		}
		if f, _ := tt.kwargs.FieldByName("Spec"); f.Type != tt.spec {
			t.Errorf("%s.Spec is %v, want %v", tt.kwargs, f.Type, tt.spec)
		}
		if f, _ := tt.kwargs.FieldByName("Status"); f.Type != tt.status {
			t.Errorf("%s.Status is %v, want %v", tt.kwargs, f.Type, tt.status)
		}
	}
}

func example(replicas any) kopf.Body {
	return kopf.Body{
		"apiVersion": "kopf.dev/v1",
		"kind":       "KopfExample",
		"metadata":   map[string]any{"name": "ex1", "labels": map[string]any{"app": "web"}},
		"spec":       map[string]any{"field": "f", "replicas": replicas, "items": []any{"a"}, "nested": map[string]any{"depth": int64(2)}},
		"status":     map[string]any{"message": "m"},
	}
}

func TestTypedChanging(t *testing.T) {
	hs := registry(t).ChangingHandlers(kopfexamples, kopf.ReasonCreate)
	if len(hs) != 2 || hs[0].ID != "create" || hs[1].ID != "mixed-examples" {
		t.Fatalf("create handlers = %+v", hs)
	}
	kw := &kopf.ChangingKwargs{Base: kopf.ResourceKwargs{Name: "ex1", Body: example(int64(3))}}
	got, err := hs[0].Fn(context.Background(), kw)
	if want := map[string]any{"field": "f", "replicas": int32(3), "message": "m"}; err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("Fn() = %#v, %v; want %#v", got, err, want)
	}
	// A body that does not decode is the handler's error, not a panic.
	kw.Body = example("three")
	if got, err := hs[0].Fn(context.Background(), kw); got != nil || err == nil || !strings.Contains(err.Error(), "decoding the object as typed.KopfExample") {
		t.Errorf("Fn(bad body) = %v, %v", got, err)
	}
	var ids []string
	for _, h := range registry(t).ChangingHandlers(kopfexamples, kopf.ReasonUpdate) {
		ids = append(ids, h.ID)
	}
	// Stacked markers register bottom to top, as Kopf's decorators.
	if want := []string{"started/spec.started.whatever", "label/metadata.labels.app", "raw/status.raw.a.b.c", "extra/spec.extra.anything", "depth/spec.nested.depth"}; !reflect.DeepEqual(ids, want) {
		t.Errorf("update handlers = %v, want %v", ids, want)
	}
}

func TestTypedEvent(t *testing.T) {
	hs := registry(t).EventHandlers(kopfexamples)
	if len(hs) != 1 {
		t.Fatalf("event handlers = %+v", hs)
	}
	h := hs[0]
	kw := &kopf.EventKwargs{Base: kopf.ResourceKwargs{Name: "ex1", Body: example(int64(3)), Memo: kopf.Memo{}}}
	if !h.When(kw) {
		t.Error("when=hasItems refuses an object with items")
	}
	if err := h.Fn(context.Background(), kw); err != nil {
		t.Fatal(err)
	}
	if obj, ok := kw.Memo["object"].(*KopfExample); !ok || obj.Name != "ex1" || obj.Spec.Nested.Depth != 2 || obj.Labels["app"] != "web" {
		t.Errorf("the handler got %#v", kw.Memo["object"])
	}
	if !h.Filter.Value.Match(int64(1), true, &kw.Base) || h.Filter.Value.Match(int64(0), true, &kw.Base) {
		t.Error("value=fn:isPositive")
	}
	// when= lets a body that does not decode through: the handler reports it.
	kw.Body = example("three")
	if !h.When(kw) {
		t.Error("when= with a bad body refuses the handler")
	}
	if err := h.Fn(context.Background(), kw); err == nil {
		t.Error("Fn(bad body) succeeded")
	}
}

func TestBuiltins(t *testing.T) {
	r := registry(t)
	hs := r.EventHandlers(pods)
	// Bottom to top, as Kopf's decorators.
	if len(hs) != 2 || hs[1].ID != "pods/spec.nodeName" || hs[0].ID != "all" {
		t.Fatalf("pod event handlers = %+v", hs)
	}
	if want := (kopf.Selector{Version: "v1", Name: "pods", Core: true}); hs[1].Selector != want {
		t.Errorf("v1/pods selector = %#v", hs[1].Selector)
	}
	kw := &kopf.EventKwargs{Base: kopf.ResourceKwargs{
		Body: kopf.Body{"spec": map[string]any{"nodeName": "node-1"}},
		Spec: kopf.Spec{"nodeName": "node-1"},
		Memo: kopf.Memo{},
	}}
	if !hs[1].When(kw) {
		t.Error("when=isScheduled")
	}
	if err := hs[1].Fn(context.Background(), kw); err != nil || kw.Memo["node"] != "node-1" {
		t.Errorf("Fn() = %v, memo %v", err, kw.Memo)
	}

	scale := r.ChangingHandlers(deployments, kopf.ReasonUpdate)
	if len(scale) != 2 || scale[1].ID != "scale/spec.replicas" || scale[0].ID != "template/spec.template.metadata.labels.app" {
		t.Fatalf("deployment handlers = %+v", scale)
	}
	got, err := scale[1].Fn(context.Background(), &kopf.ChangingKwargs{Base: kopf.ResourceKwargs{
		Body: kopf.Body{"spec": map[string]any{"replicas": int64(4)}},
	}})
	if err != nil || got != int32(4) {
		t.Errorf("Fn() = %#v, %v", got, err)
	}
	if creates := r.ChangingHandlers(pods, kopf.ReasonCreate); len(creates) != 1 || creates[0].ID != "mixed-pods" {
		t.Errorf("pod create handlers = %+v", creates)
	}
}

// The type's +kubebuilder:selectablefield markers are declared: the plain
// path, not the one a field= cannot name.
func TestSelectableFields(t *testing.T) {
	if got, want := registry(t).SelectableFields(kopfexamples), []string{"spec.field"}; !reflect.DeepEqual(got, want) {
		t.Errorf("SelectableFields = %v, want %v", got, want)
	}
}
