// Package metrics keeps an operator's Prometheus metrics: its handlers'
// runs and durations, the latency from a watch event to its handler, the
// stops of daemons and timers and the lag of timers' ticks, the watches, the queues and workers, the requests to the API server, and the
// series that controller-runtime's controllers and workqueues expose, with
// the same names, labels and buckets, so that dashboards made for them
// work (see docs/metrics.md for every series and the mapping).
//
// Everything lives in a registry of the operator's own (New): nothing is
// registered with Prometheus's or client-go's global registries. A fleet
// operator (NewFleet) has one registry too, where each cluster's series
// (Cluster) carry the label cluster=<name>. No series
// is labelled per object: the labels are resources, namespaces of watches,
// handler ids and kinds, outcomes, verbs and status codes, all bounded.
//
// The endpoint that serves them is the operator's (runtime/operator);
// Guard is what lets only the clients that the API server authenticates
// and authorizes through (see docs/security.md).
//
// The hot path allocates nothing: the series of a resource, and of a
// handler of it, are resolved once (Metrics.Resource, and a handler's on
// its first attempt) and then only incremented or observed.
package metrics

import (
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/kopf-go/kopf/runtime/execution"
	"github.com/kopf-go/kopf/runtime/queueing"
	"github.com/kopf-go/kopf/runtime/reactor"
)

// Metrics are one operator's collectors, on a registry of their own.
type Metrics struct {
	registry   *prometheus.Registry
	registerer prometheus.Registerer // the registry, or for a fleet's cluster, the registry with its label
	scrape     *scrapeCollector      // the figures read at each scrape

	handlerRuns     *prometheus.CounterVec   // resource, handler, kind, outcome
	handlerDuration *prometheus.HistogramVec // resource, handler, kind
	handlerRetries  *prometheus.CounterVec   // resource, handler, kind
	eventLatency    *prometheus.HistogramVec // resource, kind
	watchEvents     *prometheus.CounterVec   // resource, namespace
	watchRestarts   *prometheus.CounterVec   // resource, namespace
	watchErrors     *prometheus.CounterVec   // resource, namespace
	apiRequests     *prometheus.CounterVec   // verb, code
	daemonStop      *prometheus.HistogramVec // resource, handler, kind, outcome
	timerLag        *prometheus.HistogramVec // resource, handler

	// controller-runtime's (controller=<resource>; name=<resource> for the
	// workqueue's).
	reconcileTotal  *prometheus.CounterVec   // controller, result
	reconcileErrors *prometheus.CounterVec   // controller
	terminalErrors  *prometheus.CounterVec   // controller
	reconcileTime   *prometheus.HistogramVec // controller
	queueLatency    *prometheus.HistogramVec // name, controller
	workDuration    *prometheus.HistogramVec // name, controller
	queueRetries    *prometheus.CounterVec   // name, controller

	requests requestSeries

	mu        sync.Mutex
	resources []*Resource // in the order served, for the scrape-time figures

	bgMu sync.RWMutex
	bg   map[backgroundKey]*backgroundSeries // the daemons' and timers' series, resolved on first use
}

