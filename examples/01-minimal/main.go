// Command minimal is the Go port of Kopf's 01-minimal example: one creation
// handler for KopfExample objects, whose result lands in
// status.create_fn.message.
//
// Run it against a cluster with the KopfExample CRD (../crd.yaml):
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

// CreateFn greets every new KopfExample.
//
//kopf:on.create kopfexamples
func CreateFn(ctx context.Context, kw CreateFnKwargs) (any, error) {
	kw.Logger.Info(fmt.Sprintf("And here we are! Creating: %s", pyfmt.Str(kw.Spec)))
	return map[string]any{"message": "hello world"}, nil // will be the new status
}

func main() {
	os.Exit(kopf.Main(Register))
}
