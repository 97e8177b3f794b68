package kopf_test

// The admission webhooks of docs/admission.md, registered by hand,
// compiled here.

import (
	"context"
	"errors"
	"os"

	"github.com/kopf-go/kopf"
)

// validate1 refuses a KopfExample whose spec.field is "wrong", unless
// the request is a dry run (Kopf's examples/17-admission).
func validate1(ctx context.Context, kw kopf.AdmissionKwargs) error {
	if !kw.DryRun && kw.Spec["field"] == "wrong" {
		return kopf.NewAdmissionError("Meh! I don't like it. Change the field.", 400)
	}
	if kw.Status["field"] != kw.Spec["field"] {
		kw.Warn("Also update status.field to match spec.field.")
	}
	return nil
}

// mutate1 injects spec.injected into the KopfExamples labelled
// somelabel=somevalue.
func mutate1(ctx context.Context, kw kopf.AdmissionKwargs) error {
	kw.Patch.Spec()["injected"] = 123
	return nil
}

// registerWebhooks registers both, as kopf-gen's code would.
func registerWebhooks(r *kopf.Registry) error {
	kex := kopf.Selector{Group: "kopf.dev", Version: "v1", Name: "kopfexamples"}
	return errors.Join(
		r.AddWebhook(kopf.WebhookHandler{
			ID: "validate1", Kind: kopf.WebhookValidating, Selector: kex,
			Fn: kopf.AdmissionFunc(validate1),
		}),
		r.AddWebhook(kopf.WebhookHandler{
			ID: "mutate1", Kind: kopf.WebhookMutating, Selector: kex,
			Operations: []string{"CREATE", "UPDATE"},
			Filter:     kopf.Filter{Labels: map[string]kopf.Matcher{"somelabel": kopf.Equal("somevalue")}},
			Fn:         kopf.AdmissionFunc(mutate1),
		}),
	)
}

// An operator serving its webhooks from this machine, with the
// configurations managed.
func ExampleWithWebhookServer() {
	os.Exit(kopf.Main(registerWebhooks,
		kopf.WithWebhookServer(kopf.WebhookServer{Addr: "127.0.0.1", Port: 9443}),
		kopf.WithManagedWebhooks("auto.kopf.dev"),
	))
}

// The same from a K3d cluster: the API server reaches this machine as
// host.k3d.internal.
func ExampleWebhookK3dServer() {
	os.Exit(kopf.Main(registerWebhooks,
		kopf.WithWebhookServer(kopf.WebhookK3dServer(kopf.WebhookServer{Port: 9443})),
		kopf.WithManagedWebhooks("auto.kopf.dev"),
	))
}

// The server chosen for the cluster at hand: in a cluster, the Service
// kopf-webhooks; outside, a local server on a free port, reached through
// 127.0.0.1 or the host name of a K3d, Minikube or Docker Desktop cluster.
func ExampleWebhookAutoServer() {
	os.Exit(kopf.Main(registerWebhooks,
		kopf.WithWebhookServer(kopf.WebhookAutoServer(kopf.WebhookServer{})),
		kopf.WithManagedWebhooks("auto.kopf.dev"),
	))
}

// In a cluster: a Service in front of the operator's pods (its port 443
// to their 9443), the certificate in a Secret of theirs.
func ExampleWebhookService() {
	os.Exit(kopf.Main(registerWebhooks,
		kopf.WithWebhookServer(kopf.WebhookServer{
			Service:    &kopf.WebhookService{Name: "my-operator", Namespace: "operators"},
			CertSecret: "my-operator-webhook-cert",
		}),
		kopf.WithManagedWebhooks("my-operator.example.com"),
	))
}

// With a certificate of your own (cert-manager's, mounted from its
// Secret), read again when the files change.
func ExampleWebhookServer_certFiles() {
	os.Exit(kopf.Main(registerWebhooks,
		kopf.WithWebhookServer(kopf.WebhookServer{
			Service:  &kopf.WebhookService{Name: "my-operator", Namespace: "operators"},
			CertFile: "/etc/webhook/tls.crt",
			KeyFile:  "/etc/webhook/tls.key",
			CAFile:   "/etc/webhook/ca.crt",
		}),
		kopf.WithManagedWebhooks("my-operator.example.com"),
	))
}
