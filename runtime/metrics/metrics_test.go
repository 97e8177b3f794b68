package metrics

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"

	"github.com/kopf-go/kopf/runtime/execution"
	"github.com/kopf-go/kopf/runtime/queueing"
	"github.com/kopf-go/kopf/runtime/reactor"
)

const kex = "kopfexamples.v1.kopf.dev"

func TestObserveCountsOutcomes(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name    string
		obs     reactor.Observation
		outcome string // "": not counted
	}{
		{"success", reactor.Observation{Outcome: execution.Outcome{Success: true}}, OutcomeSuccess},
		{"a retry wanted", reactor.Observation{Outcome: execution.Outcome{Delay: time.Second}}, OutcomeTemporary},
		{"a permanent failure", reactor.Observation{Outcome: execution.Outcome{Failure: true}}, OutcomePermanent},
		{"retries exhausted", reactor.Observation{Outcome: execution.Outcome{Failure: true, Limit: execution.LimitRetries}}, OutcomeRetriesExhausted},
		{"timed out", reactor.Observation{Outcome: execution.Outcome{Failure: true, Limit: execution.LimitTimeout}}, OutcomeTimeout},
		{"interrupted by the exit", reactor.Observation{Interrupted: true}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := New()
			r := m.Resource(kex, nil, nil)
			o := tt.obs
			o.Handler, o.Kind, o.Name, o.Namespace = "create_fn", reactor.KindChanging, "obj", "ns"
			r.Observe(o)
			for _, outcome := range outcomes {
				want := 0.0
				if outcome == tt.outcome {
					want = 1
				}
				if got := testutil.ToFloat64(m.handlerRuns.WithLabelValues(kex, "create_fn", "changing", outcome)); got != want {
					t.Errorf("kopf_handler_runs_total{outcome=%q} = %g, want %g", outcome, got, want)
				}
			}
			if tt.outcome != "" {
				if got := Outcome(o); got != tt.outcome {
					t.Errorf("Outcome() = %q, want %q", got, tt.outcome)
				}
			}
		})
	}

	t.Run("durations, retries and latency", func(t *testing.T) {
		m := New()
		r := m.Resource(kex, nil, nil)
		r.Observe(reactor.Observation{Handler: "h", Kind: reactor.KindChanging, Retry: 2, Outcome: execution.Outcome{Success: true},
			Arrived: t0, Started: t0.Add(30 * time.Millisecond), Duration: 2 * time.Second})
		r.Observe(reactor.Observation{Handler: "e", Kind: reactor.KindEvent, Outcome: execution.Outcome{Success: true},
			Arrived: t0, Started: t0.Add(3 * time.Millisecond), Duration: time.Millisecond})
		r.Observe(reactor.Observation{Handler: "r", Kind: reactor.KindReconcile, Outcome: execution.Outcome{Success: true},
			Arrived: t0, Started: t0, Duration: 3 * time.Second})
		r.Observe(reactor.Observation{Handler: "d", Kind: reactor.KindDaemon, Outcome: execution.Outcome{Success: true}}) // untimed
		if got := testutil.ToFloat64(m.handlerRetries.WithLabelValues(kex, "h", "changing")); got != 1 {
			t.Errorf("kopf_handler_retries_total{handler=h} = %g, want 1", got)
		}
		if got := testutil.ToFloat64(m.handlerRuns.WithLabelValues(kex, "d", "daemon", "success")); got != 1 {
			t.Errorf("kopf_handler_runs_total{handler=d} = %g, want 1", got)
		}
		h := histogram(t, m, "kopf_handler_duration_seconds", map[string]string{"handler": "h"})
		if h.GetSampleCount() != 1 || h.GetSampleSum() != 2 {
			t.Errorf("kopf_handler_duration_seconds{handler=h}: %d samples, sum %g; want 1, 2", h.GetSampleCount(), h.GetSampleSum())
		}
		if h := histogram(t, m, "kopf_handler_duration_seconds", map[string]string{"handler": "r", "kind": "reconcile"}); h.GetSampleCount() != 1 || h.GetSampleSum() != 3 {
			t.Errorf("kopf_handler_duration_seconds{handler=r}: %d samples, sum %g; want 1, 3", h.GetSampleCount(), h.GetSampleSum())
		}
		if h := histogram(t, m, "kopf_handler_duration_seconds", map[string]string{"handler": "d"}); h != nil {
			t.Errorf("a daemon's attempt, untimed, has a duration: %v", h)
		}
		for kind, want := range map[string]float64{"changing": 0.03, "event": 0.003} {
			h := histogram(t, m, "kopf_event_handler_latency_seconds", map[string]string{"kind": kind})
			if h.GetSampleCount() != 1 || h.GetSampleSum() != want {
				t.Errorf("kopf_event_handler_latency_seconds{kind=%s}: %d samples, sum %g; want 1, %g", kind, h.GetSampleCount(), h.GetSampleSum(), want)
			}
		}
	})
}

