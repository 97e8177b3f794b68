package reactor

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kopf-go/kopf/runtime/causes"
	"github.com/kopf-go/kopf/runtime/execution"
	"github.com/kopf-go/kopf/runtime/kwargs"
	"github.com/kopf-go/kopf/runtime/registry"
)

// ObserveProcessed sums up each event's processing: a handler left due
// (one handler per cycle) is a requeue, a retried attempt an error with a
// retry, a cycle that waits for a delayed handler a requeue after (and
// its touch, once the delay is over, a requeue), the last handler's
// success a success; and the
// object is in progress until its handlers are finished. The attempts'
// observations carry their kind, start and duration.
func TestObserveProcessed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		flaky := 0
		h := newHarness(t, spec(map[string]any{"x": 1.0}), func(reg *registry.Registry) {
			mustAdd(t, reg,
				handler("slow", func(context.Context, *kwargs.Changing) (any, error) {
					time.Sleep(2 * time.Second)
					return nil, nil
				}, causes.Create),
				handler("flaky", func(context.Context, *kwargs.Changing) (any, error) {
					if flaky++; flaky == 1 {
						return nil, execution.NewTemporaryError("later", 10*time.Second)
					}
					return nil, nil
				}, causes.Create),
			)
		})
		var observed []Observation
		var processed []Processed
		h.r.Observe = func(o Observation) { observed = append(observed, o) }
		h.r.ObserveProcessed = func(p Processed) { processed = append(processed, p) }

		type step struct {
			result  Result
			retries int
		}
		tests := []struct {
			steps      []step // one per processing: the event's, then its requeue's
			inProgress int
		}{
			{steps: []step{{result: ResultRequeue}}, inProgress: 1},           // slow succeeds, flaky is due
			{steps: []step{{result: ResultError, retries: 1}}, inProgress: 1}, // flaky fails temporarily
			{steps: []step{{result: ResultRequeueAfter}, {result: ResultRequeue}}, // nothing is due: requeued after 10s, touched
				inProgress: 1},
			{steps: []step{{result: ResultSuccess}}, inProgress: 0}, // flaky succeeds
		}
		for i, tt := range tests {
			before := len(processed)
			h.process(t.Context(), "MODIFIED")
			if len(processed) != before+len(tt.steps) {
				t.Fatalf("event %d: %d processings observed, want %d", i, len(processed)-before, len(tt.steps))
			}
			for j, want := range tt.steps {
				p := processed[before+j]
				if p.Result != want.result || p.Retries != want.retries || p.Terminal {
					t.Errorf("event %d/%d: result %q, %d retries, terminal %v; want %q, %d, false", i, j, p.Result, p.Retries, p.Terminal, want.result, want.retries)
				}
				if p.Started.IsZero() {
					t.Errorf("event %d/%d: no start", i, j)
				}
			}
			if got := h.r.InProgress(); got != tt.inProgress {
				t.Errorf("event %d: InProgress() = %d, want %d", i, got, tt.inProgress)
			}
		}
		if len(observed) != 3 {
			t.Fatalf("observed %d attempts, want 3: %+v", len(observed), observed)
		}
		for _, o := range observed {
			if o.Kind != KindChanging || o.Started.IsZero() {
				t.Errorf("%s: kind %q, started %s; want changing, a start", o.Handler, o.Kind, o.Started)
			}
		}
		if d := observed[0].Duration; observed[0].Handler != "slow" || d != 2*time.Second {
			t.Errorf("the first attempt is %s's, %s long; want slow's, 2s (it sleeps for as long)", observed[0].Handler, d)
		}
	})
}

// A handler that fails for good makes its processing a terminal error;
// an attempt refused for its exhausted retries says which limit ended it.
func TestObserveProcessedTerminal(t *testing.T) {
	h := newHarness(t, spec(map[string]any{"x": 1.0}), func(reg *registry.Registry) {
		bad := handler("bad", func(context.Context, *kwargs.Changing) (any, error) {
			return nil, execution.NewPermanentError("never")
		}, causes.Create)
		limited := handler("limited", func(context.Context, *kwargs.Changing) (any, error) {
			return nil, execution.NewTemporaryError("later", time.Millisecond)
		}, causes.Create)
		limited.Retries = 1
		mustAdd(t, reg, bad, limited)
	})
	var observed []Observation
	var processed []Processed
	h.r.Observe = func(o Observation) { observed = append(observed, o) }
	h.r.ObserveProcessed = func(p Processed) { processed = append(processed, p) }
	h.process(t.Context(), "MODIFIED")
	h.process(t.Context(), "MODIFIED")
	if len(processed) != 2 || !processed[0].Terminal || processed[0].Result != ResultError || !processed[1].Terminal {
		t.Fatalf("processed %+v, want two terminal errors", processed)
	}
	if len(observed) != 2 {
		t.Fatalf("observed %+v, want 2 attempts", observed)
	}
	if o := observed[0]; o.Handler != "bad" || !o.Outcome.Failure || o.Outcome.Limit != "" {
		t.Errorf("first attempt: %+v, want bad's permanent failure with no limit", o)
	}
	if o := observed[1]; o.Handler != "limited" || !o.Outcome.Failure || o.Outcome.Limit != execution.LimitRetries {
		t.Errorf("second attempt: %+v, want limited's failure by its retries", o)
	}
}

// An on.event handler's error is a terminal error of its event's
// processing (it is logged, never retried), and its attempt is observed
// as an event handler's, timed.
func TestObserveProcessedEvents(t *testing.T) {
	h := newHarness(t, spec(nil), func(reg *registry.Registry) {
		err := reg.AddEvent(registry.EventHandler{ID: "bad", Selector: testSelector, Fn: func(context.Context, *kwargs.Event) error {
			return execution.NewPermanentError("boom")
		}})
		if err != nil {
			t.Fatal(err)
		}
	})
	var observed []Observation
	var processed []Processed
	h.r.Observe = func(o Observation) { observed = append(observed, o) }
	h.r.ObserveProcessed = func(p Processed) { processed = append(processed, p) }
	h.process(t.Context(), "ADDED")
	if len(processed) != 1 || processed[0].Result != ResultError || !processed[0].Terminal || processed[0].Retries != 0 {
		t.Errorf("processed %+v, want one terminal error without retries", processed)
	}
	if len(observed) != 1 || observed[0].Kind != KindEvent || observed[0].Started.IsZero() || !observed[0].Outcome.Failure {
		t.Errorf("observed %+v, want the event handler's failure, timed", observed)
	}
}
