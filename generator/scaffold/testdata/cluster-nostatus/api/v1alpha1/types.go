package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Widget is the Go type of widgets.example.com objects: handlers of
// widgets get kw.Object as a *Widget.
// Widget is cluster-scoped: its objects have no namespace.
// It has no status subresource: the operator writes the handlers' results
// (status.<handler id>) and its progress with the rest of the object.
//
// +genclient
// +genclient:nonNamespaced
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:resource:scope=Cluster
//
//kopf:resource example.com/v1alpha1/widgets
type Widget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec WidgetSpec `json:"spec,omitempty"`
}

// WidgetSpec is the desired state of a Widget.
type WidgetSpec struct {
	// Greeting is what the operator says to the object.
	// +kubebuilder:validation:MaxLength=64
	// +optional
	Greeting string `json:"greeting,omitempty"`
}

// Greeting is the result of the Create handler, stored in
// status.create.
type Greeting struct {
	Message string `json:"message"`
}

// UpdateResult is the result of the Update handler, stored in
// status.update.
type UpdateResult struct {
	// Changes is the number of changes to the spec, labels and annotations.
	Changes int `json:"changes"`
}

// WidgetList is a list of Widget objects.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type WidgetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []Widget `json:"items"`
}
