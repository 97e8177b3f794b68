// Package envtest starts a real, local Kubernetes control plane (etcd and
// kube-apiserver, no controllers, no nodes) for the tests of an operator:
// its handlers run against the API server they will meet in a cluster,
// with its validation, admission, resourceVersions, finalizers and watch
// streams, none of which a fake client reproduces.
//
// With WithControllers, it is a fuller one: kube-controller-manager
// (garbage collection, namespace deletion, service accounts, Deployments,
// ReplicaSets, Jobs, ...), kube-scheduler, and kwok, which simulates a Node
// whose pods become Running and Ready and are deleted as a kubelet deletes
// them (no container runs). It costs a few seconds more at start and some
// CPU while it runs: the API server alone is the default, the fuller one is
// for the tests whose behaviour depends on it.
//
// It is a thin layer over controller-runtime's envtest, which starts and
// stops etcd and kube-apiserver, and is compatible with it: the same
// binaries, found the same way ($KUBEBUILDER_ASSETS), in the same layout
// as setup-envtest's.
// What it adds is what kopf-go's own tests and an operator's tests need
// every time: the binaries found without configuration where `kopf-gen
// envtest` builds them (Assets), an error that names the fix when they are
// missing, CRDs installed from files or directories and served before
// Start returns (WithCRDs), any manifest applied with the same wait
// (Apply), admin and per-user client configurations and kubeconfigs, and
// the controllers, scheduler and simulated node of WithControllers, which
// controller-runtime's envtest does not start.
//
// It lives in a module of its own (github.com/kopf-go/kopf/envtest)
// because controller-runtime is a large dependency that an operator's
// binary must never carry: only the operator's tests require this module.
// It does not depend on kopf-go's runtime; package kopftest (in the runtime
// module) runs an operator against the Config it returns.
package envtest
