// Command peering is the Go port of Kopf's 06-peering example: several
// operators on one cluster know of each other through the peering object
// (ClusterKopfPeering "default", ../peering.yaml) and cooperate: an
// operator pauses while one of a higher priority runs. The main use is
// the development mode: an operator started on a workstation with --dev
// (priority 666) pauses the deployed ones until it exits.
//
// In shell A, start an operator:
//
//	go run . run -A --verbose
//
// In shell B, start another one with --dev:
//
//	go run . run -A --verbose --dev
//
// Operator A logs "Pausing operations in favour of [<Peer ...:
// priority=666, ...>]." and, when B stops, "Resuming operations after the
// pause. ...". The same with the commands:
//
//	go run . freeze -P default --lifetime 60 --priority 100
//	go run . resume -P default
//
// Two operators of the same priority (both without --dev) warn about each
// other, as Kopf's do; kopf-go replicas then elect the active one through
// a Lease instead of all freezing (docs/peering.md).
package main

//go:generate go tool kopf-gen

import (
	"context"
	"os"

	"github.com/kopf-go/kopf"
)

// CreateFn does nothing: the example is about the operators, not the
// objects.
//
//kopf:on.create kopfexamples
func CreateFn(ctx context.Context, kw CreateFnKwargs) (any, error) {
	return nil, nil
}

func main() {
	os.Exit(kopf.Main(Register))
}
