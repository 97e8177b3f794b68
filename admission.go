package kopf

import (
	"context"

	"github.com/kopf-go/kopf/runtime/admission"
	"github.com/kopf-go/kopf/runtime/kwargs"
	"github.com/kopf-go/kopf/runtime/registry"
	"github.com/kopf-go/kopf/runtime/settings"
)

// Admission webhooks (Kopf's @kopf.on.validate and @kopf.on.mutate): see
// docs/admission.md and package runtime/admission.
type (
	// WebhookHandler is one validating or mutating admission handler.
	WebhookHandler = registry.WebhookHandler
	// WebhookFn is the function behind a WebhookHandler.
	WebhookFn = registry.WebhookFn
	// WebhookKind says whether a webhook handler validates or mutates.
	WebhookKind = registry.WebhookKind
	// AdmissionKwargs are the arguments of an admission handler of a
	// resource without a Go type (the body-only form).
	AdmissionKwargs = kwargs.Admission
	// AdmissionError refuses the request under admission with a message
	// and a code (Kopf's kopf.AdmissionError; a zero Code is 500).
	AdmissionError = admission.Error
)

// TypedAdmissionKwargs are the arguments of an admission handler of a
// resource whose objects are of the Go type T: every kwarg of
// AdmissionKwargs, with the object and the old and new objects decoded as
// T.
type TypedAdmissionKwargs[T any] = kwargs.TypedAdmission[T]

// The kinds of webhook handlers.
const (
	WebhookValidating = registry.WebhookValidating // @kopf.on.validate
	WebhookMutating   = registry.WebhookMutating   // @kopf.on.mutate
)

// NewAdmissionError returns an AdmissionError: Kopf's
// kopf.AdmissionError(message, code=code); code 0 means 500.
func NewAdmissionError(message string, code int) error { return admission.NewError(message, code) }

// AdmissionFunc adapts an admission handler of AdmissionKwargs.
func AdmissionFunc(fn func(context.Context, AdmissionKwargs) error) WebhookFn {
	return registry.AdmissionFunc(fn)
}

// TypedAdmissionFunc adapts an admission handler of a resource of Go type
// T: the objects are decoded once per request; one that does not decode
// as T is the handler's error.
func TypedAdmissionFunc[T any](fn func(context.Context, TypedAdmissionKwargs[T]) error) WebhookFn {
	return registry.TypedAdmissionFunc(fn)
}

// Admission servers (Kopf's settings.admission.server).
type (
	// WebhookServer is the operator's HTTPS server of admission webhooks
	// (Kopf's kopf.WebhookServer): where it listens, how the API server
	// reaches it, its certificate.
	WebhookServer = settings.WebhookServer
	// WebhookService is the Service in front of an in-cluster webhook
	// server.
	WebhookService = settings.WebhookService
)

// WithWebhookServer serves the admission webhooks with the server s
// (Kopf's settings.admission.server = kopf.WebhookServer(...)).
func WithWebhookServer(s WebhookServer) Option {
	return WithSettings(func(st *Settings) { st.Admission.Server = &s })
}

// WithManagedWebhooks makes the operator create and keep the
// ValidatingWebhookConfiguration and MutatingWebhookConfiguration named
// name (Kopf's settings.admission.managed), e.g. "auto.kopf.dev".
func WithManagedWebhooks(name string) Option {
	return WithSettings(func(st *Settings) { st.Admission.Managed = name })
}

// WebhookK3dServer is s reached from a K3d cluster through the host
// host.k3d.internal (Kopf's kopf.WebhookK3dServer), unless s has a Host.
func WebhookK3dServer(s WebhookServer) WebhookServer { return withHost(s, admission.K3dHost) }

// WebhookMinikubeServer is s reached from a Minikube cluster through the
// host host.minikube.internal (Kopf's kopf.WebhookMinikubeServer).
func WebhookMinikubeServer(s WebhookServer) WebhookServer {
	return withHost(s, admission.MinikubeHost)
}

// WebhookDockerDesktopServer is s reached from Docker Desktop's cluster
// through the host host.docker.internal (Kopf's
// kopf.WebhookDockerDesktopServer).
func WebhookDockerDesktopServer(s WebhookServer) WebhookServer {
	return withHost(s, admission.DockerDesktopHost)
}

// WebhookAutoServer is s chosen for the cluster at hand when the
// operator starts (Kopf's kopf.WebhookAutoServer): in a cluster, behind
// s.Service (or the Service kopf-webhooks); outside, a local server on a
// free port (unless s.Port), reached through the host name of a
// recognised local cluster (K3d/K3s, Minikube, Docker Desktop) or at
// 127.0.0.1. See WebhookServer.Auto.
func WebhookAutoServer(s WebhookServer) WebhookServer {
	s.Auto = true
	return s
}

func withHost(s WebhookServer, host string) WebhookServer {
	if s.Host == "" {
		s.Host = host
	}
	return s
}
