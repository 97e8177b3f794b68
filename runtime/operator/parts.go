package operator

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"time"

	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/connrotation"

	"github.com/kopf-go/kopf/runtime/apiserver"
	"github.com/kopf-go/kopf/runtime/daemons"
	"github.com/kopf-go/kopf/runtime/metrics"
	"github.com/kopf-go/kopf/runtime/posting"
	"github.com/kopf-go/kopf/runtime/queueing"
)

// The parts' starts, in the order of parts.

// login produces the credentials (see credentials); a fleet's cluster's
// are its Config, as the provider gave it.
func (o *operator) login(ctx context.Context) (context.Context, stopFunc, error) {
	if o.cluster != "" {
		o.loaded = o.opts.Config
		return ctx, nil, nil
	}
	info, relogin, err := credentials(ctx, o.opts.Config, o.reg, &o.opts)
	if err != nil {
		return ctx, nil, err
	}
	o.loaded, o.defaultNamespace = info.Config, info.DefaultNamespace
	if relogin != nil {
		o.relogin = apiserver.NewExpiringRelogin(relogin, info.Expiration, o.logger)
	}
	return ctx, nil, nil
}

// startActivities runs the startup handlers; its stop runs the cleanup
// handlers.
func (o *operator) startActivities(ctx context.Context) (context.Context, stopFunc, error) {
	actx := activityContext(ctx, o.loaded, o.relogin)
	applyPeeringOptions(o.opts)
	if ok, err := startup(actx, o.reg, o.opts); !ok {
		if err == nil {
			err = errStopped
		}
		return ctx, nil, err
	}
	o.objectsMemo = objectsMemo(o.opts.Memo)
	return ctx, func() error { return cleanup(actx, o.reg, o.opts) }, nil
}

// startMetrics makes the metrics, if asked for (an address, or
// OnMetrics), and serves them: over HTTPS behind a metrics.Guard whose
// reviews the operator's credentials send (with the re-login on 401 of
// Options.Login, and counted in the metrics as every request), or over
// plain HTTP if MetricsPlain.
func (o *operator) startMetrics(ctx context.Context) (context.Context, stopFunc, error) {
	serve := !MetricsDisabled(o.opts.MetricsAddress)
	if !serve && o.opts.OnMetrics == nil {
		return ctx, nil, nil
	}
	if o.fleet != nil {
		o.metrics = metrics.NewFleet() // each cluster's series, with its label, are added as it is engaged
	} else {
		o.metrics = metrics.New()
	}
	if o.opts.OnMetrics != nil {
		o.opts.OnMetrics(o.metrics.Registry(), o.metrics.Handler())
	}
	if !serve {
		return ctx, nil, nil
	}
	e := metricsEndpoint{addr: o.opts.MetricsAddress, page: o.metrics.Handler()}
	cctx, cancel := context.WithCancel(ctx)
	if !o.opts.MetricsPlain {
		var err error
		if e.guard, err = o.metricsGuard(); err != nil {
			cancel()
			return ctx, nil, err
		}
		if e.getCert, err = metricsCertificate(cctx, o.opts, o.logger); err != nil {
			cancel()
			return ctx, nil, err
		}
	}
	stop, err := serveMetrics(e, o.logger)
	if err != nil {
		cancel()
		return ctx, nil, err
	}
	return ctx, noError(func() { stop(); cancel() }), nil
}

// metricsGuard makes the guard of the metrics endpoint, whose reviews go
// with the operator's credentials.
func (o *operator) metricsGuard() (*metrics.Guard, error) {
	cfg := rest.CopyConfig(o.loaded)
	cfg.Wrap(o.metrics.WrapTransport)
	if cfg.UserAgent == "" {
		cfg.UserAgent = UserAgent()
	}
	if o.relogin != nil {
		cfg.Wrap(o.relogin.Wrap)
	}
	return metrics.NewGuard(cfg)
}

