package v1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// KopfExample is the Go type of Kopf's example resource.
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

// KopfExampleSpec is the spec of a KopfExample.
type KopfExampleSpec struct {
	Duration string   `json:"duration,omitempty"`
	Field    string   `json:"field,omitempty"`
	Items    []string `json:"items,omitempty"`
	// Resources are a type of k8s.io/api: its apply configuration is
	// client-go's.
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`
}

// KopfExampleStatus is the status of a KopfExample.
type KopfExampleStatus struct {
	CreateFn *Result `json:"create_fn,omitempty"`
}

// Result is what a handler returned.
type Result struct {
	Message string `json:"message,omitempty"`
}

// KopfExampleList is a list of KopfExamples.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type KopfExampleList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []KopfExample `json:"items"`
}

// Cluster is a cluster-scoped resource without a status subresource.
//
// +genclient
// +genclient:nonNamespaced
// +genclient:noStatus
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:resource:scope=Cluster
//
//kopf:resource kopf.dev/v1/clusters
type Cluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec ClusterSpec `json:"spec,omitempty"`
}

// ClusterSpec is the spec of a Cluster.
type ClusterSpec struct {
	Nodes int32 `json:"nodes"`
}

// ClusterList is a list of Clusters.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type ClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []Cluster `json:"items"`
}
