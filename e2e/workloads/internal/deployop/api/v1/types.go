package v1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// WebApp is a webapps.e2e.kopf.dev object: an application that the
// operator runs as a Deployment of its own, and whose readiness it reports.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:subresource:status
//
//kopf:resource e2e.kopf.dev/v1/webapps
type WebApp struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   WebAppSpec   `json:"spec,omitempty"`
	Status WebAppStatus `json:"status,omitempty"`
}

// WebAppSpec is the desired state of a WebApp. Its rules are checked by
// the API server (CEL, in the CRD), so an invalid WebApp never reaches
// the operator.
//
// +kubebuilder:validation:XValidation:rule="self.replicas <= 100",message="a WebApp runs at most 100 replicas"
// +kubebuilder:validation:AtMostOneOf=command;args
type WebAppSpec struct {
	// Image is the image of the application's containers.
	// +kubebuilder:validation:MinLength=1
	Image string `json:"image"`
	// Replicas is how many pods run the application.
	// +kubebuilder:validation:Minimum=0
	Replicas int32 `json:"replicas"`
	// Command replaces the image's entrypoint (or Args its arguments; not
	// both).
	// +optional
	Command []string `json:"command,omitempty"`
	// Args are the arguments of the image's entrypoint.
	// +optional
	Args []string `json:"args,omitempty"`
}

// WebAppStatus is the observed state of a WebApp, read from its
// Deployment's status. kopf-go's own progress and the handlers' results
// live there too: the CRD keeps the fields that are not declared here.
type WebAppStatus struct {
	// Replicas is the number of the Deployment's pods.
	// +optional
	Replicas int32 `json:"replicas,omitempty"`
	// ReadyReplicas is the number of the Deployment's pods that are ready.
	// +optional
	ReadyReplicas int32 `json:"readyReplicas,omitempty"`
}

// WebAppList is a list of WebApp objects.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type WebAppList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []WebApp `json:"items"`
}
