// Package minimal is Kopf's 01-minimal example: one creation handler whose
// result lands in status.create_fn.
package minimal

import "context"

// CreateFn greets every new KopfExample.
//
//kopf:on.create kopf.dev/v1/kopfexamples
func CreateFn(ctx context.Context, kw CreateFnKwargs) (any, error) {
	kw.Logger.Info("And here we are!", "spec", kw.Spec)
	return map[string]any{"message": "hello world"}, nil
}
