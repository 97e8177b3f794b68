package operator

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/kopf-go/kopf/runtime/daemons"
	"github.com/kopf-go/kopf/runtime/metrics"
	"github.com/kopf-go/kopf/runtime/queueing"
	"github.com/kopf-go/kopf/runtime/reactor"
	"github.com/kopf-go/kopf/runtime/resources"
	"github.com/kopf-go/kopf/runtime/watching"
)

// MetricsDisabled reports whether a metrics address means "no metrics":
// "" or "0", as controller-runtime's --metrics-bind-address says it.
func MetricsDisabled(addr string) bool { return addr == "" || addr == "0" }

// serveMetrics listens on addr (host:port; ":0" picks a free port) and
// serves m at /metrics until stop is called. A listener that cannot be
// opened (e.g. the port is in use) is an error: the operator does not
// start, rather than run without the metrics it was asked for.
func serveMetrics(addr string, m *metrics.Metrics, logger *slog.Logger) (stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("serving the metrics on %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", m.Handler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error(fmt.Sprintf("Serving the metrics on %s has failed: %v", ln.Addr(), err))
		}
	}()
	logger.Info(fmt.Sprintf("Serving the metrics on http://%s/metrics.", ln.Addr()))
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx) // a scrape in progress has a second to finish
		<-done
	}, nil
}

// instrumentResource makes the reactor and the queue of res report
// to the operator's metrics (none if they are off): the handlers' attempts
// (after Options.Observe, which is kept) and each event's processing; the
// queue's figures and the objects in progress are read at each scrape.
func (o *operator) instrumentResource(res resources.Resource, r *reactor.Reactor, mux *queueing.Queue) *metrics.Resource {
	if o.metrics == nil {
		return nil
	}
	mr := o.metrics.Resource(res.String(), mux.Stats, r.InProgress)
	if observe := r.Observe; observe != nil {
		r.Observe = func(obs reactor.Observation) {
			observe(obs)
			mr.Observe(obs)
		}
	} else {
		r.Observe = mr.Observe
	}
	r.ObserveProcessed = mr.Processed
	return mr
}

// instrumentWatch makes the watcher w, of the namespace ns ("" for a
// cluster-wide watch), count its events, restarts and failures into mr
// (nothing if nil), around its callbacks.
func instrumentWatch(mr *metrics.Resource, ns string, w *watching.Watcher) {
	if mr == nil {
		return
	}
	mw := mr.Watch(ns)
	callback, onWatching, onError := w.Callback, w.OnWatching, w.OnError
	w.Callback = func(ev watching.Event) {
		mw.Event()
		callback(ev)
	}
	w.OnWatching = func() {
		mw.Watching()
		if onWatching != nil {
			onWatching()
		}
	}
	w.OnError = func(err error) {
		mw.Failed()
		if onError != nil {
			onError(err)
		}
	}
}

// instrumentDaemons makes the daemons' engine e report its runners' stops
// and its timers' ticks to m (nothing if nil): kopf_daemon_stop_seconds
// and kopf_timer_lag_seconds.
func instrumentDaemons(m *metrics.Metrics, e *daemons.Engine) {
	if m == nil {
		return
	}
	e.OnStopped = func(s daemons.Stopped) { m.DaemonStopped(s.Resource, s.Handler, s.Kind, s.Latency, s.Abandoned) }
	e.OnTick = func(t daemons.Tick) { m.TimerTicked(t.Resource, t.Handler, t.Lag) }
}
