package v1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// KopfExample is a kopfexamples.kopf.dev object: handlers of kopfexamples
// in a package that imports this one get kw.Object as a *KopfExample.
//
// Kopf's CRD keeps unknown fields in spec and status: fields that are not
// declared here are dropped when an object is decoded into this type, so
// write to such objects with apply configurations or patches, never with
// an update of a decoded object (see docs/clients.md).
//
// +kubebuilder:resource:shortName=kopfexes;kopfex;kexes;kex
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="Duration",type=string,priority=0,JSONPath=".spec.duration",description="For how long the pod should sleep."
// +kubebuilder:printcolumn:name="Children",type=string,priority=0,JSONPath=".status.create_fn.children",description="The children pods created."
// +kubebuilder:printcolumn:name="Message",type=string,priority=0,JSONPath=".status.create_fn.message",description="As returned from the handler (sometimes)."
//
// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
//
//kopf:resource kopf.dev/v1/kopfexamples
type KopfExample struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   KopfExampleSpec   `json:"spec,omitempty"`
	Status KopfExampleStatus `json:"status,omitempty"`
}

// KopfExampleSpec is the spec of Kopf's example object (../../../obj.yaml).
//
// +kubebuilder:pruning:PreserveUnknownFields
type KopfExampleSpec struct {
	// Duration is how long the example's children sleep, e.g. "1m".
	Duration string `json:"duration,omitempty"`
	// Field is a value that the examples' handlers read.
	Field string `json:"field,omitempty"`
	// Items are values that the examples' handlers read.
	Items []string `json:"items,omitempty"`
}

// KopfExampleStatus is the part of a KopfExample's status that the
// examples read typed: what the handler create_fn returned (Kopf's CRD
// shows its children and message as printer columns). Kopf's progress
// and the other handlers' results live there too, untyped.
type KopfExampleStatus struct {
	CreateFn *CreateFnStatus `json:"create_fn,omitempty"`
	// Message is a message that a handler may apply.
	Message string `json:"message,omitempty"`
}

// CreateFnStatus is the result of a create_fn handler.
type CreateFnStatus struct {
	Children []string `json:"children,omitempty"`
	Message  string   `json:"message,omitempty"`
}

// KopfExampleList is a list of KopfExample objects.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type KopfExampleList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []KopfExample `json:"items"`
}