// New returns an operator's metrics, registered on a new registry with
// the Go runtime's and the process's collectors (as controller-runtime's
// registry has them).
func New() *Metrics {
	m := newSeries()
	m.registry = prometheus.NewRegistry()
	m.registerer = m.registry
	m.registry.MustRegister(m.collectors()...)
	m.registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// NewFleet returns a fleet operator's metrics (see package clusters): a
// new registry with the Go runtime's and the process's collectors only;
// the operator's series are each cluster's (Cluster). Its own series
// (WrapTransport's requests, as of the home cluster) are counted
// nowhere.
func NewFleet() *Metrics {
	m := newSeries()
	m.registry = prometheus.NewRegistry()
	m.registerer = m.registry
	m.registry.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Cluster returns the series of one cluster of a fleet operator, on m's
// registry, each with the label cluster=name (one value per cluster
// served: bounded), until Unregister removes them. It fails if that
// cluster's series are registered already.
func (m *Metrics) Cluster(name string) (*Metrics, error) {
	c := newSeries()
	c.registry = m.registry
	c.registerer = prometheus.WrapRegistererWith(prometheus.Labels{"cluster": name}, m.registry)
	for i, col := range c.collectors() {
		if err := c.registerer.Register(col); err != nil {
			for _, done := range c.collectors()[:i] {
				c.registerer.Unregister(done)
			}
			return nil, fmt.Errorf("registering the metrics of the cluster %s: %w", name, err)
		}
	}
	return c, nil
}

// Unregister removes the operator's series from the registry: a fleet's
// cluster's, when it is no longer served. The Go runtime's and the
// process's collectors stay.
func (m *Metrics) Unregister() {
	for _, col := range m.collectors() {
		m.registerer.Unregister(col)
	}
}

// collectors are the operator's series, those of New and of Cluster.
func (m *Metrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{
		m.handlerRuns, m.handlerDuration, m.handlerRetries, m.eventLatency,
		m.watchEvents, m.watchRestarts, m.watchErrors, m.apiRequests,
		m.daemonStop, m.timerLag,
		m.reconcileTotal, m.reconcileErrors, m.terminalErrors, m.reconcileTime,
		m.queueLatency, m.workDuration, m.queueRetries,
		m.scrape,
	}
}

// newSeries makes the operator's series, registered nowhere yet.
func newSeries() *Metrics {
	m := &Metrics{
		handlerRuns: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kopf_handler_runs_total",
			Help: "Attempts of handlers by outcome: success, temporary (to be retried), permanent, retries_exhausted, timeout.",
		}, []string{"resource", "handler", "kind", "outcome"}),
		handlerDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "kopf_handler_duration_seconds",
			Help:    "How long the attempts of handlers took (a parent's includes its sub-handlers').",
			Buckets: handlerBuckets,
		}, []string{"resource", "handler", "kind"}),
		handlerRetries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kopf_handler_retries_total",
			Help: "Attempts of handlers that retried an earlier failed attempt for the same cause.",
		}, []string{"resource", "handler", "kind"}),
		eventLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "kopf_event_handler_latency_seconds",
			Help:    "From the arrival of a watch event (the oldest batched into the one processed) to the start of a handler's attempt for it.",
			Buckets: latencyBuckets,
		}, []string{"resource", "kind"}),
		watchEvents: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kopf_watch_events_total",
			Help: "Events received from the watch of a resource (the first listing's objects included).",
		}, []string{"resource", "namespace"}),
		watchRestarts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kopf_watch_restarts_total",
			Help: "Watch requests of a resource after its first one: the watch stream was re-established.",
		}, []string{"resource", "namespace"}),
		watchErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kopf_watch_errors_total",
			Help: "Failed listing or watch requests of a resource (each is retried).",
		}, []string{"resource", "namespace"}),
		apiRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "kopf_api_requests_total",
			Help: "Requests to the API server by verb (the HTTP method; WATCH for a watch) and status code (<error> when no response came).",
		}, []string{"verb", "code"}),
		daemonStop: newDaemonStop(),
		timerLag:   newTimerLag(),
		bg:         map[backgroundKey]*backgroundSeries{},

		reconcileTotal: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "controller_runtime_reconcile_total",
			Help: "Total number of reconciliations per controller",
		}, []string{"controller", "result"}),
		reconcileErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "controller_runtime_reconcile_errors_total",
			Help: "Total number of reconciliation errors per controller",
		}, []string{"controller"}),
		terminalErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "controller_runtime_terminal_reconcile_errors_total",
			Help: "Total number of terminal reconciliation errors per controller",
		}, []string{"controller"}),
		reconcileTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:                            "controller_runtime_reconcile_time_seconds",
			Help:                            "Length of time per reconciliation per controller",
			Buckets:                         reconcileBuckets,
			NativeHistogramBucketFactor:     1.1,
			NativeHistogramMaxBucketNumber:  100,
			NativeHistogramMinResetDuration: time.Hour,
		}, []string{"controller"}),
		queueLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Subsystem:                       "workqueue",
			Name:                            "queue_duration_seconds",
			Help:                            "How long in seconds an item stays in workqueue before being requested",
			Buckets:                         prometheus.ExponentialBuckets(10e-9, 10, 12),
			NativeHistogramBucketFactor:     1.1,
			NativeHistogramMaxBucketNumber:  100,
			NativeHistogramMinResetDuration: time.Hour,
		}, []string{"name", "controller"}),
		workDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Subsystem:                       "workqueue",
			Name:                            "work_duration_seconds",
			Help:                            "How long in seconds processing an item from workqueue takes.",
			Buckets:                         prometheus.ExponentialBuckets(10e-9, 10, 12),
			NativeHistogramBucketFactor:     1.1,
			NativeHistogramMaxBucketNumber:  100,
			NativeHistogramMinResetDuration: time.Hour,
		}, []string{"name", "controller"}),
		queueRetries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Subsystem: "workqueue",
			Name:      "retries_total",
			Help:      "Total number of items added to the workqueue with a non-zero delay (rate-limited requeues, explicit RequeueAfter or AddAfter calls)",
		}, []string{"name", "controller"}),
	}
	m.requests = requestSeries{vec: m.apiRequests, known: map[requestKey]prometheus.Counter{}}
	m.scrape = &scrapeCollector{m: m}
	return m
}

