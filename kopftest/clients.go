package kopftest

import (
	"context"

	"github.com/kopf-go/kopf/runtime/apiserver"
)

// WithClient returns a context in which kopf.Client[C] returns c: the
// context to call a handler with in a unit test, so that the handler's
// shared client is a fake (client-go's fake.NewClientset() for
// kubernetes.Interface, or that of a clientset that kopf-gen --clients
// generates, in clientset/versioned/fake, for its versioned.Interface).
//
// Clients are keyed by the type C that the handler asks kopf.Client for:
// a handler that is to be tested with a fake asks for the clientset's
// interface, not its concrete type, and the test gives the fake as that
// interface:
//
//	// In the handler:
//	cs, err := kopf.Client(ctx, func(cfg *rest.Config) (kubernetes.Interface, error) { return kubernetes.NewForConfig(cfg) })
//	// In its test:
//	fake := k8sfake.NewClientset()
//	ctx := kopftest.WithClient[kubernetes.Interface](t.Context(), fake)
//
// Clients of other types, not given, fail with kopf.ErrNoOperator outside
// an operator. See docs/testing.md ("Faking clients in unit tests").
func WithClient[C any](ctx context.Context, c C) context.Context {
	return apiserver.WithClient(ctx, c)
}
