// Command subhandlers is the Go port of Kopf's 07-subhandlers example: a
// creation handler registers one sub-handler per item of spec.items, each
// with its own progress under the id create_fn/<item>, as in Kopf.
package main

//go:generate go tool kopf-gen

import (
	"context"
	"fmt"
	"os"

	"github.com/kopf-go/kopf"
)

// CreateFn handles each item of the spec in a sub-handler of its own.
//
//kopf:on.create kopfexamples
func CreateFn(ctx context.Context, kw CreateFnKwargs) error {
	items, _ := kw.Spec["items"].([]any)
	for _, it := range items {
		item := fmt.Sprint(it)
		// A sub-handler gets the same kwargs as its parent (CreateFnKwargs).
		err := kopf.SubhandlerFunc(ctx, item, func(ctx context.Context, kw CreateFnKwargs) error {
			kw.Logger.Info(fmt.Sprintf("=== Handling creation for %s. ===", item))
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func main() {
	os.Exit(kopf.Main(Register))
}
