package kopftest

import (
	"fmt"
	"strings"
	"time"

	"github.com/kopf-go/kopf/runtime/reactor"
)

// Result is how one attempt of a handler ended.
type Result string

// The results of an attempt.
const (
	// Succeeded: the handler returned no error (or its error is ignored:
	// errors=ignore), and its sub-handlers, if any, are done.
	Succeeded Result = "succeeded"
	// Failed: permanently, and it is not retried for this cause: a
	// permanent error, retries or timeout exhausted, errors=permanent,
	// failed sub-handlers. An on.event handler's error is Failed too (it
	// is logged and ignored, never retried).
	Failed Result = "failed"
	// Retrying: failed temporarily, or waiting for its sub-handlers; it is
	// attempted again after Delay.
	Retrying Result = "retrying"
	// Interrupted: the operator's stop cancelled it; nothing is stored, and
	// the next run of the operator attempts it again.
	Interrupted Result = "interrupted"
)

// The Causes of the outcomes that are not of changing handlers.
const (
	// CauseEvent is the Cause of an on.event handler's outcome.
	CauseEvent = "event"
	// CauseDaemon is the Cause of a daemon's attempt; an attempt cut
	// short by the daemon's stop (its ctx or kw.Stopped done, and an
	// error returned) is Interrupted.
	CauseDaemon = "daemon"
	// CauseTimer is the Cause of a timer's tick (or its retry).
	CauseTimer = "timer"
)

// Outcome is one attempt of one handler on one object, as the operator's
// reactor concluded it (not parsed from the log). A changing handler's
// outcome is recorded once the patch that stores it is sent, so an object
// read after its outcome is seen shows that outcome (its status, its
// progress annotations), unless that patch failed (the log says so).
type Outcome struct {
	// Resource is the object's resource as plural.group ("kopfexamples.kopf.dev",
	// "deployments.apps"), or the plural alone for the core group ("pods").
	Resource  string
	Namespace string // "" for a cluster-scoped object
	Name      string
	UID       string
	// Handler is the handler's id (Kopf's: "create_fn", "spec.field/fn");
	// a sub-handler's is "<parent id>/<sub-handler id>".
	Handler string
	// Cause is what the handler ran for: "create", "update", "delete",
	// "resume", CauseEvent for an on.event handler, CauseDaemon or
	// CauseTimer for a daemon's or timer's attempt.
	Cause string
	// Retry counts the handler's earlier attempts for this cause: 0 for
	// the first.
	Retry  int
	Result Result
	// Message is the error's message for Failed and Retrying.
	Message string
	// Delay is how long a Retrying handler waits before its next attempt.
	Delay time.Duration
	// Returned is what a Succeeded handler returned (stored in
	// status.<id>), as the handler returned it.
	Returned any
	// Time is when the outcome was recorded.
	Time time.Time
}

// String renders the outcome for failure messages, e.g.
// "default/obj create_fn (create, retry 1): retrying in 1s: boom".
func (o Outcome) String() string {
	var b strings.Builder
	if o.Namespace != "" {
		b.WriteString(o.Namespace + "/")
	}
	fmt.Fprintf(&b, "%s %s (%s, retry %d): %s", o.Name, o.Handler, o.Cause, o.Retry, o.Result)
	if o.Result == Retrying {
		fmt.Fprintf(&b, " in %s", o.Delay)
	}
	if o.Message != "" {
		b.WriteString(": " + o.Message)
	}
	return b.String()
}

// Match selects outcomes: every field that is set must be equal; the zero
// Match selects all.
type Match struct {
	Resource  string // plural.group, as in Outcome
	Namespace string
	Name      string
	Handler   string
	Cause     string
	Result    Result
}

// Matches reports whether the outcome is selected.
func (m Match) Matches(o Outcome) bool {
	eq := func(want, got string) bool { return want == "" || want == got }
	return eq(m.Resource, o.Resource) && eq(m.Namespace, o.Namespace) && eq(m.Name, o.Name) &&
		eq(m.Handler, o.Handler) && eq(m.Cause, o.Cause) && eq(string(m.Result), string(o.Result))
}

// String renders the match for failure messages.
func (m Match) String() string {
	var parts []string
	for _, f := range []struct{ k, v string }{
		{"resource", m.Resource}, {"namespace", m.Namespace}, {"name", m.Name},
		{"handler", m.Handler}, {"cause", m.Cause}, {"result", string(m.Result)},
	} {
		if f.v != "" {
			parts = append(parts, f.k+"="+f.v)
		}
	}
	if len(parts) == 0 {
		return "any outcome"
	}
	return strings.Join(parts, " ")
}

// fromObservation converts the reactor's observation.
func fromObservation(obs reactor.Observation, now time.Time) Outcome {
	out := Outcome{
		Resource:  obs.Resource.Plural,
		Namespace: obs.Namespace,
		Name:      obs.Name,
		UID:       obs.UID,
		Handler:   obs.Handler,
		Cause:     string(obs.Reason),
		Retry:     obs.Retry,
		Message:   obs.Outcome.Message,
		Time:      now,
	}
	if obs.Resource.Group != "" {
		out.Resource += "." + obs.Resource.Group
	}
	if out.Cause == "" {
		out.Cause = CauseEvent
	}
	switch {
	case obs.Interrupted:
		out.Result = Interrupted
	case obs.Outcome.Success:
		out.Result, out.Returned = Succeeded, obs.Outcome.Result
	case obs.Outcome.Failure:
		out.Result = Failed
	default:
		out.Result, out.Delay = Retrying, obs.Outcome.Delay
	}
	return out
}

// Outcomes returns the outcomes recorded so far that m selects, oldest
// first.
func (o *Operator) Outcomes(m Match) []Outcome {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []Outcome
	for _, oc := range o.outcomes {
		if m.Matches(oc) {
			out = append(out, oc)
		}
	}
	return out
}

// WaitOutcome waits until an outcome that m selects is recorded (or was)
// and returns the first. It fails the test (t.Fatalf, listing the
// outcomes seen) after the timeout, or at once if the operator exits
// first.
func (o *Operator) WaitOutcome(m Match, timeout time.Duration) Outcome {
	o.t.Helper()
	return o.WaitOutcomes(m, 1, timeout)[0]
}

// WaitOutcomes waits until at least n outcomes that m selects are
// recorded, and returns them all. To wait for a new one, count first:
//
//	n := len(op.Outcomes(m))
//	// ... change the object ...
//	op.WaitOutcomes(m, n+1, timeout)
//
// It fails the test as WaitOutcome does.
func (o *Operator) WaitOutcomes(m Match, n int, timeout time.Duration) []Outcome {
	o.t.Helper()
	var got []Outcome
	err := o.poll(timeout, func() bool {
		got = o.Outcomes(m)
		return len(got) >= n
	})
	if err != nil {
		o.t.Fatalf("%d outcome(s) of %s expected, %d seen: %v; all outcomes:\n%s", n, m, len(got), err, o.describe())
	}
	return got
}

// describe lists every outcome recorded, one a line.
func (o *Operator) describe() string {
	all := o.Outcomes(Match{})
	if len(all) == 0 {
		return "  (none)"
	}
	lines := make([]string, len(all))
	for i, oc := range all {
		lines[i] = "  " + oc.String()
	}
	return strings.Join(lines, "\n")
}
