// Command events is the Go port of Kopf's 04-events example: the creation
// handler posts custom Kubernetes Events about the object it handles, with
// each of Kopf's functions: kopf.Event (any type), kopf.Info ("Normal"),
// kopf.Warn ("Warning") and kopf.Exception ("Error", the message followed
// by the error's text).
//
// Run it against a cluster with the KopfExample CRD (../crd.yaml), create
// the object (../obj.yaml), and see the events:
//
//	go run . run -A --standalone --verbose
//	kubectl describe kopfexample kopf-example-1
package main

//go:generate go tool kopf-gen

import (
	"context"
	"errors"
	"os"

	"github.com/kopf-go/kopf"
)

// CreateFn posts the custom events about the new object.
//
//kopf:on.create kopfexamples
func CreateFn(ctx context.Context, kw CreateFnKwargs) error {
	// The all-purpose function for the event creation.
	kopf.Event(ctx, kw.Body, "SomeType", "SomeReason", "Some message")

	// The shortcuts for the conventional events and common cases.
	kopf.Info(ctx, kw.Body, "SomeReason", "Some message")
	kopf.Warn(ctx, kw.Body, "SomeReason", "Some message")

	// Kopf's example raises and catches an exception; Go has errors, which
	// kopf.Exception takes explicitly.
	if err := fail(); err != nil {
		kopf.Exception(ctx, kw.Body, "SomeReason", err, "Some exception:")
	}
	return nil
}

// fail fails as Kopf's example's raise RuntimeError("Exception text.").
func fail() error {
	return errors.New("Exception text.")
}

func main() {
	os.Exit(kopf.Main(Register))
}
