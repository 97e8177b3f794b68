// Command testing is the Go port of Kopf's 09-testing example: a minimal
// operator, and its test (main_test.go), which runs the operator inside
// the test's process with package kopftest (Kopf's KopfRunner) against a
// local control plane from package envtest. See docs/testing.md.
//
// Run the test; `kopf-gen envtest` builds the control plane's binaries
// once, where package envtest finds them:
//
//	go tool kopf-gen envtest
//	go test .
package main

//go:generate go tool kopf-gen

import (
	"context"
	"os"

	"github.com/kopf-go/kopf"
)

// CreateFn logs a line that the test looks for.
//
//kopf:on.create kopfexamples
func CreateFn(ctx context.Context, kw CreateFnKwargs) error {
	kw.Logger.Info("Something was logged here.")
	return nil
}

func main() {
	os.Exit(kopf.Main(Register))
}
