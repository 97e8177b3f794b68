package partition

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kopf-go/kopf/e2e/internal/faultproxy"
	"github.com/kopf-go/kopf/e2e/internal/proc"
	"github.com/kopf-go/kopf/kopftest"
)

// The HA Lease's timings of partop (its Duration, RenewDeadline), and
// how long the handlers take in the tests of a cut (longer than the
// Lease).
const (
	haDuration      = 3 * time.Second
	haRenewDeadline = 2 * time.Second
	cutSleep        = 4 * time.Second
)

// The HA pair, the active replica cut off from the API server (its
// connections stalled, or dropped) while it handles objects: it stands
// down within the renew deadline of its last renewal, before the other
// replica takes the Lease over, and its handlers in progress are
// cancelled then; the other handles everything from then on, including
// what the cut one had not stored. Once the proxy passes again, the cut
// replica stands by; when the other exits, it takes over and runs no
// handler that has succeeded.
func TestPartitionHA(t *testing.T) {
	for _, fault := range []faultproxy.Mode{faultproxy.Stall, faultproxy.Drop} {
		t.Run(fault.String(), func(t *testing.T) { testPartitionHA(t, fault) })
	}
}

func testPartitionHA(t *testing.T, fault faultproxy.Mode) {
	const n = 20
	ns := newNamespace(t, "ha-"+fault.String())
	newPeering(t, ns, "ha")
	objs := kopftest.NewObjects(t, shared.Config, examples, ns)
	dir := t.TempDir()
	rec := filepath.Join(dir, "record")
	p := startProxy(t)
	lease := ns + "/kopf-peering-ha-0"
	active := "This replica is the active one: it holds the Lease " + lease + "."
	args := []string{"-n", ns, "-P", "ha"}
	// The handlers take longer than the Lease: those in progress at the
	// cut would end after the takeover if they were not abandoned.
	env := []string{"PARTOP_SLEEP=" + cutSleep.String()}
	a := startReplica(t, dir, "replica-a", kubeconfig(t, dir, "a.kubeconfig", p), rec, env, args...)
	a.WaitLog(t, active, 60*time.Second)
	b := startReplica(t, dir, "replica-b", kubeconfig(t, dir, "b.kubeconfig", nil), rec, env, args...)
	b.WaitLog(t, "Standing by: the active replica is replica-a", 60*time.Second)

	create := func(prefix string, wave int) []string {
		for i := range n {
			objs.Create(example(fmt.Sprintf("%s-%02d", prefix, i), wave))
		}
		return names(ns, prefix, n)
	}
	one := create("one", 1)
	waitFor(t, "wave 1 handled", 60*time.Second, func() bool { return readRecord(t, rec).finished("create_fn", one, 1) })

	// Wave 2: the active replica is cut while it handles it.
	two := create("two", 2)
	waitFor(t, "replica-a handling wave 2", 30*time.Second, func() bool { return readRecord(t, rec).has(a.Pid(), "2") })
	cutAt := time.Now()
	p.Set(fault)
	lostAt := a.WaitLog(t, "The Lease "+lease+" is lost: pausing operations until it is held again.", 30*time.Second)
	tookAt := b.WaitLog(t, active, 30*time.Second)
	three := create("three", 3) // during the cut
	waitFor(t, "waves 2 and 3 handled", 60*time.Second, func() bool {
		r := readRecord(t, rec)
		return r.finished("create_fn", two, 2) && r.finished("create_fn", three, 3)
	})

	// The proxy passes again: the cut replica stands by.
	standby := "Standing by: the active replica is replica-b"
	seen := strings.Count(a.Logs(), standby)
	healAt := time.Now()
	p.Set(faultproxy.Pass)
	rejoinAt := waitLogMore(t, a, standby, seen, 30*time.Second)

	// The other exits: the cut replica takes over again, handles a new
	// wave, and runs nothing that succeeded.
	seen = strings.Count(a.Logs(), active)
	stopAt := time.Now()
	b.Stop(t, 30*time.Second)
	againAt := waitLogMore(t, a, active, seen, 30*time.Second)
	four := create("four", 4)
	waitFor(t, "wave 4 handled", 60*time.Second, func() bool { return readRecord(t, rec).finished("create_fn", four, 4) })
	a.Stop(t, 30*time.Second)

	r := readRecord(t, rec)
	aLast, bFirst := r.last(a.Pid(), stopAt), r.first(b.Pid())
	t.Logf("%s: replica-a stood down %s after the cut (bound: the renew deadline %s after its last renewal began), replica-b took over %s after the cut (Lease %s); replica-a's last handler step %s before replica-b's first; replica-a stood by %s after the proxy passed again, and was active again %s after replica-b's exit",
		fault, lostAt.Sub(cutAt).Round(time.Millisecond), haRenewDeadline, tookAt.Sub(cutAt).Round(time.Millisecond), haDuration,
		bFirst.Sub(aLast).Round(time.Millisecond), rejoinAt.Sub(healAt).Round(time.Millisecond), againAt.Sub(stopAt).Round(time.Millisecond))
	if lostAt.Sub(cutAt) > haRenewDeadline+500*time.Millisecond { // the log's polling and a loaded machine
		t.Errorf("replica-a stood down %s after the cut, more than the renew deadline %s", lostAt.Sub(cutAt), haRenewDeadline)
	}
	if !lostAt.Before(tookAt) {
		t.Errorf("replica-b took over (%s) before replica-a stood down (%s)", clock(tookAt), clock(lostAt))
	}
	if !aLast.Before(bFirst) {
		t.Errorf("replica-a's last handler step (%s) is not before replica-b's first (%s)", clock(aLast), clock(bFirst))
	}
	cancelled := r.count(a.Pid(), "cancelled")
	if cancelled == 0 {
		t.Error("replica-a abandoned no handler at the cut")
	}
	reruns := r.audit(t, a.Pid(), cutAt)
	t.Logf("%d handlers re-run by replica-b after finishing on replica-a at the cut (their outcome not stored); %d handlers abandoned on replica-a", reruns, cancelled)
	for wave, objects := range map[int][]string{1: one, 2: two, 3: three, 4: four} {
		if !r.finished("create_fn", objects, wave) {
			t.Errorf("wave %d: not every object handled", wave)
		}
	}
}

// waitLogMore waits for more occurrences of text in p's log than before,
// and returns when it saw them.
func waitLogMore(t *testing.T, p *proc.Process, text string, before int, timeout time.Duration) time.Time {
	t.Helper()
	return waitFor(t, fmt.Sprintf("%q again in the log of %s", text, p.Name), timeout, func() bool {
		return strings.Count(p.Logs(), text) > before
	})
}

// has says whether pid has invoked a handler of the wave.
func (r record) has(pid int, wave string) bool {
	for _, s := range r {
		if s.pid == pid && s.wave == wave && s.event == "invoked" {
			return true
		}
	}
	return false
}

// last is the time of pid's last step before until.
func (r record) last(pid int, until time.Time) time.Time {
	var at time.Time
	for _, s := range r {
		if s.pid == pid && s.at.Before(until) && s.at.After(at) {
			at = s.at
		}
	}
	return at
}

// count is the number of pid's steps of an event.
func (r record) count(pid int, event string) int {
	n := 0
	for _, s := range r {
		if s.pid == pid && s.event == event {
			n++
		}
	}
	return n
}

// first is the time of pid's first step (the zero time if none).
func (r record) first(pid int) time.Time {
	var at time.Time
	for _, s := range r {
		if s.pid == pid && (at.IsZero() || s.at.Before(at)) {
			at = s.at
		}
	}
	return at
}
