// Package v1 is version v1 of the kopf.dev API, with a typed client:
// kopf-gen generates its scheme registration and, with --clients, its
// clientset and apply configurations (../../generated).
//
// +k8s:deepcopy-gen=package
package v1
