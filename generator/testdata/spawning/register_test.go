package spawning

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/kopf-go/kopf"
)

var (
	kopfexamples = kopf.Resource{Group: "kopf.dev", Version: "v1", Plural: "kopfexamples", Kind: "KopfExample", Namespaced: true}
	pods         = kopf.Resource{Version: "v1", Plural: "pods", Singular: "pod", Kind: "Pod", Namespaced: true}
	examples     = kopf.Selector{Group: "kopf.dev", Name: "kopfexamples"}
	corePods     = kopf.Selector{Version: "v1", Name: "pods", Core: true}
)

func registry(t *testing.T) *kopf.Registry {
	t.Helper()
	r := kopf.NewRegistry()
	if err := Register(r); err != nil {
		t.Fatal(err)
	}
	return r
}

func TestDaemons(t *testing.T) {
	type reg struct {
		ID                                                                       string
		Selector                                                                 kopf.Selector
		Param                                                                    any
		Errors                                                                   kopf.ErrorsMode
		Timeout                                                                  time.Duration
		Retries                                                                  int
		Backoff, InitialDelay, CancellationBackoff, CancellationTimeout, Polling time.Duration
		Field                                                                    []string
		When                                                                     bool
	}
	summary := func(hs []*kopf.DaemonHandler) []reg {
		var out []reg
		for _, h := range hs {
			out = append(out, reg{h.ID, h.Selector, h.Param, h.Errors, h.Timeout, h.Retries, h.Backoff,
				h.InitialDelay, h.CancellationBackoff, h.CancellationTimeout, h.CancellationPolling, h.Field, h.When != nil})
		}
		return out
	}
	r := registry(t)
	for _, tt := range []struct {
		res  kopf.Resource
		want []reg
	}{
		{kopfexamples, []reg{
			{ID: "async/spec.field", Selector: examples, Param: "p", Errors: kopf.ErrorsPermanent, Timeout: time.Minute, Retries: 5, Backoff: 3 * time.Second,
				InitialDelay: 2 * time.Second, CancellationBackoff: time.Second, CancellationTimeout: 500 * time.Millisecond, Polling: 5 * time.Second,
				Field: []string{"spec", "field"}, When: true},
			{ID: "background_sync", Selector: examples, When: true},
		}},
		{pods, []reg{{ID: "node/spec.nodeName", Selector: corePods, Field: []string{"spec", "nodeName"}, When: true}}},
	} {
		if got := summary(r.DaemonHandlers(tt.res)); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("daemons of %s:\n got %+v\nwant %+v", tt.res, got, tt.want)
		}
	}
}

func TestTimers(t *testing.T) {
	type reg struct {
		ID                           string
		Selector                     kopf.Selector
		Param                        any
		Errors                       kopf.ErrorsMode
		Retries                      int
		Interval, Idle, InitialDelay time.Duration
		Sharp, When                  bool
	}
	summary := func(hs []*kopf.TimerHandler) []reg {
		var out []reg
		for _, h := range hs {
			out = append(out, reg{h.ID, h.Selector, h.Param, h.Errors, h.Retries, h.Interval, h.Idle, h.InitialDelay, h.Sharp, h.When != nil})
		}
		return out
	}
	r := registry(t)
	for _, tt := range []struct {
		res  kopf.Resource
		want []reg
	}{
		{kopfexamples, []reg{
			{ID: "every_few_seconds", Selector: examples, Errors: kopf.ErrorsIgnored, Retries: 2,
				Interval: 2 * time.Second, Idle: 5 * time.Second, InitialDelay: 500 * time.Millisecond, Sharp: true, When: true},
			// Stacked markers register bottom to top, as Kopf's decorators.
			{ID: "slow", Selector: examples, Param: "slow", Interval: time.Hour},
			{ID: "fast", Selector: examples, Interval: time.Second},
		}},
		{pods, []reg{{ID: "restarts", Selector: corePods, Interval: 10 * time.Second}}},
	} {
		if got := summary(r.TimerHandlers(tt.res)); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("timers of %s:\n got %+v\nwant %+v", tt.res, got, tt.want)
		}
	}
}

