package operator

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/kopf-go/kopf/internal/testutil"
)

// fired tells whether the readiness has consumed its function: it has
// started calling it (check clears it before it calls it, exactly once).
func fired(r *readiness) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.fn == nil
}

// Ready is called once, only when every selector is resolved and every
// watch has delivered its first listing, whatever the order of the two.
func TestReadiness(t *testing.T) {
	tests := []struct {
		name    string
		watches int
		// steps are done in order; ready says after which one the
		// operator must be ready (-1: never).
		steps []func(r *readiness, listed []func())
		ready int
	}{
		{
			name: "no resources", watches: 0,
			steps: []func(*readiness, []func()){func(r *readiness, _ []func()) { r.allResolved() }},
			ready: 0,
		},
		{
			name: "listed, then resolved", watches: 2,
			steps: []func(*readiness, []func()){
				func(_ *readiness, l []func()) { l[0]() },
				func(_ *readiness, l []func()) { l[0]() }, // a watch counts once
				func(_ *readiness, l []func()) { l[1]() },
				func(r *readiness, _ []func()) { r.allResolved() },
			},
			ready: 3,
		},
		{
			name: "resolved, then listed", watches: 2,
			steps: []func(*readiness, []func()){
				func(r *readiness, _ []func()) { r.allResolved() },
				func(_ *readiness, l []func()) { l[1]() },
				func(_ *readiness, l []func()) { l[0]() },
				func(r *readiness, _ []func()) { r.allResolved() }, // no second call
			},
			ready: 2,
		},
		{
			name: "one watch never lists", watches: 2,
			steps: []func(*readiness, []func()){
				func(r *readiness, _ []func()) { r.allResolved() },
				func(_ *readiness, l []func()) { l[1]() },
			},
			ready: -1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			called := make(chan struct{}, 2)
			r := newReadiness(func() { called <- struct{}{} }, slog.New(slog.DiscardHandler))
			listed := make([]func(), tt.watches)
			for i := range listed {
				listed[i] = r.watch()
			}
			for i, step := range tt.steps {
				step(r, listed)
				if want := tt.ready >= 0 && i >= tt.ready; fired(r) != want {
					t.Fatalf("after step %d: ready is %v, want %v", i, fired(r), want)
				}
			}
			if tt.ready < 0 {
				return
			}
			select {
			case <-called:
			case <-time.After(5 * time.Second):
				t.Fatal("the function is not called")
			}
		})
	}
}

// A panic in the function is logged, not raised.
func TestReadinessPanic(t *testing.T) {
	logs := &testutil.Buffer{}
	r := newReadiness(func() { panic("boom") }, slog.New(slog.NewTextHandler(logs, nil)))
	r.allResolved()
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(logs.String(), "The readiness callback has failed: panic: boom") {
		if time.Now().After(deadline) {
			t.Fatalf("the panic is not logged: %s", logs.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}
