package handlers

import (
	"context"
	"strings"

	"github.com/kopf-go/kopf"
)

// Validate is called by the API server before it stores a new or changed
// Widget: an error refuses the request, and the client (kubectl) shows a
// kopf.AdmissionError's message; kw.Warn sends a warning instead. The
// webhook is served at /validate and named validate.widget-operator.example.com in the
// ValidatingWebhookConfiguration widget-operator.example.com, which the operator manages
// (main.go).
//
//kopf:on.validate example.com/v1alpha1/widgets operations=[CREATE, UPDATE]
func Validate(ctx context.Context, kw ValidateKwargs) error {
	greeting := kw.Object.Spec.Greeting
	if greeting != strings.ToLower(greeting) && greeting == strings.ToUpper(greeting) {
		return kopf.NewAdmissionError("spec.greeting must not shout: write it in lower case", 422)
	}
	if greeting == "" {
		kw.Warn("spec.greeting is empty: the operator will say Hello")
	}
	return nil
}

// Default is called by the API server before it stores a new Widget:
// what it puts in kw.Patch is applied to the object (as a JSON Patch).
// Here, a Widget without a greeting gets Hello.
//
//kopf:on.mutate example.com/v1alpha1/widgets operations=[CREATE]
func Default(ctx context.Context, kw DefaultKwargs) error {
	if kw.Object.Spec.Greeting == "" {
		kw.Patch.Spec()["greeting"] = "Hello"
	}
	return nil
}
