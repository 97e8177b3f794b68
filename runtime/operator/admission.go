package operator

import (
	"context"
	"fmt"
	"net/http"

	admissionregv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/kopf-go/kopf/runtime/admission"
	"github.com/kopf-go/kopf/runtime/conversion"
	"github.com/kopf-go/kopf/runtime/kwargs"
	"github.com/kopf-go/kopf/runtime/registry"
	"github.com/kopf-go/kopf/runtime/resources"
	"github.com/kopf-go/kopf/runtime/sharding"
)

// serveAdmission starts the admission webhook server of the registry's
// webhook handlers and conversions, if it has any (see package admission,
// package conversion and settings.Admission), and returns what stops it.
// Run fails at start if the server cannot start (no server configured
// outside of a cluster, the port taken, the certificate Secret, the
// managed configurations or the CRDs' conversion webhooks cannot be
// written).
//
// The handlers and conversions get the operator's context values (its
// clients, REST config and poster: RESTConfig, Client and kopf.Info work
// in them) with the cancellation of their request.
//
// stamp, if not nil, is the label mode's bucket label stamped at creation
// (see bucketStamp).
func serveAdmission(ctx context.Context, cfg *rest.Config, reg *registry.Registry, opts Options, dc discovery.DiscoveryInterface, objectsMemo kwargs.Memo, identity string, stamp *admission.Stamp) (stop func(), err error) {
	if !reg.HasWebhooks() && !reg.HasConversions() {
		return func() {}, nil
	}
	withValues := func(req context.Context) context.Context { return valuesOf{req, ctx} }
	discover := func(context.Context) ([]resources.Resource, error) { return resources.Discover(dc) }
	var extra map[string]http.Handler
	if reg.HasConversions() {
		extra = map[string]http.Handler{conversion.Path: &conversion.Handler{Registry: reg, Logger: opts.Logger, Context: withValues}}
	}
	srv, err := admission.Start(ctx, admission.Config{
		Registry:   reg,
		Settings:   opts.Settings,
		Logger:     opts.Logger,
		RESTConfig: cfg,
		Discover:   discover,
		Identity:   identity,
		Memo:       objectsMemo,
		Context:    withValues,
		Handlers:   extra,
		Stamp:      stamp,
	})
	if err != nil && !reg.HasWebhooks() {
		return nil, fmt.Errorf("the conversions are served by the admission server: %w", err)
	}
	if err != nil {
		return nil, err
	}
	if !reg.HasConversions() {
		return srv.Stop, nil
	}
	stopCRDs, err := keepConversionWebhooks(ctx, cfg, reg, opts, discover, srv)
	if err != nil {
		srv.Stop()
		return nil, err
	}
	return func() { stopCRDs(); srv.Stop() }, nil
}

// keepConversionWebhooks keeps the conversion webhook of the CRDs of the
// registry's conversions pointing at the server srv, with its CA bundle.
func keepConversionWebhooks(ctx context.Context, cfg *rest.Config, reg *registry.Registry, opts Options, discover func(context.Context) ([]resources.Resource, error), srv *admission.Server) (func(), error) {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("creating the client of the CRDs: %w", err)
	}
	interval := admission.DefaultCheckInterval
	if s := opts.Settings.Admission.Server; s != nil && s.CheckInterval > 0 {
		interval = s.CheckInterval
	}
	crds := &conversion.CRDs{
		Registry:     reg,
		Client:       dyn,
		Discover:     discover,
		ClientConfig: func() admissionregv1.WebhookClientConfig { return srv.ClientConfig(conversion.Path) },
		Interval:     interval,
		Logger:       opts.Logger,
	}
	srv.OnCABundle(func([]byte) { crds.Poke() })
	return crds.Start(ctx)
}

// bucketStamp is the label mode's bucket label stamped at creation by the
// operator's own mutating webhook (admission.Stamp; docs/sharding.md, "The
// label"): where the operator runs in the label mode and serves webhook
// handlers with managed configurations; nil otherwise (the labeller alone
// labels the new objects). Its label is sharding.BucketLabel, the
// labeller's; its resources are added as their pipelines are watched by
// bucket (shardedWatches, which finds it in o.shards.stamp).
func (o *operator) bucketStamp() *admission.Stamp {
	if o.shards == nil || o.shards.cfg.Mode != sharding.ModeLabel || o.opts.Settings.Admission.Managed == "" || !o.reg.HasWebhooks() {
		return nil
	}
	buckets, sc := o.shards.cfg.Buckets, o.scope
	stamp := &admission.Stamp{
		Label:  func(namespace, name string) (string, string) { return sharding.BucketLabel(namespace, name, buckets) },
		Serves: func(namespace string) bool { return namespace == "" || sc.Matches(namespace) },
	}
	if names, ok := sc.ExactNamespaces(); ok {
		stamp.Namespaces = names
	}
	o.shards.stamp = stamp
	return stamp
}
