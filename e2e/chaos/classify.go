package chaos

import (
	"fmt"
	"sort"
)

// Class is what the API server had stored of a handler's success when the
// handler ran again.
type Class string

const (
	// Lost: nothing of the success was stored (the operator died, or a
	// patch failed, after the handler returned and before its result
	// reached the API server). Running the handler again is the design:
	// handlers run at least once, and a success is a stored success.
	Lost Class = "lost"
	// Window: the result was stored by the status-subresource patch and
	// the object's own patch (the progress record) was not: the documented
	// crash window between the two patches of a cycle.
	Window Class = "window"
	// Outside: the object itself recorded the success (a progress record
	// saying success, a diff-base, or the result in a single patch) before
	// the handler ran again. The reactor promises this never happens.
	Outside Class = "outside"
	// Unknown: no answered write stored the success, but a write of the
	// object was received before the re-run and never answered
	// (kube-apiserver was killed): it may have stored anything, so the
	// re-run cannot be told apart.
	Unknown Class = "unknown"
)

// Rerun is a run of a handler that began after an earlier run of the same
// handler for the same object had succeeded.
type Rerun struct {
	Start     Entry // the re-run's "start" line
	Succeeded Entry // the latest "succeeded" line before it
	Class     Class
	// Evidence is the write that decided the class (nil for Lost): the
	// earliest write that stored the success, or for Window the status
	// patch that stored the result.
	Evidence *Write
}

// SameProcess reports whether the handler ran again in the process where
// it had succeeded (a failed patch retried), not after a restart.
func (r Rerun) SameProcess() bool { return r.Start.PID == r.Succeeded.PID }

func (r Rerun) String() string {
	s := fmt.Sprintf("%s %s: %s; succeeded at ledger line %d (pid %d), ran again at line %d (pid %d, rv %s)",
		r.Start.Object, r.Start.Handler, r.Class, r.Succeeded.Line, r.Succeeded.PID, r.Start.Line, r.Start.PID, r.Start.RV)
	switch {
	case r.Evidence != nil && r.Evidence.Unanswered:
		s += fmt.Sprintf("; audit event %s received at %s was never answered (status subresource: %t)",
			r.Evidence.AuditID, r.Evidence.Time.Format("15:04:05.000000"), r.Evidence.Status)
	case r.Evidence != nil:
		s += fmt.Sprintf("; stored by audit event %s at %s (status subresource: %t)",
			r.Evidence.AuditID, r.Evidence.Time.Format("15:04:05.000000"), r.Evidence.Status)
	}
	return s
}

// Classify finds every re-run of a succeeded handler in the ledger and
// classifies it by the writes the API server had completed before the
// re-run started (writes by object, from ParseAudit):
//
//   - Outside if a write before it stored the success in the object (see
//     Write.Stored);
//   - else Unknown if a write between the success and the re-run was
//     never answered (see Write.Unanswered);
//   - else Window if a status-subresource write before it stored the
//     handler's result;
//   - else Lost.
//
// "Before" compares the ledger's times with the audit log's: both come
// from this machine's clock. The ledger's line order decides which runs
// follow which. Re-runs are returned in the ledger's order.
func Classify(ledger []Entry, writes map[string][]Write) []Rerun {
	type key struct{ object, handler string }
	succeeded := map[key]Entry{}
	var out []Rerun
	for _, e := range ledger {
		k := key{e.Object, e.Handler}
		switch e.Event {
		case EventSucceeded:
			succeeded[k] = e
		case EventStart:
			prev, ok := succeeded[k]
			if !ok {
				continue
			}
			r := Rerun{Start: e, Succeeded: prev, Class: Lost}
			var unanswered *Write
			ws := writes[e.Object]
			for i := range ws {
				w := &ws[i]
				if !w.Time.Before(e.Time) {
					continue
				}
				if w.Stored(e.Handler) {
					r.Class, r.Evidence = Outside, w
					break
				}
				if w.Unanswered && unanswered == nil && w.Time.After(prev.Time) {
					unanswered = w
				}
				if r.Class == Lost && w.Status && w.Results[e.Handler] {
					r.Class, r.Evidence = Window, w
				}
			}
			if r.Class != Outside && unanswered != nil {
				r.Class, r.Evidence = Unknown, unanswered
			}
			out = append(out, r)
		}
	}
	return out
}

// Counts tallies re-runs by class.
func Counts(reruns []Rerun) map[Class]int {
	out := map[Class]int{}
	for _, r := range reruns {
		out[r.Class]++
	}
	return out
}

// Missing lists, for each object, the handlers that never succeeded in the
// ledger; objects are resource/namespace/name.
func Missing(ledger []Entry, objects []string, handlers []string) []string {
	ok := map[string]bool{}
	for _, e := range ledger {
		if e.Event == EventSucceeded {
			ok[e.Object+" "+e.Handler] = true
		}
	}
	var out []string
	for _, o := range objects {
		for _, h := range handlers {
			if !ok[o+" "+h] {
				out = append(out, o+" "+h)
			}
		}
	}
	sort.Strings(out)
	return out
}

// Interrupted returns the runs that never ended: "start" lines with no
// later "succeeded", "failed" or "cancelled" line of the same handler,
// object and process. In the campaign, those are the runs that a SIGKILL
// cut short.
func Interrupted(ledger []Entry) []Entry {
	type key struct {
		object, handler string
		pid             int
	}
	open := map[key]Entry{}
	for _, e := range ledger {
		k := key{e.Object, e.Handler, e.PID}
		if e.Event == EventStart {
			open[k] = e
		} else {
			delete(open, k)
		}
	}
	out := make([]Entry, 0, len(open))
	for _, e := range open {
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Line < out[j].Line })
	return out
}
