package peering

import (
	"context"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"

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
		got, err := s.who.tryAcquireOrRenew(ctx, 10*time.Second)
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
	if ok, err := b.tryAcquireOrRenew(context.Background(), 10*time.Second); ok || err != nil {
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
	if ok, err := b.tryAcquireOrRenew(context.Background(), 10*time.Second); !ok || err != nil {
		t.Fatalf("b did not take the released Lease at once: %v, %v", ok, err)
	}
}

// cuttableLeases is a Leases client whose requests, while cut is set,
// hang until their context ends, as on a stalled connection; ok records
// when the last request that was answered began.
type cuttableLeases struct {
	coordinationv1client.LeaseInterface
	cut *atomic.Bool
	ok  *atomic.Int64 // unix nanoseconds
}

func (c cuttableLeases) Leases(string) coordinationv1client.LeaseInterface { return c }

func (c cuttableLeases) stall(ctx context.Context) error {
	if !c.cut.Load() {
		c.ok.Store(time.Now().UnixNano())
		return nil
	}
	<-ctx.Done()
	return ctx.Err()
}

func (c cuttableLeases) Get(ctx context.Context, name string, opts metav1.GetOptions) (*coordinationv1.Lease, error) {
	if err := c.stall(ctx); err != nil {
		return nil, err
	}
	return c.LeaseInterface.Get(ctx, name, opts)
}

func (c cuttableLeases) Update(ctx context.Context, l *coordinationv1.Lease, opts metav1.UpdateOptions) (*coordinationv1.Lease, error) {
	if err := c.stall(ctx); err != nil {
		return nil, err
	}
	return c.LeaseInterface.Update(ctx, l, opts)
}

// A holder cut off from the API server (its requests hang) stands down
// (Standby on, then OnLost) no later than RenewDeadline after the start
// of its last answered request, whenever in its renewal cycle the cut
// comes, and before the other replica takes the Lease over (no sooner
// than Duration after it observed the last renewal).
func TestElectorStandsDownWhenCut(t *testing.T) {
	for _, cutAfter := range []time.Duration{1200 * time.Millisecond, 1499 * time.Millisecond, 1501 * time.Millisecond, 1750 * time.Millisecond} {
		t.Run(cutAfter.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { testElectorStandsDownWhenCut(t, cutAfter) })
		})
	}
}

func testElectorStandsDownWhenCut(t *testing.T, cutAfter time.Duration) {
	timing := leases.Timing{Duration: 3 * time.Second, RenewDeadline: 2 * time.Second, RetryPeriod: 500 * time.Millisecond}
	shared := fake.NewClientset().CoordinationV1()
	var cut atomic.Bool
	var okAt atomic.Int64
	var lostAt, tookAt time.Time
	mk := func(id string, leases coordinationv1client.LeasesGetter) *Elector {
		var toggles Toggles
		return &Elector{
			Leases: leases, Namespace: "ns", Name: "lease", Identity: Identity(id), Timing: timing,
			Standby: toggles.Make("standby", true), Logger: slog.New(slog.DiscardHandler),
		}
	}
	a := mk("a", cuttableLeases{LeaseInterface: shared.Leases("ns"), cut: &cut, ok: &okAt})
	a.OnLost = func() {
		if !a.Standby.On() {
			t.Error("OnLost before Standby is on")
		}
		lostAt = time.Now()
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go a.Run(ctx)
	synctest.Wait()
	if a.Standby.On() {
		t.Fatal("a does not hold the free Lease")
	}
	b := mk("b", shared)
	go b.Run(ctx)
	time.Sleep(cutAfter)
	cut.Store(true)
	for b.Standby.On() {
		time.Sleep(10 * time.Millisecond)
	}
	tookAt = time.Now()
	lastOK := time.Unix(0, okAt.Load())
	if lostAt.IsZero() || lostAt.Sub(lastOK) > timing.RenewDeadline {
		t.Errorf("a stood down at %s after its last answered request, want within RenewDeadline %s", lostAt.Sub(lastOK), timing.RenewDeadline)
	}
	if !lostAt.Before(tookAt) {
		t.Errorf("b took the Lease over at +%s, before a stood down at +%s", tookAt.Sub(lastOK), lostAt.Sub(lastOK))
	}
	if took := tookAt.Sub(lastOK); took < timing.Duration {
		t.Errorf("b took the Lease over %s after a's last renewal, before its Duration %s", took, timing.Duration)
	}
}