// handlerBuckets are kopf_handler_duration_seconds's: from 5 ms to 10 min.
var handlerBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600}

// latencyBuckets are kopf_event_handler_latency_seconds's: from 1 ms to 1 min.
var latencyBuckets = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60}

// reconcileBuckets are controller_runtime_reconcile_time_seconds's, as
// controller-runtime declares them.
var reconcileBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0,
	1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60}

// Registry returns the registry of the operator's metrics, for tests and
// for an operator that serves them itself or adds collectors of its own.
func (m *Metrics) Registry() *prometheus.Registry { return m.registry }

// Handler serves the metrics in Prometheus's exposition formats.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{Registry: m.registry})
}

// Resource returns the series of one served resource, named name (the
// resource's kopf-style name, e.g. "kopfexamples.v1.kopf.dev"), with the
// figures that are read at each scrape: its queue's (stats) and its
// objects in progress (inProgress); either may be nil.
func (m *Metrics) Resource(name string, stats func() queueing.Stats, inProgress func() int) *Resource {
	r := &Resource{
		m: m, name: name, stats: stats, inProgress: inProgress,
		handlers:        map[handlerKey]*handlerSeries{},
		reconcileErrors: m.reconcileErrors.WithLabelValues(name),
		terminalErrors:  m.terminalErrors.WithLabelValues(name),
		reconcileTime:   m.reconcileTime.WithLabelValues(name),
		queueLatency:    m.queueLatency.WithLabelValues(name, name),
		workDuration:    m.workDuration.WithLabelValues(name, name),
		queueRetries:    m.queueRetries.WithLabelValues(name, name),
	}
	for i, result := range results {
		r.reconcileTotal[i] = m.reconcileTotal.WithLabelValues(name, string(result))
	}
	for i, kind := range latencyKinds {
		r.eventLatency[i] = m.eventLatency.WithLabelValues(name, string(kind))
	}
	m.mu.Lock()
	m.resources = append(m.resources, r)
	m.mu.Unlock()
	return r
}

// results are the reconcile results, in the order of Resource.reconcileTotal.
var results = [...]reactor.Result{reactor.ResultSuccess, reactor.ResultError, reactor.ResultRequeue, reactor.ResultRequeueAfter}

// latencyKinds are the kinds of handlers that events start.
var latencyKinds = [...]reactor.Kind{reactor.KindChanging, reactor.KindEvent}

// Resource are the series of one served resource.
type Resource struct {
	m          *Metrics
	name       string
	stats      func() queueing.Stats
	inProgress func() int

	reconcileTotal  [len(results)]prometheus.Counter
	reconcileErrors prometheus.Counter
	terminalErrors  prometheus.Counter
	reconcileTime   prometheus.Observer
	queueLatency    prometheus.Observer
	workDuration    prometheus.Observer
	queueRetries    prometheus.Counter
	eventLatency    [len(latencyKinds)]prometheus.Observer

	mu       sync.RWMutex
	handlers map[handlerKey]*handlerSeries
	watches  []*Watch
}

type handlerKey struct {
	id   string
	kind reactor.Kind
}

