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
// retry, a cycle that sleeps for a delayed handler a requeue after (busy
// for less than it took), the last handler's success a success; and the
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

		tests := []struct {
			result     Result
			retries    int
			slept      bool
			inProgress int
		}{
			{result: ResultRequeue, inProgress: 1},                   // slow succeeds, flaky is due
			{result: ResultError, retries: 1, inProgress: 1},         // flaky fails temporarily
			{result: ResultRequeueAfter, slept: true, inProgress: 1}, // nothing is due: sleeps 10s, touches
			{result: ResultSuccess, inProgress: 0},                   // flaky succeeds
		}
		for i, tt := range tests {
			h.process(t.Context(), "MODIFIED")
			if len(processed) != i+1 {
				t.Fatalf("event %d: %d processings observed, want %d", i, len(processed), i+1)
			}
			p := processed[i]
			if p.Result != tt.result || p.Retries != tt.retries || p.Terminal {
				t.Errorf("event %d: result %q, %d retries, terminal %v; want %q, %d, false", i, p.Result, p.Retries, p.Terminal, tt.result, tt.retries)
			}
			if slept := p.Busy < p.Elapsed; slept != tt.slept || p.Started.IsZero() {
				t.Errorf("event %d: busy %s of %s since %s; want less than the whole: %v", i, p.Busy, p.Elapsed, p.Started, tt.slept)
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