func TestProcessedAsControllerRuntime(t *testing.T) {
	m := New()
	r := m.Resource(kex, nil, nil)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, p := range []reactor.Processed{
		{Result: reactor.ResultSuccess, Arrived: t0, Started: t0.Add(time.Millisecond), Elapsed: 20 * time.Millisecond},
		{Result: reactor.ResultRequeue, Started: t0, Elapsed: time.Millisecond},
		{Result: reactor.ResultError, Retries: 2, Started: t0, Elapsed: time.Second},
		{Result: reactor.ResultError, Terminal: true, Started: t0, Elapsed: time.Millisecond},
		{Result: reactor.ResultRequeueAfter, Started: t0, Elapsed: time.Millisecond},
	} {
		r.Processed(p)
	}
	for result, want := range map[string]float64{"success": 1, "error": 2, "requeue": 1, "requeue_after": 1} {
		if got := testutil.ToFloat64(m.reconcileTotal.WithLabelValues(kex, result)); got != want {
			t.Errorf("controller_runtime_reconcile_total{result=%q} = %g, want %g", result, got, want)
		}
	}
	for name, want := range map[string]float64{
		"controller_runtime_reconcile_errors_total":          2,
		"controller_runtime_terminal_reconcile_errors_total": 1,
		"workqueue_retries_total":                            2,
	} {
		if got := counter(t, m, name); got != want {
			t.Errorf("%s = %g, want %g", name, got, want)
		}
	}
	for _, name := range []string{"controller_runtime_reconcile_time_seconds", "workqueue_work_duration_seconds"} {
		if h := histogram(t, m, name, nil); h.GetSampleCount() != 5 || h.GetSampleSum() < 1.02 || h.GetSampleSum() > 1.03 {
			t.Errorf("%s: %d samples, sum %g; want 5, the whole times (1.023s)", name, h.GetSampleCount(), h.GetSampleSum())
		}
	}
	if h := histogram(t, m, "workqueue_queue_duration_seconds", nil); h.GetSampleCount() != 1 || h.GetSampleSum() != 0.001 {
		t.Errorf("workqueue_queue_duration_seconds: %d samples, sum %g; want 1 (only one arrival is known), 0.001", h.GetSampleCount(), h.GetSampleSum())
	}
}

// The controller-runtime series have controller-runtime's names, labels
// and buckets, so that its dashboards and alerts work unchanged.
func TestControllerRuntimeLabels(t *testing.T) {
	m := New()
	r := m.Resource(kex, func() queueing.Stats { return queueing.Stats{} }, nil)
	r.Processed(reactor.Processed{Result: reactor.ResultError, Terminal: true, Retries: 1, Started: time.Now(), Arrived: time.Now()})
	want := map[string][]string{
		"controller_runtime_reconcile_total":                 {"controller", "result"},
		"controller_runtime_reconcile_errors_total":          {"controller"},
		"controller_runtime_terminal_reconcile_errors_total": {"controller"},
		"controller_runtime_reconcile_time_seconds":          {"controller"},
		"controller_runtime_active_workers":                  {"controller"},
		"controller_runtime_max_concurrent_reconciles":       {"controller"},
		"workqueue_depth":                                    {"controller", "name", "priority"},
		"workqueue_adds_total":                               {"controller", "name"},
		"workqueue_queue_duration_seconds":                   {"controller", "name"},
		"workqueue_work_duration_seconds":                    {"controller", "name"},
		"workqueue_retries_total":                            {"controller", "name"},
		"workqueue_unfinished_work_seconds":                  {"controller", "name"},
		"workqueue_longest_running_processor_seconds":        {"controller", "name"},
	}
	families := gather(t, m)
	for name, labels := range want {
		mf := families[name]
		if mf == nil {
			t.Errorf("%s is not exposed", name)
			continue
		}
		var got []string
		for _, lp := range mf.GetMetric()[0].GetLabel() {
			got = append(got, lp.GetName())
			if lp.GetName() == "controller" || lp.GetName() == "name" {
				if lp.GetValue() != kex {
					t.Errorf("%s{%s=%q}, want %q", name, lp.GetName(), lp.GetValue(), kex)
				}
			}
		}
		if !slices.Equal(got, labels) {
			t.Errorf("%s has the labels %v, want %v", name, got, labels)
		}
	}
	h := families["controller_runtime_reconcile_time_seconds"].GetMetric()[0].GetHistogram()
	if n := len(h.GetBucket()); n != len(reconcileBuckets) || h.GetBucket()[0].GetUpperBound() != 0.005 || h.GetBucket()[n-1].GetUpperBound() != 60 {
		t.Errorf("controller_runtime_reconcile_time_seconds has %d buckets, want controller-runtime's %d, 0.005 to 60", n, len(reconcileBuckets))
	}
	q := families["workqueue_queue_duration_seconds"].GetMetric()[0].GetHistogram()
	if n := len(q.GetBucket()); n != 12 || q.GetBucket()[0].GetUpperBound() != 1e-8 {
		t.Errorf("workqueue_queue_duration_seconds has %d buckets from %g, want 12 from 1e-8", n, q.GetBucket()[0].GetUpperBound())
	}
}

