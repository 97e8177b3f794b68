// Package v1 declares a typed resource in a package of its own, as
// kubebuilder lays projects out. It has no handlers, so it gets no
// generated file.
package v1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Color is the color of a Widget.
type Color string

// The colors.
const (
	Blue Color = "blue"
	Red  Color = "red"
)

// Widget is the Go type of widgets. The marker names the kind: handlers
// select it as Widget or widget.
//
//kopf:resource example.com/v1alpha1/Widget
type Widget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec WidgetSpec `json:"spec"`
}

// WidgetSpec is the spec of a Widget.
type WidgetSpec struct {
	Color Color             `json:"color"`
	Parts map[string]Part   `json:"parts,omitempty"`
	Notes map[string]string `json:"notes,omitempty"`
}

// Part is a part of a widget.
type Part struct {
	Count int `json:"count"`
}
