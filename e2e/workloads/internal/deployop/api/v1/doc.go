// Package v1 holds the Go type of the WebApp resource (webapps of
// e2e.kopf.dev/v1) that the operator deployop manages: kopf-gen generates
// its CRD (../../config/crd/), DeepCopy methods and scheme registration.
//
// +k8s:deepcopy-gen=package
// +groupName=e2e.kopf.dev
package v1
