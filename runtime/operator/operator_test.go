package operator

import (
	"context"
	"errors"
	"slices"
	"testing"
)

// The parts start in the order that parts documents, so they stop in the
// reverse one: the cleanup handlers last, the poster after the workers,
// the peering after the workers.
func TestPartsOrder(t *testing.T) {
	var names []string
	for _, p := range (&operator{}).parts() {
		names = append(names, p.name)
	}
	before := func(a, b string) {
		t.Helper()
		i, j := slices.Index(names, a), slices.Index(names, b)
		if i < 0 || j < 0 || i >= j {
			t.Errorf("%q does not start before %q: %q", a, b, names)
		}
	}
	if names[0] != "login" || names[1] != "activities" {
		t.Errorf("the login and the activities are not first: %q", names)
	}
	before("metrics", "connection")
	before("connection", "health endpoints")
	before("clients", "poster")
	before("poster", "admission")
	before("poster", "workers")
	before("peering", "workers")
	before("workers", "daemons")
	before("daemons", "sharding")
}

// A fleet operator runs the process-wide parts once and the per-cluster
// ones for each cluster, each in the order of parts; every part is in one
// of them, the login in both.
func TestPartsScopes(t *testing.T) {
	o := &operator{}
	names := func(scope partScope) []string {
		var names []string
		for _, p := range o.partsIn(scope) {
			names = append(names, p.name)
		}
		return names
	}
	wantProcess := []string{"login", "activities", "metrics", "health endpoints", "memory releaser", "admission", "probes"}
	wantCluster := []string{"login", "connection", "clients", "poster", "peering", "workers", "daemons", "sharding"}
	if got := names(process); !slices.Equal(got, wantProcess) {
		t.Errorf("process-wide: %q, want %q", got, wantProcess)
	}
	if got := names(perCluster); !slices.Equal(got, wantCluster) {
		t.Errorf("per cluster: %q, want %q", got, wantCluster)
	}
	if got, all := names(both), len(o.parts()); len(got) != all {
		t.Errorf("%d parts in either, of %d: %q", len(got), all, got)
	}
}

// run stops the started parts in the reverse order, and only those; a
// part cut short by the stop makes run return nil; the first stop's error
// is run's.
func TestRunStopsInReverse(t *testing.T) {
	var log []string
	mk := func(name string, startErr, stopErr error) part {
		return part{name: name, start: func(ctx context.Context) (context.Context, stopFunc, error) {
			log = append(log, "start "+name)
			if startErr != nil {
				return ctx, nil, startErr
			}
			return ctx, func() error { log = append(log, "stop "+name); return stopErr }, nil
		}}
	}
	boom := errors.New("boom")
	tests := []struct {
		name    string
		parts   []part
		wantLog []string
		wantErr error
	}{
		{"a failed start", []part{mk("a", nil, nil), mk("b", boom, nil), mk("c", nil, nil)},
			[]string{"start a", "start b", "stop a"}, boom},
		{"a start cut short", []part{mk("a", nil, nil), mk("b", errStopped, nil)},
			[]string{"start a", "start b", "stop a"}, nil},
		{"a stop's error", []part{mk("a", nil, boom), mk("b", nil, nil)},
			[]string{"start a", "start b", "stop b", "stop a"}, boom},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			log = nil
			err := runParts(t.Context(), tt.parts, func(context.Context) error { return nil })
			if !slices.Equal(log, tt.wantLog) || !errors.Is(err, tt.wantErr) || (tt.wantErr == nil && err != nil) {
				t.Errorf("got %q, %v; want %q, %v", log, err, tt.wantLog, tt.wantErr)
			}
		})
	}
}
