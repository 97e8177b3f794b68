// Package activities runs the operator-wide handlers that serve no object
// (Kopf's activities, kopf/_core/engines/activities.py): startup, cleanup,
// login (Kopf's authentication) and probe handlers.
//
// One run of an activity is Kopf's run_activity with the all_at_once
// lifecycle: every handler of the activity is called, in registration
// order, one after another; those that must be retried (a TemporaryError,
// or an arbitrary error under errors=temporary) are called again, in
// rounds, once their delay has passed, until each has succeeded or
// failed for good. Each call goes through execution.Guard (a panic is the
// handler's error) and is logged in Kopf's words about "Activity '<id>'":
// "Activity 'x' succeeded.", "Activity 'x' failed temporarily: ...",
// "Activity 'x' failed with an exception and will try again in 60
// seconds: ...". The activity fails if any of its handlers failed for
// good (Kopf's ActivityError): the results are then those of no handler.
//
// The operator (runtime/operator) runs the activities: the login handlers
// for the credentials before anything else and again on a 401, the
// startup handlers before it watches anything, the cleanup handlers after
// it has stopped, and the probe handlers whenever the health endpoint
// asks (Probe).
package activities

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/kopf-go/kopf/runtime/causes"
	"github.com/kopf-go/kopf/runtime/execution"
	"github.com/kopf-go/kopf/runtime/kwargs"
	"github.com/kopf-go/kopf/runtime/registry"
	"github.com/kopf-go/kopf/runtime/settings"
)

// Error is the failure of an activity: one or more of its handlers failed
// for good (Kopf's ActivityError, "One or more handlers failed.").
type Error struct {
	Activity causes.Activity
	// Failures are the failed handlers, in registration order.
	Failures []Failure
}

// Failure is one handler's failure in an activity.
type Failure struct {
	// ID is the handler's id; Message says why it failed, as logged.
	ID, Message string
}

func (e *Error) Error() string {
	parts := make([]string, len(e.Failures))
	for i, f := range e.Failures {
		parts[i] = fmt.Sprintf("Activity '%s': %s", f.ID, f.Message)
	}
	return fmt.Sprintf("the %s activity has failed: one or more handlers failed: %s", e.Activity, strings.Join(parts, "; "))
}

// Run runs the handlers of one activity (see the package doc) with the
// kwargs base (its Activity, Settings, Memo and Logger; Param, Retry,
// Started and Runtime are set per handler), and returns the results of
// the handlers that returned one (not nil), by id. It returns an *Error
// if any handler failed for good, and ctx's error, wrapped, if ctx is done
// before every handler is: a handler's call in progress then gets the
// cancelled ctx, and no more are made. With no handlers, it returns an
// empty map at once.
func Run(ctx context.Context, handlers []*registry.ActivityHandler, base kwargs.Activity) (map[string]any, error) {
	if base.Settings == nil {
		base.Settings = settings.Default()
	}
	if base.Logger == nil {
		base.Logger = slog.Default()
	}
	if base.Memo == nil {
		base.Memo = kwargs.Memo{}
	}
	type state struct {
		retry int
		done  bool
		awake time.Time // not before this time
	}
	states := make([]state, len(handlers))
	results := map[string]any{}
	var failed []Failure
	started := time.Now()
	for {
		pending := false
		var next time.Time
		for i, h := range handlers {
			st := &states[i]
			if st.done {
				continue
			}
			if now := time.Now(); now.Before(st.awake) {
				pending = true
				if next.IsZero() || st.awake.Before(next) {
					next = st.awake
				}
				continue
			}
			out := attempt(ctx, h, base, st.retry, started)
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("the %s activity is interrupted: %w", base.Activity, err)
			}
			switch {
			case out.Success:
				st.done = true
				if out.Result != nil {
					results[h.ID] = out.Result
				}
			case out.Failure:
				st.done = true
				failed = append(failed, Failure{ID: h.ID, Message: out.Message})
			default:
				st.retry++
				st.awake = time.Now().Add(out.Delay)
				pending = true
				if next.IsZero() || st.awake.Before(next) {
					next = st.awake
				}
			}
		}
		if !pending {
			break
		}
		timer := time.NewTimer(time.Until(next))
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil, fmt.Errorf("the %s activity is interrupted: %w", base.Activity, ctx.Err())
		case <-timer.C:
		}
	}
	if len(failed) > 0 {
		// Kopf reports the failures in the order of their handlers.
		ordered := make([]Failure, 0, len(failed))
		for _, h := range handlers {
			for _, f := range failed {
				if f.ID == h.ID {
					ordered = append(ordered, f)
				}
			}
		}
		return nil, &Error{Activity: base.Activity, Failures: ordered}
	}
	return results, nil
}

// attempt calls one handler once, through execution.Guard, and classifies
// the outcome in Kopf's words.
func attempt(ctx context.Context, h *registry.ActivityHandler, base kwargs.Activity, retry int, started time.Time) execution.Outcome {
	spec := execution.Spec{Name: fmt.Sprintf("Activity '%s'", h.ID), Errors: h.Errors, Timeout: h.Timeout, Retries: h.Retries, Backoff: h.Backoff}
	att := execution.Attempt{Retry: retry, Started: started}
	return execution.Run(ctx, spec, att, func(ctx context.Context, retry int, started time.Time, runtime time.Duration) (any, error) {
		kw := base
		kw.Param = h.Param
		kw.Retry = retry
		kw.Started = started
		kw.Runtime = runtime
		return execution.Guard(func() (any, error) { return h.Fn(ctx, &kw) })
	}, base.Settings.Execution.DefaultBackoff, base.Logger)
}

// Probe runs the probe handlers (Kopf's on.probe) and returns their
// results by handler id, as the health endpoint reports them (Kopf's JSON
// object {id: result}); handlers that return nil are left out. An error
// is an *Error (some probe failed for good) or ctx's.
func Probe(ctx context.Context, handlers []*registry.ActivityHandler, base kwargs.Activity) (map[string]any, error) {
	base.Activity = causes.ActivityProbe
	return Run(ctx, handlers, base)
}
