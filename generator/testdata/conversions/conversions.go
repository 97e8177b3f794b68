// Package conversions converts Gadgets between their versions, v1alpha1
// (a spoke) and v1 (the storage version, the hub), which renamed a field.
package conversions

import (
	"example.com/golden/conversions/v1"
	"example.com/golden/conversions/v1alpha1"
)

// GadgetV1alpha1ToV1 converts a v1alpha1 Gadget to the hub.
//
//kopf:conversion
func GadgetV1alpha1ToV1(src *v1alpha1.Gadget, dst *v1.Gadget) error {
	dst.Spec.Color = src.Spec.Colour
	return nil
}

// GadgetV1ToV1alpha1 converts a Gadget of the hub to v1alpha1.
//
//kopf:conversion
func GadgetV1ToV1alpha1(src *v1.Gadget, dst *v1alpha1.Gadget) error {
	dst.Spec.Colour = src.Spec.Color
	return nil
}