// connect makes the configurations of the operator's own requests (cfg)
// and of the handlers' clients (handlersCfg). Their transports, from the
// innermost: the metrics (every request sent counts, the retries
// included); the in-flight
// bound (each its own: the handlers' requests never hold up the
// operator's patches); the re-login on 401; the report of the API
// server's throttling (429s, one for both); and on the operator's only,
// the API server's health, outermost: it sees each request's final
// outcome. Its stop ends the health's probing.
func (o *operator) connect(ctx context.Context) (context.Context, stopFunc, error) {
	cfg, handlersCfg := rest.CopyConfig(o.loaded), rest.CopyConfig(o.loaded)
	if o.metrics != nil {
		cfg.Wrap(o.metrics.WrapTransport)
		handlersCfg.Wrap(o.metrics.WrapTransport)
	}
	if cfg.UserAgent == "" {
		cfg.UserAgent = UserAgent()
		handlersCfg.UserAgent = cfg.UserAgent
	}
	if cfg.WarningHandler == nil && cfg.WarningHandlerWithContext == nil {
		// The handlers' clients too (else client-go's default prints them
		// as unprefixed lines), about the object of a handler's request.
		cfg.WarningHandlerWithContext = apiserver.NewWarnings(o.logger)
		handlersCfg.WarningHandlerWithContext = cfg.WarningHandlerWithContext
	}
	if o.opts.Sharding != nil {
		o.shards = newShards(cfg, o.opts, o.identity) // its Leases' client, before the in-flight bound
	}
	o.server = strings.TrimSuffix(cfg.Host, "/")
	o.dropConnections = rotateConnections(cfg)
	if cfg.QPS == 0 && cfg.RateLimiter == nil {
		// client-go's default of 5 requests/s would throttle the reactor to
		// a few objects per second. Like Kopf, no client-side limit: the API
		// server's priority and fairness protects it.
		cfg.QPS = -1
		handlersCfg.QPS = -1
	}
	if n := o.opts.Settings.Networking.MaxInFlight; n > 0 {
		cfg.Wrap(apiserver.LimitInFlight(n))
		handlersCfg.Wrap(apiserver.LimitInFlight(n))
	}
	if o.relogin != nil { // the handlers' clients renew the token too
		cfg.Wrap(o.relogin.Wrap)
		handlersCfg.Wrap(o.relogin.Wrap)
	}
	throttling := apiserver.NewThrottling(o.server, o.logger, o.opts.Settings.Watching.InactivityTimeout)
	cfg.Wrap(throttling.Wrap)
	handlersCfg.Wrap(throttling.Wrap)
	o.health = apiserver.NewHealth(o.server, o.logger, o.opts.Settings.Watching.InactivityTimeout)
	cfg.Wrap(o.health.Wrap)
	if o.monitor != nil { // a fleet's cluster: its own monitor (see startHealth for the others)
		o.monitor.SetServer(o.health.Status)
	}
	o.cfg, o.handlersCfg = cfg, handlersCfg
	return ctx, noError(o.health.Stop), nil
}

