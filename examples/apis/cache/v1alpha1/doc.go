// Package v1alpha1 holds the Go types of operator-sdk's tutorial resource,
// memcacheds of cache.example.com/v1alpha1, as its memcached-operator
// declares them (api/v1alpha1/memcached_types.go), for examples/memcached:
// kopf-gen generates their CRD (../../../memcached/config/crd/, with the
// validation of their +kubebuilder markers), DeepCopy methods, scheme
// registration and, with --clients, their typed clientset and apply
// configurations in examples/generated (`make generate` at the top of
// the repository).
//
// +k8s:deepcopy-gen=package
// +groupName=cache.example.com
package v1alpha1
