// Package v1 is the storage version of the example of versioned APIs
// (../../../versions): greetings of greetings.kopf.dev/v1, which renamed v1alpha1's
// spec.name to spec.greetee.
//
// +k8s:deepcopy-gen=package
package v1
