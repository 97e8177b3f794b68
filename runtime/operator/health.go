package operator

import (
	"context"
	"fmt"
	"time"

	"github.com/kopf-go/kopf/runtime/apiserver"
	"github.com/kopf-go/kopf/runtime/health"
)

// watchMonitor is the health endpoints' view of the watches (the alias
// keeps operator.go's local variable health from shadowing the package).
type watchMonitor = health.Monitor

// serveHealth starts the liveness and readiness endpoints, if any is set
// (see Options.LivenessEndpoint): they fail while a watch has been down or
// the API server unreachable for longer than
// settings.Watching.InactivityTimeout (see health.Monitor, to which the
// watches are added), and readiness also until the operator is ready (see
// readiness); the liveness endpoint serves probes' results. They stop
// when ctx is done, when the operator starts stopping (as Kopf's health
// reporter, a root task, is cancelled then): its watches are ending,
// which is no reason to fail them, or when stop is called (when Run
// returns, also with an error). It returns the monitor (nil without
// endpoints) and stop, which returns once they are stopped, or an error
// if they cannot be served (a bad URL, a port in use).
//
// A fleet operator's endpoints (api nil, clusters set) have no API server
// and no watches of their own: they list each cluster's state instead
// (see fleet.states), which fails neither endpoint.
func serveHealth(ctx context.Context, opts Options, api *apiserver.Health, ready *readiness, probes func(context.Context) (map[string]any, error), clusters func() []health.Cluster) (monitor *watchMonitor, stop func(), err error) {
	if opts.LivenessEndpoint == "" && opts.ReadinessEndpoint == "" {
		return nil, func() {}, nil
	}
	monitor = health.NewMonitor(opts.Settings.Watching.InactivityTimeout)
	if api != nil {
		monitor.SetServer(api.Status)
	}
	srv, err := health.Start(health.Options{
		Liveness:  opts.LivenessEndpoint,
		Readiness: opts.ReadinessEndpoint,
		Probe:     probes,
		Problems:  func() []health.Problem { return monitor.Problems(time.Now()) },
		Ready:     ready.state,
		Clusters:  clusters,
		Logger:    opts.Logger,
	})
	if err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		<-ctx.Done()
		// Kopf's health server gets a second to finish its requests too.
		stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		defer cancel()
		if err := srv.Shutdown(stopCtx); err != nil {
			opts.Logger.Debug(fmt.Sprintf("The health endpoints did not stop cleanly: %v", err))
		}
	}()
	return monitor, func() {
		cancel()
		<-stopped
	}, nil
}

// state says whether the operator is ready, and if not, why: for the
// readiness endpoint.
func (r *readiness) state() (bool, string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case !r.resolved:
		return false, "not every resource of the handlers is resolved and watched yet (is a CRD missing, or the API server unreachable?)"
	case r.waiting == 1:
		return false, "1 watch has not listed its objects yet"
	case r.waiting > 1:
		return false, fmt.Sprintf("%d watches have not listed their objects yet", r.waiting)
	}
	return true, ""
}
