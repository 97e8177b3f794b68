package peering

import (
	"context"
	"errors"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/kopf-go/kopf"
	"github.com/kopf-go/kopf/kopftest"
)

// daemonLog records a daemon's starts and the reasons of its stops.
type daemonLog struct {
	mu     sync.Mutex
	starts []time.Time
	stops  []error
}

func (d *daemonLog) snapshot() (int, []error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.starts), append([]error(nil), d.stops...)
}

// register adds create_fn (and a daemon when d is set) for kopfexamples.
func register(d *daemonLog) func(*kopf.Registry) error {
	return func(r *kopf.Registry) error {
		if err := r.AddChanging(kopf.ChangingHandler{
			ID: "create_fn", Selector: selector, Reasons: []kopf.Reason{kopf.ReasonCreate},
			Fn: func(context.Context, *kopf.ChangingKwargs) (any, error) { return nil, nil },
		}); err != nil {
			return err
		}
		if d == nil {
			return nil
		}
		return r.AddDaemon(kopf.DaemonHandler{
			ID: "daemon_fn", Selector: selector,
			Fn: func(ctx context.Context, kw *kopf.DaemonKwargs) (any, error) {
				d.mu.Lock()
				d.starts = append(d.starts, time.Now())
				d.mu.Unlock()
				<-kw.Stopped.Done()
				d.mu.Lock()
				d.stops = append(d.stops, context.Cause(kw.Stopped))
				d.mu.Unlock()
				return nil, nil
			},
		})
	}
}

// witness adds an on.event handler only: it sees every event of
// kopfexamples and writes nothing to them (no changing handler: no
// diff-base, no finalizer), so what the paused operator leaves undone
// stays undone.
func witness(r *kopf.Registry) error {
	return r.AddEvent(kopf.EventHandler{ID: "event_fn", Selector: selector, Fn: func(context.Context, *kopf.EventKwargs) error { return nil }})
}

// Two operators, priorities 0 and 100: the higher one pauses the lower
// one (its handlers stop running, its daemons stop), and when the higher
// one exits, the lower one resumes and handles what came meanwhile.
func TestPriorityPausing(t *testing.T) {
	ns := newNamespace(t, "priority")
	newPeering(t, ns, "prio")
	objs := kopftest.NewObjects(t, shared.Config, examples, ns)

	var daemon daemonLog
	low := kopftest.Start(t, shared.Config, register(&daemon), peered(ns, "prio", 0, "low-operator")...)
	objs.Create(example("obj-1"))
	low.WaitOutcome(kopftest.Match{Name: "obj-1", Handler: "create_fn", Result: kopftest.Succeeded}, 30*time.Second)
	waitFor(t, "the daemon's start", 10*time.Second, func() bool { n, _ := daemon.snapshot(); return n == 1 })

	high := kopftest.Start(t, shared.Config, witness, peered(ns, "prio", 100, "high-operator")...)
	low.WaitLog("Pausing operations in favour of [<Peer high-operator: priority=100, lifetime=60, lastseen='", 30*time.Second)
	waitFor(t, "the daemon's stop for the pause", 10*time.Second, func() bool { _, stops := daemon.snapshot(); return len(stops) == 1 })
	if _, stops := daemon.snapshot(); !errors.Is(stops[0], kopf.StopOperatorPausing) {
		t.Errorf("the daemon stopped for %v, want the pause", stops[0])
	}
	if !regexp.MustCompile(`Pausing operations in favour of \[<Peer high-operator: priority=100, lifetime=60, lastseen='\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?\+00:00'>\]\.`).MatchString(low.Logs()) {
		t.Errorf("the pause is not logged in Kopf's words:\n%s", low.Logs())
	}
	if high.CountLog("Pausing operations") != 0 {
		t.Errorf("the higher operator paused:\n%s", high.Logs())
	}

	objs.Create(example("obj-2"))
	// The higher operator's on.event handler witnesses obj-2's creation:
	// the lower one has seen it about then too, and must not handle it.
	high.WaitOutcome(kopftest.Match{Name: "obj-2", Handler: "event_fn", Cause: kopftest.CauseEvent}, 30*time.Second)
	low.WaitLog("["+ns+"/obj-2] The operator is paused: the processing waits for the resume.", 30*time.Second)
	if got := low.Outcomes(kopftest.Match{Name: "obj-2", Handler: "create_fn"}); len(got) != 0 {
		t.Fatalf("the paused operator handled obj-2: %v", got)
	}

	stopped := time.Now()
	if err := high.Stop(); err != nil {
		t.Fatal(err)
	}
	low.WaitLog("Resuming operations after the pause. Conflicting operators with the same priority are gone.", 30*time.Second)
	o := low.WaitOutcome(kopftest.Match{Name: "obj-2", Handler: "create_fn", Result: kopftest.Succeeded}, 30*time.Second)
	if o.Time.Before(stopped) {
		t.Errorf("obj-2 was handled at %s, before the higher operator exited at %s", o.Time, stopped)
	}
	waitFor(t, "the daemons' restart after the pause", 20*time.Second, func() bool { n, _ := daemon.snapshot(); return n >= 3 }) // obj-1 again, obj-2
	if status := peeringStatus(t, ns, "prio"); status["high-operator"] != nil {
		t.Errorf("the exited operator's record is left: %v", status)
	}
}
