// Command events is the Go port of Kopf's 08-events example: two handlers
// of raw watch events (on.event). One always fails, which is logged and
// ignored (no retries); the other logs every event it gets. Event handlers
// keep no state, so the operator never writes to the objects for them: no
// finalizer, no progress, no diff-base.
//
// Run it against a cluster with the KopfExample CRD (../crd.yaml):
//
//	go run . run -A --standalone --verbose
package main

//go:generate go tool kopf-gen

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/kopf-go/kopf"
)

// EventFnWithError fails on every event; the operator logs the error and
// goes on.
//
//kopf:on.event kopfexamples
func EventFnWithError(ctx context.Context, kw EventFnWithErrorKwargs) error {
	return errors.New("Oops!")
}

// NormalEventFn logs every raw event: its type (None for an object seen in
// a listing, as in Kopf) and the object it is about.
//
//kopf:on.event kopfexamples
func NormalEventFn(ctx context.Context, kw NormalEventFnKwargs) error {
	typ := "None"
	if t, ok := kw.Event["type"].(string); ok {
		typ = t
	}
	kw.Logger.Info(fmt.Sprintf("Event received: type=%s, name=%s", typ, kw.Name))
	return nil
}

func main() {
	os.Exit(kopf.Main(Register))
}
