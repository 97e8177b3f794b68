// Command versions is an operator over a kind with two versions: greetings
// of greetings.kopf.dev, v1alpha1 (spec.name) and v1 (spec.greetee, the storage
// version). Its handler is typed on v1, so it sees every object as v1,
// whichever version it was written in; the API server converts through
// the operator's conversion webhook (conversions.go), served on the
// admission server (docs/versions.md).
//
// Its CRD (both versions, the conversion webhook) and role are generated
// with the line below, as `make generate` does.
package main

//go:generate go tool kopf-gen --deepcopy --manifests=config --role-name=versions-operator . ../apis/greetings/...

import (
	"context"
	"os"

	"github.com/kopf-go/kopf"
)

// Greet greets the greetee of a new Greeting, read as v1.
//
//kopf:on.create greetings.kopf.dev/v1/greetings
func Greet(ctx context.Context, kw GreetKwargs) (any, error) {
	kw.Logger.Info("Hello, " + kw.Object.Spec.Greetee + "!")
	return map[string]any{"message": "hello, " + kw.Object.Spec.Greetee}, nil
}

func main() {
	os.Exit(kopf.Main(Register))
}
