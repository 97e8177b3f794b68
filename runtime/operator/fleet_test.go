package operator

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/rest"

	"github.com/kopf-go/kopf/runtime/clusters"
	"github.com/kopf-go/kopf/runtime/kwargs"
	"github.com/kopf-go/kopf/runtime/registry"
	"github.com/kopf-go/kopf/runtime/resources"
	"github.com/kopf-go/kopf/runtime/settings"
)

// sinkProvider hands its sink to the test and runs until ctx is done.
type sinkProvider struct{ sink chan clusters.Sink }

func (p sinkProvider) Run(ctx context.Context, sink clusters.Sink) error {
	p.sink <- sink
	<-ctx.Done()
	return nil
}

// lockedBuffer is a log written by the operator's goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// A fleet's cluster whose API server cannot be reached is engaged at once
// (Engage does not wait for it), is not ready, logs its failures with its
// name, has its metrics labelled with it, and is disengaged promptly, its
// metrics gone; the operator then stops cleanly.
func TestFleetUnreachableCluster(t *testing.T) {
	unreachable := &rest.Config{Host: "https://127.0.0.1:1"}
	reg := registry.New()
	sel := resources.Selector{Group: "kopf.dev", Version: "v1", Name: "kopfexamples"}
	if err := reg.AddEvent(registry.EventHandler{ID: "ev", Selector: sel, Fn: func(context.Context, *kwargs.Event) error { return nil }}); err != nil {
		t.Fatal(err)
	}
	var log lockedBuffer
	var metricsReg *prometheus.Registry
	p := sinkProvider{sink: make(chan clusters.Sink, 1)}
	s := settings.Default()
	s.Watching.InactivityTimeout = time.Second
	o, err := newOperator(reg, Options{Config: unreachable, Clusters: p, Standalone: true, AllNamespaces: true, Settings: s,
		RescanInterval: 100 * time.Millisecond,
		Logger:         slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelDebug})),
		OnMetrics:      func(r *prometheus.Registry, _ http.Handler) { metricsReg = r }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- o.run(ctx) }()
	sink := <-p.sink

	engaged := make(chan error, 1)
	go func() { engaged <- sink.Engage(ctx, clusters.Cluster{Name: "far", Config: unreachable}) }()
	select {
	case err := <-engaged:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Engage waits for an unreachable cluster")
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(log.String(), "cluster=far") || !hasClusterSeries(t, metricsReg, "far") {
		if time.Now().After(deadline) {
			t.Fatalf("no log line or metric of the cluster far:\n%s", log.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if states := o.fleet.states()(); len(states) != 1 || states[0].Name != "far" || states[0].Ready {
		t.Errorf("the states: %+v", states)
	}
	stopCtx, stopCancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer stopCancel()
	if err := sink.Disengage(stopCtx, "far"); err != nil {
		t.Fatal(err)
	}
	if hasClusterSeries(t, metricsReg, "far") {
		t.Error("the cluster's series are kept after Disengage")
	}
	if states := o.fleet.states()(); len(states) != 0 {
		t.Errorf("the states after Disengage: %+v", states)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := sink.Engage(t.Context(), clusters.Cluster{Name: "late", Config: unreachable}); err == nil {
		t.Error("a cluster engaged after the stop: no error")
	}
}

func hasClusterSeries(t *testing.T, reg *prometheus.Registry, cluster string) bool {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "cluster" && l.GetValue() == cluster {
					return true
				}
			}
		}
	}
	return false
}