func TestScrapeFigures(t *testing.T) {
	m := New()
	stats := queueing.Stats{Limit: 64, Workers: 5, Busy: 2, BusyFor: 3 * time.Second, Longest: 2 * time.Second, Pending: 4, Queued: 1, Added: 17}
	r := m.Resource(kex, func() queueing.Stats { return stats }, func() int { return 3 })
	w := r.Watch("ns1")
	w.Event()
	cluster := r.Watch("")

	want := `
# HELP controller_runtime_active_workers Number of currently used workers per controller
# TYPE controller_runtime_active_workers gauge
controller_runtime_active_workers{controller="kopfexamples.v1.kopf.dev"} 2
# HELP controller_runtime_max_concurrent_reconciles Maximum number of concurrent reconciles per controller
# TYPE controller_runtime_max_concurrent_reconciles gauge
controller_runtime_max_concurrent_reconciles{controller="kopfexamples.v1.kopf.dev"} 64
# HELP kopf_objects_in_progress Objects whose changing handlers are unfinished for their cause (delayed, or due in a next cycle).
# TYPE kopf_objects_in_progress gauge
kopf_objects_in_progress{resource="kopfexamples.v1.kopf.dev"} 3
# HELP kopf_queue_busy_workers Objects being processed now.
# TYPE kopf_queue_busy_workers gauge
kopf_queue_busy_workers{resource="kopfexamples.v1.kopf.dev"} 2
# HELP kopf_queue_depth Objects with an event waiting to be processed (the events batched into one count once).
# TYPE kopf_queue_depth gauge
kopf_queue_depth{resource="kopfexamples.v1.kopf.dev"} 4
# HELP kopf_queue_workers Worker goroutines alive: the pool's with a worker limit, else those processing an object.
# TYPE kopf_queue_workers gauge
kopf_queue_workers{resource="kopfexamples.v1.kopf.dev"} 5
# HELP workqueue_adds_total Total number of adds handled by workqueue
# TYPE workqueue_adds_total counter
workqueue_adds_total{controller="kopfexamples.v1.kopf.dev",name="kopfexamples.v1.kopf.dev"} 17
# HELP workqueue_depth Current depth of workqueue by workqueue and priority
# TYPE workqueue_depth gauge
workqueue_depth{controller="kopfexamples.v1.kopf.dev",name="kopfexamples.v1.kopf.dev",priority=""} 4
# HELP workqueue_longest_running_processor_seconds How many seconds has the longest running processor for workqueue been running.
# TYPE workqueue_longest_running_processor_seconds gauge
workqueue_longest_running_processor_seconds{controller="kopfexamples.v1.kopf.dev",name="kopfexamples.v1.kopf.dev"} 2
`
	names := []string{"controller_runtime_active_workers", "controller_runtime_max_concurrent_reconciles", "kopf_objects_in_progress",
		"kopf_queue_busy_workers", "kopf_queue_depth", "kopf_queue_workers", "workqueue_adds_total", "workqueue_depth",
		"workqueue_longest_running_processor_seconds"}
	if err := testutil.GatherAndCompare(m.Registry(), strings.NewReader(want), names...); err != nil {
		t.Error(err)
	}
	if got := gauge(t, m, "workqueue_unfinished_work_seconds", nil); got != 3 {
		t.Errorf("workqueue_unfinished_work_seconds = %g, want 3", got)
	}
	ages := map[string]float64{}
	for _, metric := range gather(t, m)["kopf_watch_last_event_age_seconds"].GetMetric() {
		ages[label(metric, "namespace")] = metric.GetGauge().GetValue()
	}
	if len(ages) != 2 || ages["ns1"] < 0 || ages["ns1"] > 5 || ages[""] < 0 || ages[""] > 5 {
		t.Errorf("kopf_watch_last_event_age_seconds = %v, want two fresh watches, ns1 and the cluster's", ages)
	}
	_ = cluster
}

