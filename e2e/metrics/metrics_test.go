// Package metrics tests an operator's Prometheus metrics on a real control
// plane: served by default over HTTPS to the clients that the API server
// authenticates and authorizes (secure_test.go: 401, 403, 200), or over
// plain HTTP when asked; and the page, scraped while the operator handles
// objects and parsed as Prometheus parses it, counts what the handlers
// did, the requests to the API server and controller-runtime's series.
package metrics

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kopf-go/kopf"
	"github.com/kopf-go/kopf/envtest"
	"github.com/kopf-go/kopf/kopftest"
)

var (
	gvr      = schema.GroupVersionResource{Group: "kopf.dev", Version: "v1", Resource: "kopfexamples"}
	selector = kopf.Selector{Group: "kopf.dev", Version: "v1", Name: "kopfexamples"}
)

const resource = "kopfexamples.v1.kopf.dev"

// register adds a create handler that succeeds, one that fails
// temporarily once per object and then succeeds, one that fails for good,
// an on.event handler, a daemon that runs until it is stopped, and a
// timer.
func register(r *kopf.Registry) error {
	var mu sync.Mutex
	failed := map[string]bool{}
	create := func(id string, fn func(kw *kopf.ChangingKwargs) error) error {
		return r.AddChanging(kopf.ChangingHandler{ID: id, Selector: selector, Reasons: []kopf.Reason{kopf.ReasonCreate},
			Fn: func(_ context.Context, kw *kopf.ChangingKwargs) (any, error) { return nil, fn(kw) }})
	}
	if err := create("create_fn", func(*kopf.ChangingKwargs) error { return nil }); err != nil {
		return err
	}
	err := create("flaky_fn", func(kw *kopf.ChangingKwargs) error {
		mu.Lock()
		defer mu.Unlock()
		if !failed[kw.Name] {
			failed[kw.Name] = true
			return kopf.NewTemporaryError("not yet", 100*time.Millisecond)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := create("broken_fn", func(*kopf.ChangingKwargs) error { return kopf.NewPermanentError("never") }); err != nil {
		return err
	}
	err = r.AddDaemon(kopf.DaemonHandler{ID: "daemon_fn", Selector: selector,
		Fn: func(_ context.Context, kw *kopf.DaemonKwargs) (any, error) { <-kw.Stopped.Done(); return nil, nil }})
	if err != nil {
		return err
	}
	err = r.AddTimer(kopf.TimerHandler{ID: "timer_fn", Selector: selector, Interval: 200 * time.Millisecond,
		Fn: func(context.Context, *kopf.TimerKwargs) (any, error) { return nil, nil }})
	if err != nil {
		return err
	}
	return r.AddEvent(kopf.EventHandler{ID: "event_fn", Selector: selector,
		Fn: func(context.Context, *kopf.EventKwargs) error { return nil }})
}

func TestMetricsEndpoint(t *testing.T) {
	env := envtest.Start(t, envtest.WithCRDs(filepath.Join("..", "..", "examples", "crd.yaml")))
	ns := namespace(t, env.Config, "metrics")
	addr := freeAddress(t)
	objs := kopftest.NewObjects(t, env.Config, gvr, ns)
	op := kopftest.Start(t, env.Config, register, kopf.WithNamespaces(ns), kopf.WithMetrics(addr), kopf.WithPlainMetrics())
	op.WaitLog(fmt.Sprintf("Serving the metrics on http://%s/metrics.", addr), 10*time.Second)

	const n = 3
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("metrics-object-%d", i)
		objs.Create(map[string]any{"apiVersion": "kopf.dev/v1", "kind": "KopfExample",
			"metadata": map[string]any{"name": names[i]}, "spec": map[string]any{"field": "value"}})
	}
	op.WaitOutcomes(kopftest.Match{Handler: "create_fn", Result: kopftest.Succeeded}, n, 30*time.Second)
	op.WaitOutcomes(kopftest.Match{Handler: "flaky_fn", Result: kopftest.Succeeded}, n, 30*time.Second)
	op.WaitOutcomes(kopftest.Match{Handler: "broken_fn", Result: kopftest.Failed}, n, 30*time.Second)

	families := scrape(t, addr)
	runs := func(handler, kind, outcome string) float64 {
		return value(families, "kopf_handler_runs_total", map[string]string{"resource": resource, "handler": handler, "kind": kind, "outcome": outcome})
	}
	for _, tt := range []struct {
		handler, kind, outcome string
		want                   float64
	}{
		{"create_fn", "changing", "success", n},
		{"flaky_fn", "changing", "temporary", n},
		{"flaky_fn", "changing", "success", n},
		{"broken_fn", "changing", "permanent", n},
	} {
		if got := runs(tt.handler, tt.kind, tt.outcome); got != tt.want {
			t.Errorf("kopf_handler_runs_total{handler=%q,outcome=%q} = %g, want %g", tt.handler, tt.outcome, got, tt.want)
		}
	}
	if got := runs("event_fn", "event", "success"); got < n {
		t.Errorf("kopf_handler_runs_total{handler=\"event_fn\",outcome=\"success\"} = %g, want at least %d (one per object's creation)", got, n)
	}
	if got := value(families, "kopf_handler_retries_total", map[string]string{"handler": "flaky_fn"}); got != n {
		t.Errorf("kopf_handler_retries_total{handler=\"flaky_fn\"} = %g, want %d", got, n)
	}
	for _, name := range []string{"kopf_handler_duration_seconds", "kopf_event_handler_latency_seconds", "controller_runtime_reconcile_time_seconds", "workqueue_queue_duration_seconds"} {
		if got := histogramCount(families, name, map[string]string{}); got < n {
			t.Errorf("%s has %d samples, want at least %d", name, got, n)
		}
	}

	patches := value(families, "kopf_api_requests_total", map[string]string{"verb": "PATCH", "code": "200"})
	watches := value(families, "kopf_api_requests_total", map[string]string{"verb": "WATCH", "code": "200"})
	if patches < n || watches < 1 {
		t.Errorf("kopf_api_requests_total: %g PATCH 200, %g WATCH 200; want at least %d and 1", patches, watches, n)
	}
	if got := value(families, "kopf_watch_events_total", map[string]string{"resource": resource, "namespace": ns}); got < n {
		t.Errorf("kopf_watch_events_total{namespace=%q} = %g, want at least %d", ns, got, n)
	}
	if got := value(families, "kopf_watch_last_event_age_seconds", map[string]string{"resource": resource, "namespace": ns}); got < 0 || got > 60 {
		t.Errorf("kopf_watch_last_event_age_seconds = %g, want a recent event", got)
	}

	success := value(families, "controller_runtime_reconcile_total", map[string]string{"controller": resource, "result": "success"})
	errs := value(families, "controller_runtime_reconcile_total", map[string]string{"controller": resource, "result": "error"})
	if success < n || errs < n {
		t.Errorf("controller_runtime_reconcile_total{controller=%q}: %g success, %g error; want at least %d of each", resource, success, errs, n)
	}
	if got := value(families, "controller_runtime_terminal_reconcile_errors_total", map[string]string{"controller": resource}); got != n {
		t.Errorf("controller_runtime_terminal_reconcile_errors_total = %g, want %d (broken_fn, once per object)", got, n)
	}
	if got := value(families, "workqueue_adds_total", map[string]string{"name": resource, "controller": resource}); got < n {
		t.Errorf("workqueue_adds_total = %g, want at least %d", got, n)
	}

	// A deleted object's daemon and timer stop; the timers tick.
	objs.Delete(names[0], 30*time.Second)
	stops := func(handler, kind string) uint64 {
		return histogramCount(families, "kopf_daemon_stop_seconds", map[string]string{"resource": resource, "handler": handler, "kind": kind, "outcome": "exited"})
	}
	deadline := time.Now().Add(10 * time.Second)
	for families = scrape(t, addr); stops("daemon_fn", "daemon") < 1 || stops("timer_fn", "timer") < 1; families = scrape(t, addr) {
		if time.Now().After(deadline) {
			t.Fatalf("kopf_daemon_stop_seconds: %d stops of daemon_fn, %d of timer_fn; want at least 1 of each",
				stops("daemon_fn", "daemon"), stops("timer_fn", "timer"))
		}
		time.Sleep(100 * time.Millisecond)
	}
	if got := histogramCount(families, "kopf_timer_lag_seconds", map[string]string{"resource": resource, "handler": "timer_fn"}); got < n {
		t.Errorf("kopf_timer_lag_seconds{handler=\"timer_fn\"} has %d samples, want at least %d (a tick per object)", got, n)
	}

	// No series is labelled per object.
	for _, mf := range families {
		for _, m := range mf.GetMetric() {
			for _, lp := range m.GetLabel() {
				if strings.HasPrefix(lp.GetValue(), "metrics-object-") || lp.GetName() == "name" && lp.GetValue() != resource {
					t.Errorf("%s has a label of an object: %s=%q", mf.GetName(), lp.GetName(), lp.GetValue())
				}
			}
		}
	}
}

// freeAddress returns a local address whose port is free now.
func freeAddress(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ln.Close() }()
	return ln.Addr().String()
}

// scrape GETs the metrics page and parses it as Prometheus does.
func scrape(t *testing.T, addr string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %s", resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parsing the metrics: %v", err)
	}
	return families
}

