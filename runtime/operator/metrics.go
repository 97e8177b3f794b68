package operator

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"time"

	certutil "k8s.io/client-go/util/cert"

	"github.com/kopf-go/kopf/runtime/admission"
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

// metricsEndpoint is what serveMetrics serves: the page, at addr, over
// HTTPS behind guard (nil: plain HTTP, unguarded), with the certificate of
// getCert.
type metricsEndpoint struct {
	addr    string
	page    http.Handler
	guard   *metrics.Guard
	getCert func(*tls.ClientHelloInfo) (*tls.Certificate, error)
}

// serveMetrics listens on e.addr (host:port; ":0" picks a free port) and
// serves e.page at /metrics, and nothing else, until stop is called. A
// listener that cannot be opened (e.g. the port is in use) is an error:
// the operator does not start, rather than run without the metrics it
// was asked for.
//
// Over HTTPS, the server speaks HTTP/1.1 only, as kubebuilder's scaffold
// has it by default (--enable-http2=false): HTTP/2's stream resets
// (CVE-2023-44487, CVE-2023-39325) need no authentication to cost a
// server; a scrape gains nothing from HTTP/2.
func serveMetrics(e metricsEndpoint, logger *slog.Logger) (stop func(), err error) {
	ln, err := net.Listen("tcp", e.addr)
	if err != nil {
		return nil, fmt.Errorf("serving the metrics on %s: %w", e.addr, err)
	}
	mux := http.NewServeMux()
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	scheme := "http"
	if e.guard != nil {
		scheme = "https"
		mux.Handle("/metrics", e.guard.Wrap(e.page, func(err error) {
			logger.Error(fmt.Sprintf("A request for the metrics cannot be reviewed: %v", err))
		}))
		srv.TLSConfig = &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: e.getCert, NextProtos: []string{"http/1.1"}}
		srv.TLSNextProto = map[string]func(*http.Server, *tls.Conn, http.Handler){} // no HTTP/2
		ln = tls.NewListener(ln, srv.TLSConfig)
	} else {
		mux.Handle("/metrics", e.page)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error(fmt.Sprintf("Serving the metrics on %s has failed: %v", ln.Addr(), err))
		}
	}()
	logger.Info(fmt.Sprintf("Serving the metrics on %s://%s/metrics.", scheme, ln.Addr()))
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx) // a scrape in progress has a second to finish
		<-done
	}, nil
}

// metricsCertCheck is how often the metrics' certificate files are read
// again (controller-runtime's certwatcher polls every 10 s too).
const metricsCertCheck = 10 * time.Second

// metricsCertificate returns what serves the metrics' certificate: the
// files of opts.MetricsCertPath, read again when they change (until ctx is
// done), or else a self-signed certificate made now, in memory, as
// controller-runtime's metrics server makes one (for "localhost": a
// scraper in the cluster does not verify it, or is given the files).
func metricsCertificate(ctx context.Context, opts Options, logger *slog.Logger) (func(*tls.ClientHelloInfo) (*tls.Certificate, error), error) {
	if opts.MetricsCertPath == "" {
		certPEM, keyPEM, err := certutil.GenerateSelfSignedCertKey("localhost", nil, nil)
		if err != nil {
			return nil, fmt.Errorf("making the metrics' self-signed certificate: %w", err)
		}
		c, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			return nil, fmt.Errorf("making the metrics' self-signed certificate: %w", err)
		}
		return func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return &c, nil }, nil
	}
	name, key := cmp.Or(opts.MetricsCertName, "tls.crt"), cmp.Or(opts.MetricsCertKey, "tls.key")
	files, err := admission.LoadCertFiles("metrics", filepath.Join(opts.MetricsCertPath, name), filepath.Join(opts.MetricsCertPath, key))
	if err != nil {
		return nil, err
	}
	go files.Watch(ctx, metricsCertCheck, logger)
	return files.GetCertificate, nil
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
	instrumentWatchAs(mr.Watch(ns), w)
}

// instrumentWatchAs makes the watcher w count into mw (nothing if nil):
// the watches of a namespace's buckets under sharding share one.
func instrumentWatchAs(mw *metrics.Watch, w *watching.Watcher) {
	if mw == nil {
		return
	}
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
