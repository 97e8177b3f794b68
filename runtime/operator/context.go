package operator

import (
	"context"

	"k8s.io/client-go/rest"
)

type restConfigKey struct{}

// RESTConfig returns the client configuration the operator runs with, from
// the context of any of its handlers, so that handlers can make their own
// clients with the operator's credentials; nil outside an operator.
// Callers must not modify it (use rest.CopyConfig).
func RESTConfig(ctx context.Context) *rest.Config {
	cfg, _ := ctx.Value(restConfigKey{}).(*rest.Config)
	return cfg
}

func withRESTConfig(ctx context.Context, cfg *rest.Config) context.Context {
	return context.WithValue(ctx, restConfigKey{}, cfg)
}