// handlerSeries are the series of one handler of a resource.
type handlerSeries struct {
	runs     [len(outcomes)]prometheus.Counter
	duration prometheus.Observer // nil for daemons and timers
	retries  prometheus.Counter
}

// Outcomes of handlers' attempts, as kopf_handler_runs_total labels them.
const (
	OutcomeSuccess          = "success"
	OutcomeTemporary        = "temporary"
	OutcomePermanent        = "permanent"
	OutcomeRetriesExhausted = "retries_exhausted"
	OutcomeTimeout          = "timeout"
)

// outcomes are the outcomes, in the order of handlerSeries.runs.
var outcomes = [...]string{OutcomeSuccess, OutcomeTemporary, OutcomePermanent, OutcomeRetriesExhausted, OutcomeTimeout}

// Outcome names how an attempt ended, as kopf_handler_runs_total labels it.
func Outcome(o reactor.Observation) string { return outcomes[outcomeIndex(o)] }

func outcomeIndex(o reactor.Observation) int {
	switch {
	case o.Outcome.Success:
		return 0
	case !o.Outcome.Failure:
		return 1
	}
	switch o.Outcome.Limit {
	case execution.LimitRetries:
		return 3
	case execution.LimitTimeout:
		return 4
	}
	return 2
}

// handler returns the series of a handler, resolving them on first use.
func (r *Resource) handler(id string, kind reactor.Kind) *handlerSeries {
	key := handlerKey{id: id, kind: kind}
	r.mu.RLock()
	hs := r.handlers[key]
	r.mu.RUnlock()
	if hs != nil {
		return hs
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if hs = r.handlers[key]; hs != nil {
		return hs
	}
	hs = &handlerSeries{retries: r.m.handlerRetries.WithLabelValues(r.name, id, string(kind))}
	if kind == reactor.KindChanging || kind == reactor.KindEvent || kind == reactor.KindReconcile { // daemons' and timers' attempts are not timed (their stops and ticks are: DaemonStopped, TimerTicked)
		hs.duration = r.m.handlerDuration.WithLabelValues(r.name, id, string(kind))
	}
	for i, outcome := range outcomes {
		hs.runs[i] = r.m.handlerRuns.WithLabelValues(r.name, id, string(kind), outcome)
	}
	r.handlers[key] = hs
	return hs
}

// Observe counts one attempt of a handler (reactor.Reactor.Observe): its
// outcome, its duration, whether it was a retry, and the latency from its
// event's arrival. An attempt interrupted by the operator's exit is not
// counted: it is no outcome, and the next run of the operator repeats it.
func (r *Resource) Observe(o reactor.Observation) {
	if o.Interrupted {
		return
	}
	hs := r.handler(o.Handler, o.Kind)
	hs.runs[outcomeIndex(o)].Inc()
	if o.Retry > 0 {
		hs.retries.Inc()
	}
	if o.Started.IsZero() || hs.duration == nil {
		return // a daemon's or a timer's: not timed here
	}
	hs.duration.Observe(o.Duration.Seconds())
	if o.Arrived.IsZero() {
		return
	}
	for i, kind := range latencyKinds {
		if kind == o.Kind {
			r.eventLatency[i].Observe(max(o.Started.Sub(o.Arrived), 0).Seconds())
		}
	}
}

// Processed counts one event's processing (reactor.Reactor.ObserveProcessed)
// as controller-runtime counts a reconciliation and a workqueue item.
func (r *Resource) Processed(p reactor.Processed) {
	for i, result := range results {
		if result == p.Result {
			r.reconcileTotal[i].Inc()
		}
	}
	if p.Result == reactor.ResultError {
		r.reconcileErrors.Inc()
	}
	if p.Terminal {
		r.terminalErrors.Inc()
	}
	r.reconcileTime.Observe(p.Elapsed.Seconds())
	r.workDuration.Observe(p.Elapsed.Seconds())
	if !p.Arrived.IsZero() {
		r.queueLatency.Observe(max(p.Started.Sub(p.Arrived), 0).Seconds())
	}
	if p.Retries > 0 {
		r.queueRetries.Add(float64(p.Retries))
	}
}
