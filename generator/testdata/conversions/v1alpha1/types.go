// Package v1alpha1 is the v1alpha1 version of Gadget.
package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Gadget is a gadget, as of v1alpha1.
//
//kopf:resource example.com/v1alpha1/Gadget
type Gadget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec GadgetSpec `json:"spec"`
}

// GadgetSpec is the spec of a Gadget.
type GadgetSpec struct {
	Colour string `json:"colour"`
}
