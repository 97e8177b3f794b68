package cluster

import "sigs.k8s.io/controller-runtime/pkg/envtest"

// Option changes how StartDetached starts the control plane.
type Option func(*envtest.Environment)

// WithAPIServerFlag sets a kube-apiserver command-line flag, named without
// its leading dashes (e.g. "audit-log-path"), replacing envtest's value if
// it sets one. The flag stays in force when StopAPIServer and
// StartAPIServer restart the server.
func WithAPIServerFlag(name, value string) Option {
	return func(env *envtest.Environment) {
		env.ControlPlane.GetAPIServer().Configure().Set(name, value)
	}
}
