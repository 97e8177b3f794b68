package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Widget is the Go type of widgets.example.com objects: handlers of
// widgets get kw.Object as a *Widget.
//
// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:subresource:status
//
//kopf:resource example.com/v1alpha1/widgets
type Widget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   WidgetSpec   `json:"spec,omitempty"`
	Status WidgetStatus `json:"status,omitempty"`
}

// WidgetSpec is the desired state of a Widget.
type WidgetSpec struct {
	// Greeting is what the operator says to the object.
	// +kubebuilder:validation:MaxLength=64
	// +optional
	Greeting string `json:"greeting,omitempty"`
}

// WidgetStatus is the observed state of a Widget. kopf-go stores what
// each handler returns under the handler's id, and its own progress under
// kopf: the CRD keeps the fields that are not declared here.
type WidgetStatus struct {
	// Create is what the Create handler returned, under its id "create".
	// +optional
	Create *Greeting `json:"create,omitempty"`
	// Update is what the Update handler returned last, under its id "update".
	// +optional
	Update *UpdateResult `json:"update,omitempty"`
	// Conditions are the latest observations of the object's state, in the
	// shape that kubectl wait and GitOps tools read: the handlers set them
	// with kw.SetCondition (Ready, with the generation they saw).
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// Greeting is the result of the Create handler.
type Greeting struct {
	Message string `json:"message"`
}

// UpdateResult is the result of the Update handler.
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
