// Package v1alpha1 is the first version of the example of versioned APIs
// (../../../versions): greetings of greetings.kopf.dev/v1alpha1, which named the
// greeted one spec.name. It is served, not stored: v1 is the storage
// version, and the operator converts between the two.
//
// +k8s:deepcopy-gen=package
package v1alpha1