// TestAdapters calls the registered functions and callbacks: results, the
// error-only form, typed decoding and the when= forms.
func TestAdapters(t *testing.T) {
	ctx := context.Background()
	r := registry(t)
	ds, ts := r.DaemonHandlers(kopfexamples), r.TimerHandlers(kopfexamples)

	stopped, stop := context.WithCancelCause(ctx)
	stop(kopf.StopDeleted)
	kw := &kopf.DaemonKwargs{Base: kopf.ResourceKwargs{Labels: map[string]string{"ready": "yes"}}, Stopped: stopped}
	if got, err := ds[0].Fn(ctx, kw); err != nil || !reflect.DeepEqual(got, map[string]any{"message": "stopped"}) {
		t.Errorf("async daemon = %v, %v", got, err)
	}
	if !ds[0].When(kw) || ds[1].When(&kopf.DaemonKwargs{Base: kopf.ResourceKwargs{Labels: map[string]string{"paused": "yes"}}}) {
		t.Error("the daemons' when= callbacks decide wrongly")
	}
	if got, err := ds[1].Fn(ctx, &kopf.DaemonKwargs{Retry: 1}); got != nil || err == nil {
		t.Errorf("sync daemon at retry 1 = %v, %v; want a temporary error", got, err)
	}
	if got, err := ds[1].Fn(ctx, &kopf.DaemonKwargs{Retry: 3}); got != nil || err != nil {
		t.Errorf("sync daemon at retry 3 = %v, %v; want nil, nil", got, err)
	}
	if got, err := ts[2].Fn(ctx, &kopf.TimerKwargs{Param: "slow"}); got != "slow" || err != nil {
		t.Errorf("slow timer = %v, %v", got, err)
	}
	if got := ds[1].InitialDelayFn(&kopf.DaemonKwargs{Base: kopf.ResourceKwargs{Labels: map[string]string{"slow": "yes"}}}); got != time.Minute {
		t.Errorf("sync daemon's initial_delay=fn:delayOf = %v; want 1m", got)
	}
	if ds[0].InitialDelayFn != nil || ts[0].InitialDelayFn != nil {
		t.Error("an initial_delay= duration has an InitialDelayFn")
	}
	if ts[0].When(&kopf.TimerKwargs{}) {
		t.Error("isDue matched an object without the annotation")
	}

	pod := kopf.Body{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": "p"},
		"spec": map[string]any{"nodeName": "node-1"}, "status": map[string]any{"containerStatuses": []any{map[string]any{}, map[string]any{}}}}
	node := r.DaemonHandlers(pods)[0]
	if got, err := node.Fn(ctx, &kopf.DaemonKwargs{Base: kopf.ResourceKwargs{Body: pod}}); got != "node-1" || err != nil {
		t.Errorf("typed daemon = %v, %v", got, err)
	}
	if !node.When(&kopf.DaemonKwargs{Base: kopf.ResourceKwargs{Body: pod}}) {
		t.Error("isScheduled did not match a scheduled pod")
	}
	restarts := r.TimerHandlers(pods)[0]
	if got, err := restarts.Fn(ctx, &kopf.TimerKwargs{Base: kopf.ResourceKwargs{Body: pod}}); got != 2 || err != nil {
		t.Errorf("typed timer = %v, %v", got, err)
	}
	if got := restarts.InitialDelayFn(&kopf.TimerKwargs{Base: kopf.ResourceKwargs{Body: pod}}); got != 2*time.Second {
		t.Errorf("typed timer's initial_delay=fn:restartsDelay = %v; want 2s", got)
	}
	bad := kopf.Body{"spec": map[string]any{"nodeName": 3}}
	if _, err := restarts.Fn(ctx, &kopf.TimerKwargs{Base: kopf.ResourceKwargs{Body: bad}}); err == nil || !strings.Contains(err.Error(), "Pod") {
		t.Errorf("typed timer of a body that does not decode: %v", err)
	}
}
