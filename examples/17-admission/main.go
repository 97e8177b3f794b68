// Command admission is the Go port of Kopf's 17-admission example:
// validating and mutating admission webhooks of KopfExamples, which the
// API server calls before it stores an object.
//
//   - authhook warns about who calls: the caller's User-Agent header and
//     its client certificate (kw.Headers, kw.SSLPeer);
//   - validate1 refuses spec.field "wrong", except in dry runs (kw.DryRun);
//   - validate2 refuses spec.field "not-allowed", with the code 555
//     (its id is validate2/spec.field, as Kopf names a handler of a field);
//   - validate_subresources checks the object and all its subresources:
//     a status whose field differs from spec.field is refused, an object
//     whose status differs gets a warning;
//   - mutate1 injects spec.injected=123 into objects labelled
//     somelabel=somevalue (kw.Patch becomes the webhook's JSON Patch).
//
// Kopf's example picks one of its servers and tunnels in a startup
// handler, and its last choice wins: an automatically detected local
// server, and webhook configurations managed by the operator under the
// name auto.kopf.dev. The startup handler config does the same: in a
// cluster the runtime's default serves the webhooks through the Service
// kopf-webhooks (kopf-gen --manifests writes it); outside of one, a local
// server on 127.0.0.1:9443, which a local API server (kind's and envtest's
// run on the host) can call; options given to the operator (its tests give
// a free port) win over both. The handlers take the body-only kwargs, as
// Kopf's resource kex has no Go type here. Kopf's tunnels (ngrok) are out of
// scope.
//
// Run it against a cluster with the KopfExample CRD (../crd.yaml) whose API
// server can reach this machine:
//
//	go run . run -A --standalone --verbose
package main

//go:generate go tool kopf-gen

import (
	"context"
	"fmt"
	"os"

	"github.com/kopf-go/kopf"
	"github.com/kopf-go/kopf/pyfmt"
)

// Config serves the webhooks and manages their configurations, unless the
// operator's options say otherwise.
//
//kopf:on.startup
func Config(ctx context.Context, kw ConfigKwargs) error {
	admission := &kw.Settings.Admission
	// The server chosen for the cluster at hand (Kopf's final
	// kopf.WebhookAutoServer()): in a cluster, the Service kopf-webhooks;
	// outside of it, a local one on a free port, with a generated
	// certificate, reached through 127.0.0.1 or the host name of a K3d,
	// Minikube or Docker Desktop cluster.
	if admission.Server == nil {
		auto := kopf.WebhookAutoServer(kopf.WebhookServer{})
		admission.Server = &auto
	}
	// The final configuration for CI/CD.
	if admission.Managed == "" {
		admission.Managed = "auto.kopf.dev"
	}
	return nil
}

// Authhook warns the client about who calls the webhook.
//
//kopf:on.validate kex
func Authhook(ctx context.Context, kw AuthhookKwargs) error {
	userAgent, ok := kw.Headers["User-Agent"]
	if !ok {
		userAgent = "(unidentified)"
	}
	kw.Warn(fmt.Sprintf("Accessing as user-agent: %s", userAgent))
	// The subject's relative distinguished names, each a list of
	// (key, value) pairs, as Python's getpeercert() gives them.
	subject, _ := kw.SSLPeer["subject"].([][][2]string)
	if len(subject) == 0 {
		kw.Warn("SSL peer is not identified.")
		return nil
	}
	var commonNames []string
	for _, kv := range subject[0] {
		if kv[0] == "commonName" {
			commonNames = append(commonNames, kv[1])
		}
	}
	if len(commonNames) > 0 {
		kw.Warn(fmt.Sprintf("SSL peer is %s.", commonNames[0]))
	} else {
		kw.Warn("SSL peer's common name is absent.")
	}
	return nil
}

// Validate1 refuses a wrong field, but lets dry runs through.
//
//kopf:on.validate kex
func Validate1(ctx context.Context, kw Validate1Kwargs) error {
	if !kw.DryRun && kw.Spec["field"] == "wrong" {
		return kopf.NewAdmissionError("Meh! I don't like it. Change the field.", 0)
	}
	return nil
}

// Validate2 refuses a field value, with a code of its own.
//
//kopf:on.validate kex field=spec.field value=not-allowed
func Validate2(ctx context.Context, kw Validate2Kwargs) error {
	return kopf.NewAdmissionError("I'm too lazy anyway. Go away!", 555)
}

// ValidateSubresources checks the object and its subresources: the
// status's field must follow the spec's.
//
//kopf:on.validate kex subresource=*
func ValidateSubresources(ctx context.Context, kw ValidateSubresourcesKwargs) error {
	spec, status := kw.Spec["field"], kw.Status["field"]
	if kw.Subresource == "status" && status != spec {
		return kopf.NewAdmissionError("status.field MUST be equal to spec.field!", 0)
	} else if kw.Subresource == "" && status != spec {
		kw.Warn(fmt.Sprintf("Also update status.field to match spec.field: %s != %s", pyfmt.Repr(spec), pyfmt.Repr(status)))
	}
	return nil
}

// Mutate1 injects a field into the labelled objects.
//
//kopf:on.mutate kex labels={somelabel: somevalue}
func Mutate1(ctx context.Context, kw Mutate1Kwargs) error {
	kw.Patch.Spec()["injected"] = 123
	return nil
}

func main() {
	os.Exit(kopf.Main(Register))
}
