// Package v1 holds the Go types of Kopf's example resource, kopfexamples
// of kopf.dev/v1 (../../../crd.yaml), for the examples that use it typed.
//
// kopf-gen generates their DeepCopy methods, their scheme registration
// (zz_generated.register.go: SchemeGroupVersion, AddToScheme) and, with
// --clients, their typed clientset and apply configurations in
// examples/generated: `make generate` at the top of the repository runs
// the line below for every example.
//
// Their +kubebuilder markers make the CRD that `kopf-gen --manifests`
// writes from them Kopf's (../../../crd.yaml): its short names, the status
// subresource, the unknown fields kept in spec, the printer columns; the
// test of the examples as deployed (e2e/deployed) applies that CRD.
//
// +k8s:deepcopy-gen=package
package v1

//go:generate go tool kopf-gen --deepcopy --clients=../../../generated
