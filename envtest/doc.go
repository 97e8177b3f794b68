// Package envtest starts a real, local Kubernetes control plane (etcd and
// kube-apiserver, no controllers, no nodes) for the tests of an operator:
// its handlers run against the API server they will meet in a cluster,
// with its validation, admission, resourceVersions, finalizers and watch
// streams, none of which a fake client reproduces.
//
// It is a thin layer over controller-runtime's envtest, which starts and
// stops the processes, and is compatible with it: the same binaries, found
// the same way ($KUBEBUILDER_ASSETS), in the same layout as setup-envtest's.
// What it adds is what kopf-go's own tests and an operator's tests need
// every time: the binaries found without configuration where `kopf-gen
// envtest` builds them (Assets), an error that names the fix when they are
// missing, CRDs installed from files or directories and served before
// Start returns (WithCRDs), any manifest applied with the same wait
// (Apply), admin and per-user client configurations and kubeconfigs.
//
// It lives in a module of its own (github.com/kopf-go/kopf/envtest)
// because controller-runtime is a large dependency that an operator's
// binary must never carry: only the operator's tests require this module.
// It does not depend on kopf-go's runtime; package kopftest (in the runtime
// module) runs an operator against the Config it returns.
package envtest
