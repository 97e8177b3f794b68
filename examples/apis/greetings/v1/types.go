package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Greeting is a greetings.kopf.dev object as of v1, the version that the
// API server stores.
//
// +kubebuilder:subresource:status
// +genclient
// +kubebuilder:storageversion
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
//
//kopf:resource greetings.kopf.dev/v1/greetings
type Greeting struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec GreetingSpec `json:"spec,omitempty"`
	// Status keeps the handlers' results and the operator's progress, as
	// JSON: a conversion copies it as it is.
	//
	// +kubebuilder:pruning:PreserveUnknownFields
	Status *runtime.RawExtension `json:"status,omitempty"`
}

// GreetingSpec is the spec of a Greeting as of v1.
type GreetingSpec struct {
	// Greetee is who is greeted (v1alpha1's Name).
	Greetee string `json:"greetee,omitempty"`
}

// GreetingList is a list of Greeting objects.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type GreetingList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []Greeting `json:"items"`
}
