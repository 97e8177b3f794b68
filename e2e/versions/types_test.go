package versions

import (
	"errors"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kopf-go/kopf"
)

// The two versions of Widget, as a user's API packages declare them
// (here in one package, as v1alpha1.Widget and v1.Widget would be).

type WidgetV1alpha1 struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              WidgetV1alpha1Spec `json:"spec,omitempty"`
	Status            map[string]any     `json:"status,omitempty"`
}

type WidgetV1alpha1Spec struct {
	Size    int64  `json:"size,omitempty"`
	OldName string `json:"oldName,omitempty"`
}

type WidgetV1 struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              WidgetV1Spec   `json:"spec,omitempty"`
	Status            map[string]any `json:"status,omitempty"`
}

type WidgetV1Spec struct {
	Size    int64  `json:"size,omitempty"`
	NewName string `json:"newName,omitempty"`
}

// badName is a name that the conversions refuse, and panicName one at
// which they panic: the bad conversions of the tests.
const (
	badName   = "break-me"
	panicName = "panic-me"
)

// WidgetV1alpha1ToV1 is the spoke's conversion to the hub.
func WidgetV1alpha1ToV1(src *WidgetV1alpha1, dst *WidgetV1) error {
	switch src.Spec.OldName {
	case badName:
		return errors.New("the name break-me cannot be converted")
	case panicName:
		panic("a conversion that panics")
	}
	dst.Spec = WidgetV1Spec{Size: src.Spec.Size, NewName: src.Spec.OldName}
	dst.Status = src.Status
	return nil
}

// WidgetV1ToV1alpha1 is the hub's conversion to the spoke.
func WidgetV1ToV1alpha1(src *WidgetV1, dst *WidgetV1alpha1) error {
	if src.Spec.NewName == badName {
		return errors.New("the name break-me cannot be converted")
	}
	dst.Spec = WidgetV1alpha1Spec{Size: src.Spec.Size, OldName: src.Spec.NewName}
	dst.Status = src.Status
	return nil
}

// addConversions registers the conversions as generated code would.
func addConversions(r *kopf.Registry) error {
	return r.AddConversion(kopf.Conversion{
		Group: "versions.kopf.dev", Kind: "Widget", Hub: "v1", Spoke: "v1alpha1",
		ToHub:   kopf.TypedConversionFunc(WidgetV1alpha1ToV1),
		FromHub: kopf.TypedConversionFunc(WidgetV1ToV1alpha1),
	})
}
