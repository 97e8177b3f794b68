package operator

import (
	"context"

	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"

	"github.com/kopf-go/kopf/runtime/admission"
	"github.com/kopf-go/kopf/runtime/kwargs"
	"github.com/kopf-go/kopf/runtime/registry"
	"github.com/kopf-go/kopf/runtime/resources"
)

// serveAdmission starts the admission webhook server of the registry's
// webhook handlers, if it has any (see package admission and
// settings.Admission), and returns what stops it. Run fails at start if
// the server cannot start (no server configured outside of a cluster,
// the port taken, the certificate Secret or the managed configurations
// cannot be written).
//
// The handlers get the operator's context values (its clients, REST
// config and poster: RESTConfig, Client and kopf.Info work in them) with
// the cancellation of their request.
func serveAdmission(ctx context.Context, cfg *rest.Config, reg *registry.Registry, opts Options, dc discovery.DiscoveryInterface, objectsMemo kwargs.Memo, identity string) (stop func(), err error) {
	if !reg.HasWebhooks() {
		return func() {}, nil
	}
	srv, err := admission.Start(ctx, admission.Config{
		Registry:   reg,
		Settings:   opts.Settings,
		Logger:     opts.Logger,
		RESTConfig: cfg,
		Discover: func(context.Context) ([]resources.Resource, error) {
			return resources.Discover(dc)
		},
		Identity: identity,
		Memo:     objectsMemo,
		Context:  func(req context.Context) context.Context { return valuesOf{req, ctx} },
	})
	if err != nil {
		return nil, err
	}
	return srv.Stop, nil
}
