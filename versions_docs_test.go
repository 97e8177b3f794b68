package kopf_test

// The conversions of docs/versions.md, registered by hand, and their
// round-trip test, compiled (and run) here.

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kopf-go/kopf"
	"github.com/kopf-go/kopf/kopftest"
)

// widgetV1alpha1 and widgetV1 stand for v1alpha1.Widget and v1.Widget of
// a user's API packages: v1alpha1's spec.oldName is v1's spec.newName.
type widgetV1alpha1 struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              struct {
		Size    int64  `json:"size,omitempty"`
		OldName string `json:"oldName,omitempty"`
	} `json:"spec"`
	Status map[string]any `json:"status,omitempty"`
}

type widgetV1 struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              struct {
		Size    int64  `json:"size,omitempty"`
		NewName string `json:"newName,omitempty"`
	} `json:"spec"`
	Status map[string]any `json:"status,omitempty"`
}

func widgetV1alpha1ToV1(src *widgetV1alpha1, dst *widgetV1) error {
	dst.Spec.Size, dst.Spec.NewName = src.Spec.Size, src.Spec.OldName
	dst.Status = src.Status
	return nil
}

func widgetV1ToV1alpha1(src *widgetV1, dst *widgetV1alpha1) error {
	dst.Spec.Size, dst.Spec.OldName = src.Spec.Size, src.Spec.NewName
	dst.Status = src.Status
	return nil
}

// registerConversions is what kopf-gen generates for a kind with a hub
// and one spoke.
func registerConversions(r *kopf.Registry) error {
	return r.AddConversion(kopf.Conversion{
		Group: "kopf.dev", Kind: "Widget", Hub: "v1", Spoke: "v1alpha1",
		ToHub:   kopf.TypedConversionFunc(widgetV1alpha1ToV1),
		FromHub: kopf.TypedConversionFunc(widgetV1ToV1alpha1),
	})
}

func TestWidgetConversions(t *testing.T) {
	kopftest.RoundTrip(t, widgetV1alpha1ToV1, widgetV1ToV1alpha1)
}

func TestVersionsDocRegisters(t *testing.T) {
	r := kopf.NewRegistry()
	if err := registerConversions(r); err != nil || len(r.Conversions()) != 1 {
		t.Fatalf("registration: %v, %d conversions", err, len(r.Conversions()))
	}
}
