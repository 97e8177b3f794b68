package kopf_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kopf-go/kopf"
)

// Handlers can be registered by hand: this is what generated Register
// functions do.
func ExampleRegistry() {
	reg := kopf.NewRegistry()
	err := reg.AddChanging(kopf.ChangingHandler{
		ID:       "create_fn",
		Selector: kopf.Selector{Group: "kopf.dev", Name: "kopfexamples"},
		Reasons:  []kopf.Reason{kopf.ReasonCreate},
		Fn: func(ctx context.Context, kw *kopf.ChangingKwargs) (any, error) {
			return map[string]any{"message": "hello world"}, nil
		},
	})
	fmt.Println(err, reg.Selectors())
	// Output: <nil> [kopf.dev/kopfexamples]
}

// A sub-handler is registered from inside its parent handler, through the
// parent's context; outside a handler it is refused.
func ExampleSubhandler() {
	err := kopf.Subhandler(context.Background(), kopf.ChangingHandler{
		ID: "item1",
		Fn: func(ctx context.Context, kw *kopf.ChangingKwargs) (any, error) { return nil, nil },
	})
	fmt.Println(err)
	// Output: sub-handlers can only be registered inside a changing handler
}

// Handlers steer their retries with the errors they return.
func ExampleNewTemporaryError() {
	err := fmt.Errorf("connecting: %w", kopf.NewTemporaryError(10*time.Second, "the database is not ready yet"))
	var tmp *kopf.TemporaryError
	if errors.As(err, &tmp) {
		fmt.Println(tmp.Message, tmp.Delay)
	}
	// Output: the database is not ready yet 10s
}

// A handler registers sub-handlers of its own kwargs type; each runs after
// the parent returns, with its progress under "<parent id>/<id>".
func ExampleSubhandlerFunc() {
	parent := func(ctx context.Context, kw kopf.ChangingKwargs) error {
		for _, item := range []string{"item1", "item2"} {
			err := kopf.SubhandlerFunc(ctx, item, func(ctx context.Context, kw kopf.ChangingKwargs) error {
				kw.Logger.Info("=== Handling creation for " + item + ". ===")
				return nil
			})
			if err != nil {
				return err
			}
		}
		return nil
	}
	// Outside the reactor, the parent has no sub-handlers to register into.
	fmt.Println(parent(context.Background(), kopf.ChangingKwargs{}))
	// Output: sub-handlers can only be registered inside a changing handler
}
