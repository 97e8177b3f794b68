package admission

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/kopf-go/kopf"
)

func kwargs(obj kopf.Body, operation string) *kopf.AdmissionKwargs {
	warnings := []string{}
	return &kopf.AdmissionKwargs{
		Base: kopf.ResourceKwargs{Body: obj, Spec: obj.Spec(), Status: obj.Status(), Name: obj.Meta().Name(),
			Labels: obj.Meta().Labels(), Patch: kopf.Patch{}},
		Operation: operation,
		Warnings:  &warnings,
		Headers:   map[string]string{"User-Agent": "kube-apiserver"},
	}
}

// The generated registrations carry every option of the markers, and the
// adapters call the handlers with their kwargs, typed where the resource
// is.
func TestRegister(t *testing.T) {
	r := kopf.NewRegistry()
	if err := Register(r); err != nil {
		t.Fatal(err)
	}
	type opts struct {
		kind                                    kopf.WebhookKind
		operations                              []string
		subresource                             string
		persistent, sideEffects, ignoreFailures bool
		param                                   any
		hasWhen                                 bool
	}
	want := map[string]opts{
		"authhook":                           {kind: kopf.WebhookValidating},
		"validate1":                          {kind: kopf.WebhookValidating, operations: []string{"CREATE", "UPDATE"}, sideEffects: true},
		"validate2/spec.field":               {kind: kopf.WebhookValidating},
		"validate_subresources":              {kind: kopf.WebhookValidating, subresource: "*", persistent: true, ignoreFailures: true},
		"mutate1":                            {kind: kopf.WebhookMutating},
		"on-deletion":                        {kind: kopf.WebhookMutating, operations: []string{"DELETE"}, param: "strict", hasWhen: true},
		"pod_images":                         {kind: kopf.WebhookValidating, operations: []string{"CREATE"}, hasWhen: true},
		"pod_images_on_update/spec.nodeName": {kind: kopf.WebhookValidating, operations: []string{"UPDATE"}},
		"pod_defaults":                       {kind: kopf.WebhookMutating, hasWhen: true},
	}
	byID := map[string]*kopf.WebhookHandler{}
	for _, h := range r.WebhookHandlers("") {
		byID[h.ID] = h
		got := opts{h.Kind, h.Operations, h.Subresource, h.Persistent, h.SideEffects, h.IgnoreFailures, h.Param, h.When != nil}
		if w, ok := want[h.ID]; !ok || !reflect.DeepEqual(got, w) {
			t.Errorf("%s: %+v, want %+v", h.ID, got, w)
		}
	}
	if len(byID) != len(want) {
		t.Fatalf("%d webhook handlers, want %d", len(byID), len(want))
	}
	ctx := context.Background()
	ex := kopf.Body{"apiVersion": "kopf.dev/v1", "kind": "KopfExample",
		"metadata": map[string]any{"name": "ex", "labels": map[string]any{"somelabel": "somevalue"}},
		"spec":     map[string]any{"field": "wrong"}}

	kw := kwargs(ex, "CREATE")
	if err := byID["authhook"].Fn(ctx, kw); err != nil || !reflect.DeepEqual(*kw.Warnings, []string{"Accessing as user-agent: kube-apiserver"}) {
		t.Errorf("authhook: %v, warnings %q", err, *kw.Warnings)
	}
	var aerr *kopf.AdmissionError
	if err := byID["validate1"].Fn(ctx, kwargs(ex, "CREATE")); !errors.As(err, &aerr) || aerr.Message != "Meh! I don't like it. Change the field." {
		t.Errorf("validate1: %v, want its AdmissionError", err)
	}
	dry := kwargs(ex, "CREATE")
	dry.DryRun = true
	if err := byID["validate1"].Fn(ctx, dry); err != nil {
		t.Errorf("validate1 in a dry run: %v", err)
	}
	if err := byID["validate2/spec.field"].Fn(ctx, kwargs(ex, "CREATE")); !errors.As(err, &aerr) || aerr.Code != 555 {
		t.Errorf("validate2: %v, want code 555", err)
	}
	kw = kwargs(ex, "CREATE")
	if err := byID["mutate1"].Fn(ctx, kw); err != nil || !reflect.DeepEqual(kw.Patch, kopf.Patch{"spec": map[string]any{"injected": 123}}) {
		t.Errorf("mutate1: %v, patch %v", err, kw.Patch)
	}
	if h := byID["on-deletion"]; h.When(kwargs(ex, "DELETE")) != true {
		t.Error("on-deletion: when= is false for an unprotected object")
	}

	pod := kopf.Body{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": "p"},
		"spec": map[string]any{"containers": []any{map[string]any{"name": "main"}}}}
	if h := byID["pod_images"]; !h.When(kwargs(pod, "CREATE")) {
		t.Error("pod_images: the typed when= sees no containers")
	}
	if err := byID["pod_images"].Fn(ctx, kwargs(pod, "CREATE")); err == nil || err.Error() != "container main has no image" {
		t.Errorf("pod_images: %v, want the typed handler's error", err)
	}
	kw = kwargs(pod, "CREATE")
	if err := byID["pod_defaults"].Fn(ctx, kw); err != nil || !reflect.DeepEqual(kw.Patch, kopf.Patch{"spec": map[string]any{"serviceAccountName": "default"}}) {
		t.Errorf("pod_defaults: %v, patch %v", err, kw.Patch)
	}
}