func TestWatch(t *testing.T) {
	m := New()
	w := m.Resource(kex, nil, nil).Watch("ns1")
	w.Watching() // the first: no restart
	w.Event()
	w.Event()
	w.Failed()
	w.Watching()
	w.Watching()
	for name, want := range map[string]float64{"kopf_watch_events_total": 2, "kopf_watch_errors_total": 1, "kopf_watch_restarts_total": 2} {
		if got := counter(t, m, name); got != want {
			t.Errorf("%s = %g, want %g", name, got, want)
		}
	}
	now := time.Now()
	w.last.Store(now.Add(-90 * time.Second).UnixNano())
	if got := w.age(now); got != 90*time.Second {
		t.Errorf("age() = %s, want 90s since the last event", got)
	}
}

func TestWrapTransport(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/missing" {
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	m := New()
	client := &http.Client{Transport: m.WrapTransport(http.DefaultTransport)}
	for _, req := range []struct{ method, path string }{
		{"GET", "/api"}, {"GET", "/api/v1/pods?watch=true&resourceVersion=1"}, {"GET", "/missing"}, {"PATCH", "/api/v1/x"}, {"GET", "/api"},
	} {
		r, err := http.NewRequest(req.method, srv.URL+req.path, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := client.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		_ = resp.Body.Close()
	}
	failing := &http.Client{Transport: m.WrapTransport(roundTripFunc(func(*http.Request) (*http.Response, error) {
		return nil, errors.New("connection refused")
	}))}
	if _, err := failing.Get(srv.URL); err == nil {
		t.Fatal("the failing transport answered")
	}
	want := `
# HELP kopf_api_requests_total Requests to the API server by verb (the HTTP method; WATCH for a watch) and status code (<error> when no response came).
# TYPE kopf_api_requests_total counter
kopf_api_requests_total{code="200",verb="GET"} 2
kopf_api_requests_total{code="200",verb="PATCH"} 1
kopf_api_requests_total{code="200",verb="WATCH"} 1
kopf_api_requests_total{code="404",verb="GET"} 1
kopf_api_requests_total{code="<error>",verb="GET"} 1
`
	if err := testutil.GatherAndCompare(m.Registry(), strings.NewReader(want), "kopf_api_requests_total"); err != nil {
		t.Error(err)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestHandlerServesTheRegistry(t *testing.T) {
	m := New()
	m.Resource(kex, nil, nil).Observe(reactor.Observation{Handler: "h", Kind: reactor.KindChanging, Outcome: execution.Outcome{Success: true}})
	srv := httptest.NewServer(m.Handler())
	t.Cleanup(srv.Close)
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		`kopf_handler_runs_total{handler="h",kind="changing",outcome="success",resource="kopfexamples.v1.kopf.dev"} 1`,
		"# TYPE go_goroutines gauge",
	} {
		if !strings.Contains(string(data), line) {
			t.Errorf("the page lacks %q:\n%s", line, data)
		}
	}
}

// Counting an attempt or a processing allocates nothing once the
// handler's series are resolved.
func TestObserveAllocatesNothing(t *testing.T) {
	m := New()
	r := m.Resource(kex, nil, nil)
	now := time.Now()
	obs := reactor.Observation{Handler: "h", Kind: reactor.KindChanging, Outcome: execution.Outcome{Success: true},
		Arrived: now, Started: now, Duration: time.Millisecond, Retry: 1}
	p := reactor.Processed{Result: reactor.ResultSuccess, Arrived: now, Started: now, Elapsed: time.Millisecond, Retries: 1}
	w := r.Watch("ns")
	r.Observe(obs)
	if n := testing.AllocsPerRun(100, func() {
		r.Observe(obs)
		r.Processed(p)
		w.Event()
	}); n != 0 {
		t.Errorf("an attempt, a processing and an event allocate %g times, want 0", n)
	}
}

func gather(t *testing.T, m *Metrics) map[string]*dto.MetricFamily {
	t.Helper()
	mfs, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*dto.MetricFamily{}
	for _, mf := range mfs {
		out[mf.GetName()] = mf
	}
	return out
}

// find returns the first series of the family name whose labels include
// labels; nil if none.
func find(t *testing.T, m *Metrics, name string, labels map[string]string) *dto.Metric {
	t.Helper()
	for _, metric := range gather(t, m)[name].GetMetric() {
		ok := true
		for k, v := range labels {
			ok = ok && label(metric, k) == v
		}
		if ok {
			return metric
		}
	}
	return nil
}

func histogram(t *testing.T, m *Metrics, name string, labels map[string]string) *dto.Histogram {
	t.Helper()
	return find(t, m, name, labels).GetHistogram()
}

func counter(t *testing.T, m *Metrics, name string) float64 {
	t.Helper()
	return find(t, m, name, nil).GetCounter().GetValue()
}

func gauge(t *testing.T, m *Metrics, name string, labels map[string]string) float64 {
	t.Helper()
	return find(t, m, name, labels).GetGauge().GetValue()
}

func label(m *dto.Metric, name string) string {
	for _, lp := range m.GetLabel() {
		if lp.GetName() == name {
			return lp.GetValue()
		}
	}
	return ""
}
