package peering

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kopf-go/kopf/kopftest"
)

// The Lease's timings of the failover test.
const (
	leaseDuration = 3 * time.Second
	renewDeadline = 2 * time.Second
	retryPeriod   = 500 * time.Millisecond
)

// ledger reads the handler runs of the operator processes: object → pids.
func ledger(t *testing.T, path string) map[string][]string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	runs := map[string][]string{}
	for line := range strings.SplitSeq(strings.TrimSpace(string(data)), "\n") {
		if line == "" {
			continue
		}
		obj, pid, ok := strings.Cut(line, " ")
		if !ok {
			t.Fatalf("a malformed ledger line: %q", line)
		}
		runs[obj] = append(runs[obj], pid)
	}
	return runs
}

// High availability: two replicas of equal priority elect one active
// replica through the Lease; the other stands by, watching. The active
// one is killed (SIGKILL) while objects keep coming: the stand-by takes
// over once the Lease expires (its duration plus a retry or two). Then
// that one exits cleanly (SIGTERM) and releases the Lease: a third
// replica takes over at once. Every object is handled exactly once (the
// ledger of handler runs), though all three replicas saw them all.
func TestHAFailover(t *testing.T) {
	const perPhase = 20
	ns := newNamespace(t, "ha")
	newPeering(t, ns, "ha")
	objs := kopftest.NewObjects(t, shared.Config, examples, ns)
	bin, kc, dir := binary(t), kubeconfig(t), t.TempDir()
	path := filepath.Join(dir, "ledger")
	env := []string{
		"PEERING_LEDGER=" + path,
		"PEERING_LEASE_DURATION=" + leaseDuration.String(),
		"PEERING_RENEW_DEADLINE=" + renewDeadline.String(),
		"PEERING_RETRY_PERIOD=" + retryPeriod.String(),
	}
	args := []string{"run", "-n", ns, "-P", "ha", "-v", "--kubeconfig", kc}

	a := start(t, bin, filepath.Join(dir, "replica-a.log"), env, args...)
	a.WaitLog(t, "This replica is the active one: it holds the Lease "+ns+"/kopf-peering-ha-0.", 30*time.Second)
	b := start(t, bin, filepath.Join(dir, "replica-b.log"), env, args...)
	b.WaitLog(t, "Standing by: the active replica is ", 30*time.Second)
	// Kopf's warning about the same priority stays (for Kopf peers): here,
	// the Lease decides, and neither replica freezes.
	b.WaitLog(t, "Possibly conflicting operators with the same priority: [<Peer ", 30*time.Second)

	for i := range perPhase {
		objs.Create(example(fmt.Sprintf("before-%02d", i)))
	}
	// Handled: the handler ran and its outcome is stored (the diff-base is
	// the last write of an object's handling).
	for i := range perPhase {
		objs.WaitFor(fmt.Sprintf("before-%02d", i), 60*time.Second, func(o *unstructured.Unstructured) bool {
			return o.GetAnnotations()["kopf.zalando.org/last-handled-configuration"] != ""
		})
	}
	if n := len(ledger(t, path)); n != perPhase {
		t.Fatalf("the ledger has %d objects before the kill, want %d", n, perPhase)
	}

	// SIGKILL the active replica, and keep creating objects meanwhile.
	killed := time.Now()
	if err := a.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-a.Done()
	for i := range perPhase {
		objs.Create(example(fmt.Sprintf("after-%02d", i)))
	}
	took := b.WaitLog(t, "This replica is the active one: it holds the Lease "+ns+"/kopf-peering-ha-0.", 30*time.Second).Sub(killed)
	// The stand-by notices the last renewal up to one (jittered) retry after
	// it, takes the Lease once it has not changed for leaseDuration, at its
	// next try: leaseDuration + 2 jittered retries; 1 s for the API and the
	// log's polling.
	bound := leaseDuration + 2*retryPeriod*6/5 + time.Second
	t.Logf("handover after SIGKILL: %s (Lease duration %s, bound %s)", took, leaseDuration, bound)
	if took > bound {
		t.Errorf("the handover took %s, more than %s", took, bound)
	}
	waitFor(t, "the new active replica's handling of every object", 60*time.Second, func() bool { return len(ledger(t, path)) == 2*perPhase })

	// A clean exit of the active replica: it drains and releases the
	// Lease, and a third replica, standing by, takes over at its next try,
	// without waiting for the Lease to expire; it processes every object
	// again on resume, and runs no handler twice.
	c := start(t, bin, filepath.Join(dir, "replica-c.log"), env, args...)
	c.WaitLog(t, "Standing by: the active replica is ", 30*time.Second)
	terminated := time.Now()
	if err := b.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if !b.Wait(30 * time.Second) {
		t.Fatal("replica b did not exit on SIGTERM")
	}
	b.WaitLog(t, "The Lease "+ns+"/kopf-peering-ha-0 is released.", time.Second)
	took = c.WaitLog(t, "This replica is the active one: it holds the Lease "+ns+"/kopf-peering-ha-0.", 30*time.Second).Sub(terminated)
	t.Logf("handover after SIGTERM: %s (Lease duration %s)", took, leaseDuration)
	if took >= leaseDuration {
		t.Errorf("the handover on a clean exit took %s: the Lease was not released", took)
	}
	// The new active replica held every object's first event: once it has
	// processed them all (the diff-base read: nothing to do), its exit
	// leaves the ledger final.
	for _, phase := range []string{"before", "after"} {
		for i := range perPhase {
			c.WaitLog(t, fmt.Sprintf("[%s/%s-%02d] Handling cycle is finished, waiting for new changes.", ns, phase, i), 30*time.Second)
		}
	}
	if err := c.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if !c.Wait(30 * time.Second) {
		t.Fatal("replica c did not exit on SIGTERM")
	}

	runs := ledger(t, path)
	apid, bpid := fmt.Sprintf("pid=%d", a.Pid()), fmt.Sprintf("pid=%d", b.Pid())
	for i := range perPhase {
		for _, tt := range []struct{ name, want string }{
			{fmt.Sprintf("%s/before-%02d", ns, i), apid},
			{fmt.Sprintf("%s/after-%02d", ns, i), bpid},
		} {
			if got := runs[tt.name]; len(got) != 1 || got[0] != tt.want {
				t.Errorf("%s was handled by %v, want once by %s", tt.name, got, tt.want)
			}
		}
	}
	if len(runs) != 2*perPhase {
		t.Errorf("the ledger has %d objects, want %d: %v", len(runs), 2*perPhase, runs)
	}
}
