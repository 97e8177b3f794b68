package registry

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func nopConversion(_ context.Context, obj map[string]any) (map[string]any, error) { return obj, nil }

func conversionOf(hub, spoke string) Conversion {
	return Conversion{Group: "kopf.dev", Kind: "Widget", Hub: hub, Spoke: spoke, ToHub: nopConversion, FromHub: nopConversion}
}

func TestAddConversion(t *testing.T) {
	noGroup := conversionOf("v1", "v1alpha1")
	noGroup.Group = ""
	noFn := conversionOf("v1", "v1alpha1")
	noFn.FromHub = nil
	otherKind := conversionOf("v2", "v1alpha1")
	otherKind.Kind = "Gadget"
	tests := []struct {
		name    string
		first   []Conversion
		c       Conversion
		wantErr string
	}{
		{"ok", nil, conversionOf("v1", "v1alpha1"), ""},
		{"second spoke", []Conversion{conversionOf("v1", "v1alpha1")}, conversionOf("v1", "v1beta1"), ""},
		{"another kind's hub", []Conversion{conversionOf("v1", "v1alpha1")}, otherKind, ""},
		{"no group", nil, noGroup, "no group or kind"},
		{"no hub", nil, conversionOf("", "v1alpha1"), "no hub or spoke"},
		{"no spoke", nil, conversionOf("v1", ""), "no hub or spoke"},
		{"no function", nil, noFn, "lacks a function"},
		{"hub is spoke", nil, conversionOf("v1", "v1"), "its own spoke"},
		{"duplicate", []Conversion{conversionOf("v1", "v1alpha1")}, conversionOf("v1", "v1alpha1"), "registered twice"},
		{"two hubs", []Conversion{conversionOf("v1", "v1alpha1")}, conversionOf("v2", "v1beta1"), "two hubs"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := New()
			for _, c := range tt.first {
				if err := r.AddConversion(c); err != nil {
					t.Fatal(err)
				}
			}
			err := r.AddConversion(tt.c)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				if !r.HasConversions() || len(r.Conversions()) != len(tt.first)+1 {
					t.Errorf("conversions: %d, want %d", len(r.Conversions()), len(tt.first)+1)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("error %v, want one with %q", err, tt.wantErr)
			}
		})
	}
	if New().HasConversions() {
		t.Error("an empty registry has conversions")
	}
}

type widgetOld struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              struct {
		Size int    `json:"size"`
		Old  string `json:"oldName,omitempty"`
	} `json:"spec"`
}

type widgetNew struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              struct {
		Size int    `json:"size"`
		New  string `json:"newName,omitempty"`
	} `json:"spec"`
}

func TestTypedConversionFunc(t *testing.T) {
	fn := TypedConversionFunc(func(src *widgetOld, dst *widgetNew) error {
		if src.Spec.Old == "bad" {
			return errors.New("refused")
		}
		dst.Spec.Size = src.Spec.Size
		dst.Spec.New = src.Spec.Old
		return nil
	})
	obj := map[string]any{
		"apiVersion": "kopf.dev/v1alpha1", "kind": "Widget",
		"metadata": map[string]any{"name": "w", "namespace": "ns", "uid": "u-1",
			"labels": map[string]any{"a": "b"}, "generation": int64(3)},
		"spec": map[string]any{"size": int64(2), "oldName": "x"},
	}
	got, err := fn(context.Background(), obj)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"metadata": map[string]any{"name": "w", "namespace": "ns", "uid": "u-1",
			"labels": map[string]any{"a": "b"}, "generation": int64(3)},
		"spec": map[string]any{"size": int64(2), "newName": "x"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("converted:\n%#v\nwant\n%#v", got, want)
	}
	if obj["spec"].(map[string]any)["oldName"] != "x" {
		t.Error("the input object was changed")
	}
	bad := map[string]any{"spec": map[string]any{"oldName": "bad"}}
	if _, err := fn(context.Background(), bad); err == nil || err.Error() != "refused" {
		t.Errorf("the function's error: %v", err)
	}
	undecodable := map[string]any{"spec": map[string]any{"size": "two"}}
	if _, err := fn(context.Background(), undecodable); err == nil || !strings.Contains(err.Error(), "decoding the object as *registry.widgetOld") {
		t.Errorf("an undecodable object: %v", err)
	}
}
