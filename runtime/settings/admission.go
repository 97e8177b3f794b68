package settings

import "time"

// Admission configures admission webhooks (Kopf's settings.admission):
// how the API server reaches the operator's webhook handlers and whether
// the operator manages their configurations. docs/admission.md.
type Admission struct {
	// Server is how the API server reaches the webhook handlers (Kopf's
	// server). Nil (the default): in a cluster (KUBERNETES_SERVICE_HOST
	// set), an in-cluster Service named "kopf-webhooks" in the operator's
	// namespace, port 443, with the operator listening on :9443; outside
	// of a cluster, none, and an operator with webhook handlers fails at
	// start, as Kopf's does.
	Server *WebhookServer
	// Managed, if set, is the name of the ValidatingWebhookConfiguration
	// and the MutatingWebhookConfiguration that the operator creates and
	// keeps up to date with its handlers (Kopf's managed; a domain-like
	// name such as "auto.kopf.dev": each webhook is named
	// "<handler id>.<Managed>"). "" (the default): the configurations are
	// made by hand.
	Managed string
}

// WebhookServer is the operator's HTTPS server of admission webhooks
// (Kopf's kopf.WebhookServer and its K3d, Minikube and Docker Desktop
// presets, which differ only in Host; with Auto, Kopf's
// kopf.WebhookAutoServer). Its zero value listens on a free port of every
// interface with a certificate of its own in a Secret, and tells the API
// server to call https://127.0.0.1:<that port>/<handler id>.
type WebhookServer struct {
	// Addr and Port are where to listen (Kopf's addr and port): "" is
	// every interface; 0 is a free port (Kopf's), or 9443 behind a
	// Service, whose target port it is (the kopf-webhooks Service and the
	// Deployment's port "webhooks" of kopf-gen's manifests).
	Addr string
	Port int
	// Auto chooses the server for the cluster at hand when the operator
	// starts (Kopf's kopf.WebhookAutoServer): in a cluster
	// (KUBERNETES_SERVICE_HOST set), Service, or the default Service
	// kopf-webhooks; outside, a local server (Service ignored) whose Host,
	// unless set, is the name by which a recognised local cluster reaches
	// this machine (host.k3d.internal for K3d/K3s, host.minikube.internal,
	// host.docker.internal for Docker Desktop, recognised by the API
	// server's certificate and version as Kopf does), else Addr's (a
	// local API server reaches 127.0.0.1).
	Auto bool
	// Path is the root of the handlers' URL paths (Kopf's path): each
	// handler is served at <Path>/<handler id>.
	Path string
	// Host is the host name (or IP address) by which the API server
	// reaches the server, in the webhooks' clientConfig.url and the
	// generated certificate (Kopf's host); "": Addr, or 127.0.0.1 (::1)
	// when Addr is every interface.
	Host string
	// Service, if set, makes the webhooks' clientConfig a Service (for an
	// operator in the cluster) instead of a URL.
	Service *WebhookService

	// CertFile and KeyFile are a serving certificate and its key
	// (PEM) to use instead of a generated one (Kopf's certfile and
	// pkeyfile); they are read again when they change. CAFile is the CA
	// bundle given to the API server (Kopf's cafile); without it, the
	// certificate file is.
	CertFile, KeyFile, CAFile string
	// CertSecret is the Secret where the generated CA and serving
	// certificate are kept and shared by every replica (keys ca.crt,
	// ca.key, tls.crt, tls.key), in CertNamespace. Defaults:
	// "kopf-webhook-cert" (the one Secret that kopf-gen's webhook Role
	// lets the operator read and update), in the Service's namespace, or
	// the operator's namespace in a cluster, or "default".
	CertSecret, CertNamespace string
	// ExtraSANs are more host names and IP addresses for the generated
	// certificate (Kopf's extra_sans).
	ExtraSANs []string
	// CertValidity is how long a generated serving certificate is valid
	// (default: 90 days); it is renewed when a third of that is left.
	// CheckInterval is how often the certificate (the Secret or the files)
	// is checked for a renewal, and the managed configurations checked
	// (default: 1 minute; Kopf's file_check_interval). The replicas'
	// Leases have runtime/leases' timing, not this interval.
	CertValidity  time.Duration
	CheckInterval time.Duration
	// Timeout bounds the handlers of one admission request (0: 30 s, the
	// API server's most); MaxRequestBytes bounds a request's size (0:
	// 7 MiB).
	Timeout         time.Duration
	MaxRequestBytes int64
}

// WebhookService is the Service in front of the operator's webhook server
// (a webhook's clientConfig.service).
type WebhookService struct {
	Name, Namespace string
	// Port is the Service's port (0: 443).
	Port int32
}
