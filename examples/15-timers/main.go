// Command timers is the Go port of Kopf's 15-timers example: two timers
// for every KopfExample, each running once the object has been unchanged
// for its idle time, then every interval while it stays unchanged.
//
// Kopf tells sync timers from async ones; in Go both are functions, called
// in a goroutine of their own at every tick, and they keep Kopf's names.
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

// EveryFewSecondsSync runs 5 seconds after the last change of the object,
// then every 2 seconds.
//
//kopf:timer kopfexamples idle=5 interval=2
func EveryFewSecondsSync(ctx context.Context, kw EveryFewSecondsSyncKwargs) error {
	kw.Logger.Info(fmt.Sprintf("Ping from a sync timer: field=%s", pyfmt.Repr(kw.Spec["field"])))
	return nil
}

// EveryFewSecondsAsync runs 10 seconds after the last change of the
// object, then every 4 seconds.
//
//kopf:timer kopfexamples idle=10 interval=4
func EveryFewSecondsAsync(ctx context.Context, kw EveryFewSecondsAsyncKwargs) error {
	kw.Logger.Info(fmt.Sprintf("Ping from an async timer: field=%s", pyfmt.Repr(kw.Spec["field"])))
	return nil
}

func main() {
	os.Exit(kopf.Main(Register))
}
