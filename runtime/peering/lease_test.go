package peering

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/kopf-go/kopf/runtime/leases"
)

// newElectors returns electors of the given identities sharing one Lease
// on a fake API server and a fake clock, each with its own Standby toggle.
func newElectors(t *testing.T, ids ...string) (coordinationv1client.LeaseInterface, *clocktesting.FakePassiveClock, []*Elector) {
	t.Helper()
	cs := fake.NewClientset()
	clock := clocktesting.NewFakePassiveClock(time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC))
	var electors []*Elector
	for _, id := range ids {
		var toggles Toggles
		electors = append(electors, &Elector{
			Leases: cs.CoordinationV1(), Namespace: "ns", Name: "lease", Identity: Identity(id), Clock: clock,
			Timing:  leases.Timing{Duration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second},
			Standby: toggles.Make("standby", true), Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		})
	}
	return cs.CoordinationV1().Leases("ns"), clock, electors
}

func holder(t *testing.T, client coordinationv1client.LeaseInterface) (string, int32) {
	t.Helper()
	l, err := client.Get(context.Background(), "lease", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return leases.Holder(l), ptr.Deref(l.Spec.LeaseTransitions, 0)
}

// The election's steps on one clock: the first candidate creates and holds
// the Lease; another cannot take it while it is renewed, nor before its
// record has stayed unchanged for Duration as the other observes it; then
// it takes it (a transition), and the old holder's next try fails.
func TestElectorSteps(t *testing.T) {
	ctx := context.Background()
	client, clock, e := newElectors(t, "a", "b")
	a, b := e[0], e[1]
	t0 := clock.Now()

	steps := []struct {
		name       string
		who        *Elector
		at         time.Duration
		want       bool
		wantHolder string
		wantTrans  int32
	}{
		{"a creates the Lease", a, 0, true, "a", 0},
		{"b sees a's record for the first time", b, 1 * time.Second, false, "a", 0},
		{"a renews", a, 2 * time.Second, true, "a", 0},
		{"b sees a new record: its clock restarts", b, 10 * time.Second, false, "a", 0},
		{"b: not yet expired on b's clock", b, 24 * time.Second, false, "a", 0},
		{"b: a's record unchanged for Duration", b, 25 * time.Second, true, "b", 1},
		{"a cannot renew a Lease b holds", a, 26 * time.Second, false, "b", 1},
		{"b renews", b, 27 * time.Second, true, "b", 1},
	}
	for _, s := range steps {
		clock.SetTime(t0.Add(s.at))
		got, err := s.who.tryAcquireOrRenew(ctx)
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		h, n := holder(t, client)
		if got != s.want || h != s.wantHolder || n != s.wantTrans {
			t.Fatalf("%s: acquired %v, holder %q, transitions %d; want %v, %q, %d", s.name, got, h, n, s.want, s.wantHolder, s.wantTrans)
		}
	}
}

// Run's end releases a held Lease (no holder), so that a stand-by takes it
// at its next try without waiting for Duration; the Standby toggle follows
// the holding.
func TestElectorRelease(t *testing.T) {
	client, clock, e := newElectors(t, "a", "b")
	a, b := e[0], e[1]
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); a.Run(ctx) }()

	deadline := time.Now().Add(10 * time.Second)
	for a.Standby.On() {
		if time.Now().After(deadline) {
			t.Fatal("a did not take the free Lease")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if ok, err := b.tryAcquireOrRenew(context.Background()); ok || err != nil {
		t.Fatalf("b took a held Lease: %v, %v", ok, err)
	}
	cancel()
	<-done
	if !a.Standby.On() {
		t.Error("a is not standing by after its Run ended")
	}
	if h, _ := holder(t, client); h != "" {
		t.Fatalf("the Lease is held by %q after a's release", h)
	}
	clock.SetTime(clock.Now().Add(time.Millisecond))
	if ok, err := b.tryAcquireOrRenew(context.Background()); !ok || err != nil {
		t.Fatalf("b did not take the released Lease at once: %v, %v", ok, err)
	}
}
