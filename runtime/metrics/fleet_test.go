package metrics

import (
	"testing"
	"time"
)

// TestFleetClusters: each cluster's series carry its label on the one
// registry, with the process's collectors once; a cluster's series go
// with Unregister, and a cluster engaged again registers them anew.
func TestFleetClusters(t *testing.T) {
	fleet := NewFleet()
	if f := gather(t, fleet)["kopf_timer_lag_seconds"]; f != nil {
		t.Fatalf("a fleet without clusters has the operator's series: %v", f)
	}
	if gather(t, fleet)["go_goroutines"] == nil {
		t.Fatal("a fleet has no go_goroutines")
	}
	east, err := fleet.Cluster("east")
	if err != nil {
		t.Fatal(err)
	}
	west, err := fleet.Cluster("west")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fleet.Cluster("east"); err == nil {
		t.Error("the series of a cluster registered twice: no error")
	}
	east.TimerTicked(kex, "t", time.Second)
	west.TimerTicked(kex, "t", 2*time.Second)
	west.TimerTicked(kex, "t", 2*time.Second)
	for _, tt := range []struct {
		cluster string
		count   uint64
	}{{"east", 1}, {"west", 2}} {
		h := histogram(t, fleet, "kopf_timer_lag_seconds", map[string]string{"cluster": tt.cluster, "handler": "t"})
		if h.GetSampleCount() != tt.count {
			t.Errorf("cluster %s: %d ticks, want %d", tt.cluster, h.GetSampleCount(), tt.count)
		}
	}
	east.Unregister()
	if f := find(t, fleet, "kopf_timer_lag_seconds", map[string]string{"cluster": "east"}); f != nil {
		t.Errorf("east's series after Unregister: %v", f)
	}
	if f := find(t, fleet, "kopf_timer_lag_seconds", map[string]string{"cluster": "west"}); f == nil {
		t.Error("west's series are gone with east's")
	}
	if _, err := fleet.Cluster("east"); err != nil {
		t.Errorf("east engaged again: %v", err)
	}
}
