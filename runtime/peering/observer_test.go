package peering

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	"log/slog"
)

// The observer's judgement of one state of the peering object: pausing,
// resuming, Kopf's wording, the removal of expired peers. The API is a
// fake here (pure logic); e2e/peering runs it against kube-apiserver.
func TestObserverProcess(t *testing.T) {
	now := time.Date(2026, 6, 3, 12, 0, 30, 0, time.UTC)
	live := func(prio int) map[string]any {
		return map[string]any{"priority": float64(prio), "lifetime": float64(60), "lastseen": "2026-06-03T12:00:00+00:00"}
	}
	dead := map[string]any{"priority": float64(999), "lifetime": float64(10), "lastseen": "2026-06-03T12:00:00+00:00"}
	tests := []struct {
		name      string
		lease     bool
		pausedIn  bool
		status    map[string]any
		paused    bool
		logs      []string
		cleaned   []string
		nextAfter bool
	}{
		{name: "a higher priority pauses", status: map[string]any{"me": live(0), "dev": live(666)}, paused: true,
			logs: []string{"Pausing operations in favour of [<Peer dev: priority=666, lifetime=60, lastseen='2026-06-03T12:00:00+00:00'>]."}, nextAfter: true},
		{name: "a lower priority does not", status: map[string]any{"me": live(0), "low": live(-5)}},
		{name: "gone: resumes", pausedIn: true, status: map[string]any{"me": live(0)},
			logs: []string{"Resuming operations after the pause. Conflicting operators with the same priority are gone."}},
		{name: "same priority, Kopf: all freeze", status: map[string]any{"me": live(0), "twin": live(0)}, paused: true,
			logs: []string{
				"Possibly conflicting operators with the same priority: [<Peer twin: priority=0, lifetime=60, lastseen='2026-06-03T12:00:00+00:00'>].",
				"Pausing all operators, including self: [<Peer me: priority=0, lifetime=60, lastseen='2026-06-03T12:00:00+00:00'>, <Peer twin: priority=0, lifetime=60, lastseen='2026-06-03T12:00:00+00:00'>]",
			}, nextAfter: true},
		{name: "same priority, Lease: warns, the Lease decides", lease: true, status: map[string]any{"me": live(0), "twin": live(0)},
			logs: []string{"Possibly conflicting operators with the same priority: [<Peer twin: priority=0, lifetime=60, lastseen='2026-06-03T12:00:00+00:00'>]."}, nextAfter: true},
		{name: "a dead peer is removed and ignored", status: map[string]any{"me": live(0), "ghost": dead}, cleaned: []string{"ghost"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gvr := schema.GroupVersionResource{Group: "kopf.dev", Version: "v1", Resource: "clusterkopfpeerings"}
			obj := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "kopf.dev/v1", "kind": "ClusterKopfPeering",
				"metadata": map[string]any{"name": "default"}, "status": tt.status,
			}}
			client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
				map[schema.GroupVersionResource]string{gvr: "ClusterKopfPeeringList"}, obj)
			var out bytes.Buffer
			logger := slog.New(slog.NewTextHandler(&out, &slog.HandlerOptions{Level: slog.LevelDebug}))
			toggles := &Toggles{}
			ob := &Observer{
				Object:    Object{Client: client.Resource(gvr), Name: "default", Logger: logger},
				Identity:  "me",
				Conflicts: toggles.Make("default@", tt.pausedIn),
				Lease:     tt.lease,
			}
			next := ob.Process(context.Background(), obj.Object, now)
			if toggles.Paused() != tt.paused {
				t.Errorf("paused = %v, want %v", toggles.Paused(), tt.paused)
			}
			for _, line := range tt.logs {
				if !strings.Contains(out.String(), line) {
					t.Errorf("the log lacks %q:\n%s", line, out.String())
				}
			}
			if len(tt.logs) == 0 && strings.Contains(out.String(), "operations") {
				t.Errorf("unexpected log:\n%s", out.String())
			}
			if (!next.IsZero()) != tt.nextAfter {
				t.Errorf("next judgement at %v, want one: %v", next, tt.nextAfter)
			}
			got, err := client.Resource(gvr).Get(context.Background(), "default", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			status, _, _ := unstructured.NestedMap(got.Object, "status")
			for _, id := range tt.cleaned {
				if _, ok := status[id]; ok {
					t.Errorf("%s is not removed: %v", id, status)
				}
			}
			if len(status) != len(tt.status)-len(tt.cleaned) {
				t.Errorf("status = %v, want only %v removed from %v", status, tt.cleaned, tt.status)
			}
		})
	}
}

// With the Lease, the same-priority warning is logged when that set of
// peers changes, and again once a higher priority that hid it is gone.
func TestObserverSamePriorityWarning(t *testing.T) {
	now := time.Date(2026, 6, 3, 12, 0, 30, 0, time.UTC)
	live := func(prio int) map[string]any {
		return map[string]any{"priority": float64(prio), "lifetime": float64(60), "lastseen": "2026-06-03T12:00:00+00:00"}
	}
	gvr := schema.GroupVersionResource{Group: "kopf.dev", Version: "v1", Resource: "clusterkopfpeerings"}
	client := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{gvr: "ClusterKopfPeeringList"})
	var out bytes.Buffer
	toggles := &Toggles{}
	ob := &Observer{
		Object:    Object{Client: client.Resource(gvr), Name: "default", Logger: slog.New(slog.NewTextHandler(&out, nil))},
		Identity:  "me",
		Conflicts: toggles.Make("default@", false),
		Lease:     true,
	}
	const warning = "Possibly conflicting operators with the same priority"
	steps := []struct {
		status   map[string]any
		warnings int
		paused   bool
	}{
		{map[string]any{"me": live(0), "twin": live(0)}, 1, false},
		{map[string]any{"me": live(0), "twin": live(0)}, 1, false}, // unchanged: not again
		{map[string]any{"me": live(0), "twin": live(0), "dev": live(666)}, 1, true},
		{map[string]any{"me": live(0), "twin": live(0)}, 2, false}, // the dev is gone: again
	}
	for i, st := range steps {
		ob.Process(context.Background(), map[string]any{"status": st.status}, now)
		if got := strings.Count(out.String(), warning); got != st.warnings || toggles.Paused() != st.paused {
			t.Fatalf("step %d: %d warnings (want %d), paused %v (want %v):\n%s", i, got, st.warnings, toggles.Paused(), st.paused, out.String())
		}
	}
}
