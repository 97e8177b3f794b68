package body

import (
	"reflect"
	"testing"
)

func TestBodyParts(t *testing.T) {
	meta := map[string]any{"name": "n"}
	spec := map[string]any{"field": "value"}
	status := map[string]any{"phase": "Ready"}
	tests := []struct {
		name       string
		body       Body
		wantMeta   Meta
		wantSpec   Spec
		wantStatus Status
		apiVersion string
		kind       string
	}{
		{name: "nil body", body: nil},
		{name: "empty body", body: Body{}},
		{
			name:       "full body",
			body:       Body{"apiVersion": "kopf.dev/v1", "kind": "KopfExample", "metadata": meta, "spec": spec, "status": status},
			wantMeta:   meta,
			wantSpec:   spec,
			wantStatus: status,
			apiVersion: "kopf.dev/v1",
			kind:       "KopfExample",
		},
		{
			name: "parts of unexpected types",
			body: Body{"apiVersion": 1, "kind": []any{"x"}, "metadata": "m", "spec": 42, "status": []any{}},
		},
		{
			name: "named map types are not decoded JSON",
			body: Body{"metadata": Meta{"name": "n"}, "spec": Spec{"a": "b"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.body.Meta(); !reflect.DeepEqual(got, tt.wantMeta) {
				t.Errorf("Meta() = %#v, want %#v", got, tt.wantMeta)
			}
			if got := tt.body.Spec(); !reflect.DeepEqual(got, tt.wantSpec) {
				t.Errorf("Spec() = %#v, want %#v", got, tt.wantSpec)
			}
			if got := tt.body.Status(); !reflect.DeepEqual(got, tt.wantStatus) {
				t.Errorf("Status() = %#v, want %#v", got, tt.wantStatus)
			}
			if got := tt.body.APIVersion(); got != tt.apiVersion {
				t.Errorf("APIVersion() = %q, want %q", got, tt.apiVersion)
			}
			if got := tt.body.Kind(); got != tt.kind {
				t.Errorf("Kind() = %q, want %q", got, tt.kind)
			}
		})
	}
}

func TestMetaScalars(t *testing.T) {
	tests := []struct {
		name                                      string
		meta                                      Meta
		wantName, wantNS, wantUID, wantRV, wantDT string
	}{
		{name: "nil meta", meta: nil},
		{
			name: "all set",
			meta: Meta{
				"name": "obj", "namespace": "ns", "uid": "u-1",
				"resourceVersion": "123", "deletionTimestamp": "2026-01-01T00:00:00Z",
			},
			wantName: "obj", wantNS: "ns", wantUID: "u-1", wantRV: "123", wantDT: "2026-01-01T00:00:00Z",
		},
		{
			name: "wrong types give zero values",
			meta: Meta{"name": 1, "namespace": nil, "uid": true, "resourceVersion": 123.0, "deletionTimestamp": map[string]any{}},
		},
		{name: "cluster-scoped", meta: Meta{"name": "obj"}, wantName: "obj"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checks := []struct{ what, got, want string }{
				{"Name", tt.meta.Name(), tt.wantName},
				{"Namespace", tt.meta.Namespace(), tt.wantNS},
				{"UID", tt.meta.UID(), tt.wantUID},
				{"ResourceVersion", tt.meta.ResourceVersion(), tt.wantRV},
				{"DeletionTimestamp", tt.meta.DeletionTimestamp(), tt.wantDT},
			}
			for _, c := range checks {
				if c.got != c.want {
					t.Errorf("%s() = %q, want %q", c.what, c.got, c.want)
				}
			}
		})
	}
}

func TestMetaStringMaps(t *testing.T) {
	tests := []struct {
		name       string
		meta       Meta
		wantLabels map[string]string
		wantAnns   map[string]string
	}{
		{name: "nil meta", meta: nil, wantLabels: map[string]string{}, wantAnns: map[string]string{}},
		{name: "absent", meta: Meta{}, wantLabels: map[string]string{}, wantAnns: map[string]string{}},
		{
			name:       "wrong container type",
			meta:       Meta{"labels": []any{"a"}, "annotations": "x"},
			wantLabels: map[string]string{},
			wantAnns:   map[string]string{},
		},
		{
			name: "non-string values are skipped",
			meta: Meta{
				"labels":      map[string]any{"app": "web", "n": 1.0, "nil": nil},
				"annotations": map[string]any{"a": "1", "b": true},
			},
			wantLabels: map[string]string{"app": "web"},
			wantAnns:   map[string]string{"a": "1"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			labels := tt.meta.Labels()
			if labels == nil {
				t.Fatal("Labels() = nil, want a non-nil map")
			}
			if !reflect.DeepEqual(labels, tt.wantLabels) {
				t.Errorf("Labels() = %v, want %v", labels, tt.wantLabels)
			}
			anns := tt.meta.Annotations()
			if anns == nil {
				t.Fatal("Annotations() = nil, want a non-nil map")
			}
			if !reflect.DeepEqual(anns, tt.wantAnns) {
				t.Errorf("Annotations() = %v, want %v", anns, tt.wantAnns)
			}
		})
	}
}

func TestMetaStringMapsAreCopies(t *testing.T) {
	raw := map[string]any{"app": "web"}
	m := Meta{"labels": raw, "annotations": raw}
	m.Labels()["app"] = "changed"
	m.Annotations()["new"] = "added"
	if want := map[string]any{"app": "web"}; !reflect.DeepEqual(raw, want) {
		t.Errorf("the body was modified through a copy: %v, want %v", raw, want)
	}
}

func TestMetaFinalizers(t *testing.T) {
	tests := []struct {
		name string
		meta Meta
		want []string
	}{
		{name: "nil meta", meta: nil, want: []string{}},
		{name: "absent", meta: Meta{}, want: []string{}},
		{name: "wrong type", meta: Meta{"finalizers": []string{"typed"}}, want: []string{}},
		{
			name: "in order, non-strings skipped",
			meta: Meta{"finalizers": []any{"kopf.zalando.org/KopfFinalizerMarker", 1.0, "other"}},
			want: []string{"kopf.zalando.org/KopfFinalizerMarker", "other"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.meta.Finalizers()
			if got == nil {
				t.Fatal("Finalizers() = nil, want a non-nil slice")
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Finalizers() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestBodyRef(t *testing.T) {
	tests := []struct {
		name string
		body Body
		want string
	}{
		{name: "nil body", body: nil, want: ""},
		{name: "namespaced", body: Body{"metadata": map[string]any{"name": "obj", "namespace": "ns"}}, want: "ns/obj"},
		{name: "cluster-scoped", body: Body{"metadata": map[string]any{"name": "obj"}}, want: "obj"},
		{name: "empty namespace", body: Body{"metadata": map[string]any{"name": "obj", "namespace": ""}}, want: "obj"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.body.Ref(); got != tt.want {
				t.Errorf("Ref() = %q, want %q", got, tt.want)
			}
		})
	}
}
