package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// MemcachedSpec is the desired state of a Memcached.
type MemcachedSpec struct {
	// Size is the number of Memcached instances.
	//
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=3
	// +kubebuilder:validation:ExclusiveMaximum=false
	Size int32 `json:"size,omitempty"`

	// ContainerPort is the port that the instances listen on.
	ContainerPort int32 `json:"containerPort,omitempty"`
}

// MemcachedStatus is the observed state of a Memcached.
type MemcachedStatus struct {
	// Conditions are the observations of the Memcached's state: their
	// types are Available, Progressing and Degraded, their status True,
	// False or Unknown, their observedGeneration the generation observed.
	//
	// +listType=map
	// +listMapKey=type
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`
}

// Memcached is a memcacheds.cache.example.com object: handlers of
// memcacheds in a package that imports this one get kw.Object as a
// *Memcached.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +genclient
//
//kopf:resource cache.example.com/v1alpha1/memcacheds
type Memcached struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   MemcachedSpec   `json:"spec,omitempty"`
	Status MemcachedStatus `json:"status,omitempty"`
}

// MemcachedList is a list of Memcached objects.
//
// +kubebuilder:object:root=true
type MemcachedList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Memcached `json:"items"`
}