// rotateConnections makes cfg dial through a dialer that can close every
// connection it made, and returns what closes them. A silent watch stream
// is most often a dead connection, which every other request shares
// (HTTP/2 multiplexes them all over one): a new watch would wait on it
// until client-go's HTTP/2 health check gives up (~45 s). So
// re-establishing a silent watch drops the connections.
func rotateConnections(cfg *rest.Config) func() {
	dial := cfg.Dial
	if dial == nil {
		dial = (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	}
	conns := connrotation.NewDialer(dial)
	cfg.Dial = conns.DialContext
	return conns.CloseAll
}

// startHealth serves the health endpoints, if asked for.
func (o *operator) startHealth(ctx context.Context) (context.Context, stopFunc, error) {
	o.ready = newReadiness(o.opts.Ready, o.logger)
	monitor, stop, err := serveHealth(ctx, o.opts, o.health, o.ready, o.probes, o.fleet.states())
	if err != nil {
		return ctx, nil, err
	}
	o.monitor = monitor
	return ctx, noError(stop), nil
}

// startReleaser returns the memory to the OS when the operator is idle,
// if asked for (settings.Queueing.ReleaseMemoryAfter).
func (o *operator) startReleaser(ctx context.Context) (context.Context, stopFunc, error) {
	d := o.opts.Settings.Queueing.ReleaseMemoryAfter
	if d <= 0 {
		return ctx, nil, nil
	}
	o.releaser = queueing.NewMemoryReleaser(d)
	return ctx, noError(o.releaser.Stop), nil
}

// makeClients makes the API clients and the discovery client, which also
// probes the API server while it is unreachable (see apiserver.Health).
func (o *operator) makeClients(ctx context.Context) (context.Context, stopFunc, error) {
	cl, err := newClients(o.cfg)
	if err != nil {
		return ctx, nil, err
	}
	dc, err := discovery.NewDiscoveryClientForConfig(o.cfg)
	if err != nil {
		return ctx, nil, fmt.Errorf("creating the discovery client: %w", err)
	}
	o.clients, o.discovery = cl, dc
	o.health.SetProbes(func() {
		probeCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		_ = dc.RESTClient().Get().AbsPath("/version").Do(probeCtx).Error()
	}, func() bool {
		probeCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		return serverReady(probeCtx, dc) || ctx.Err() != nil
	})
	return ctx, nil, nil
}

// startPoster starts the poster of Kubernetes Events, and gives the later
// parts a context with it, the handlers' REST configuration and their
// shared clients (kopf.Info, RESTConfig, Client work in them). With
// settings.Posting.Loggers, Options.Logger posts the records about objects
// too from now on (the operator's own lines, o.logger, do not).
func (o *operator) startPoster(ctx context.Context) (context.Context, stopFunc, error) {
	poster, err := posting.NewForConfig(o.cfg, o.opts.Settings.Posting, posting.Options{Level: o.opts.Settings.Posting.Level, Logger: o.logger, DefaultNamespace: o.defaultNamespace})
	if err != nil {
		return ctx, nil, err
	}
	if o.opts.Settings.Posting.Loggers {
		o.opts.Logger = slog.New(posting.NewLogHandler(o.opts.Logger.Handler(), poster))
	}
	stop := func() {
		stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := poster.Stop(stopCtx); err != nil {
			o.logger.Warn(fmt.Sprintf("Not all events were posted before exiting: %v", err))
		}
	}
	ctx = posting.WithPoster(ctx, poster)
	return apiserver.WithClients(apiserver.WithRESTConfig(ctx, o.handlersCfg)), noError(stop), nil
}

// startAdmission serves the admission webhooks, if the registry has any;
// not in a fleet operator (it says so).
func (o *operator) startAdmission(ctx context.Context) (context.Context, stopFunc, error) {
	if o.fleet != nil {
		if o.reg.HasWebhooks() || o.reg.HasConversions() {
			o.logger.Warn("Admission webhooks and conversions are not served by a fleet operator (Options.Clusters).")
		}
		return ctx, nil, nil
	}
	stop, err := serveAdmission(ctx, o.cfg, o.reg, o.opts, o.discovery, o.objectsMemo, o.identity, o.bucketStamp())
	if err != nil {
		return ctx, nil, err
	}
	return ctx, noError(stop), nil
}

// startProbes makes the probe handlers' runner, for the liveness endpoint
// and Options.Prober.
func (o *operator) startProbes(ctx context.Context) (context.Context, stopFunc, error) {
	probe := prober(ctx, o.reg, o.opts)
	o.probe.Store(&probe)
	if o.opts.Prober != nil {
		o.opts.Prober(probe)
	}
	return ctx, nil, nil
}

// probes runs the probe handlers for the liveness endpoint: none until
// the probes part has started (a request before that gets no results).
func (o *operator) probes(ctx context.Context) (map[string]any, error) {
	if p := o.probe.Load(); p != nil {
		return (*p)(ctx)
	}
	return map[string]any{}, nil
}

// startPeering joins the peering, unless it is off (see startPeering).
func (o *operator) startPeering(ctx context.Context) (context.Context, stopFunc, error) {
	shardedStandalone(&o.opts)
	paused, stop := startPeering(ctx, o.discovery, o.clients, o.opts, o.scope, o.identity)
	o.paused = paused
	return ctx, noError(stop), nil
}

// startWorkers makes the workers' context; its stop cancels it, then
// waits for every goroutine started with goWorker. Cancel first, then
// wait: Run may return an error while resources are served, and their
// watchers and workers stop only when told.
func (o *operator) startWorkers(ctx context.Context) (context.Context, stopFunc, error) {
	ctx, cancel := context.WithCancel(ctx)
	return ctx, noError(func() {
		cancel()
		o.workers.Wait()
	}), nil
}

// startDaemons starts the daemons' engine (paused with the operator), and
// the index gate if the registry has indices. Daemons and timers are told
// to stop as soon as the operator exits, at the same time as the workers
// finish their cycles (see queueing.Queue.Drain), and waited for within
// settings.Background.ExitTimeout.
func (o *operator) startDaemons(ctx context.Context) (context.Context, stopFunc, error) {
	o.daemons = daemons.NewEngine(ctx, o.opts.Settings, o.logger)
	instrumentDaemons(o.metrics, o.daemons)
	o.paused.attach(o.daemons)
	o.goWorker(func() {
		<-ctx.Done()
		o.daemons.Shutdown()
	})
	if o.reg.HasIndices() {
		o.indexed = newIndexGate()
	}
	return ctx, nil, nil
}

// startSharding takes part in the sharding group, if sharding is on.
func (o *operator) startSharding(ctx context.Context) (context.Context, stopFunc, error) {
	if o.shards == nil {
		return ctx, nil, nil
	}
	o.shards.stage.Daemons = o.daemons
	o.goWorker(func() {
		if err := o.shards.run(ctx); err != nil {
			o.logger.Error(fmt.Sprintf("Sharding cannot start: %v", err))
		}
	})
	return ctx, nil, nil
}