// matching returns the series of the family name whose labels include
// labels.
func matching(families map[string]*dto.MetricFamily, name string, labels map[string]string) []*dto.Metric {
	var out []*dto.Metric
	for _, m := range families[name].GetMetric() {
		ok := true
		for k, v := range labels {
			found := false
			for _, lp := range m.GetLabel() {
				found = found || lp.GetName() == k && lp.GetValue() == v
			}
			ok = ok && found
		}
		if ok {
			out = append(out, m)
		}
	}
	return out
}

// value sums the counters or gauges of the family name that labels select.
func value(families map[string]*dto.MetricFamily, name string, labels map[string]string) float64 {
	sum := 0.0
	for _, m := range matching(families, name, labels) {
		sum += m.GetCounter().GetValue() + m.GetGauge().GetValue() + m.GetUntyped().GetValue()
	}
	return sum
}

// histogramCount sums the sample counts of the histograms that labels select.
func histogramCount(families map[string]*dto.MetricFamily, name string, labels map[string]string) uint64 {
	var sum uint64
	for _, m := range matching(families, name, labels) {
		sum += m.GetHistogram().GetSampleCount()
	}
	return sum
}

func namespace(t *testing.T, cfg *rest.Config, name string) string {
	t.Helper()
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := cs.CoreV1().Namespaces().Create(context.Background(), ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return name
}
