package leases

import (
	"context"
	"os"
	"regexp"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
)

var t0 = time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)

func lease(holder, rv string, renewed time.Duration, seconds int32) *coordinationv1.Lease {
	l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "l", ResourceVersion: rv}}
	l.Spec.HolderIdentity = ptr.To(holder)
	l.Spec.RenewTime = ptr.To(metav1.NewMicroTime(t0.Add(renewed)))
	if seconds > 0 {
		l.Spec.LeaseDurationSeconds = ptr.To(seconds)
	}
	return l
}

// The liveness rule on the observer's clock: a Lease is live for its
// duration from when its record was seen to change (first seen counts as
// a change), whatever its renewTime says; without a holder it is free.
func TestObserverLiveness(t *testing.T) {
	clock := clocktesting.NewFakePassiveClock(t0)
	o := &Observer{Clock: clock}
	steps := []struct {
		name string
		at   time.Duration
		l    *coordinationv1.Lease
		want bool
	}{
		{"first seen, renewed long ago by the holder's clock: live", 0, lease("a", "1", -time.Hour, 10), true},
		{"unchanged for less than its duration", 9 * time.Second, lease("a", "1", -time.Hour, 10), true},
		{"unchanged for its duration: expired", 10 * time.Second, lease("a", "1", -time.Hour, 10), false},
		{"renewed (a new resourceVersion): live again", 11 * time.Second, lease("a", "2", -time.Hour, 10), true},
		{"renewTime in the future by the holder's clock: judged by ours", 20 * time.Second, lease("a", "2", time.Hour, 10), true},
		{"and expires on ours", 30 * time.Second, lease("a", "2", time.Hour, 10), false},
		{"another holder is a change", 31 * time.Second, lease("b", "2", time.Hour, 10), true},
		{"no duration: the fallback's (5 s here)", 36 * time.Second, lease("b", "2", time.Hour, 0), false},
		{"released (no holder): not live", 37 * time.Second, lease("", "3", 37*time.Second, 1), false},
	}
	for _, s := range steps {
		clock.SetTime(t0.Add(s.at))
		if got := o.Live(s.l, 5*time.Second); got != s.want {
			t.Fatalf("%s: live = %v, want %v", s.name, got, s.want)
		}
	}
	o.Forget(map[string]bool{})
	clock.SetTime(t0.Add(time.Hour))
	if !o.Live(lease("b", "3", 0, 10), 0) {
		t.Error("a forgotten Lease seen again is not new")
	}
}

func TestTiming(t *testing.T) {
	tests := []struct {
		in, want Timing
		valid    bool
	}{
		{Timing{}, Timing{15 * time.Second, 10 * time.Second, 2 * time.Second}, true},
		{Timing{Duration: 3 * time.Second}, Timing{3 * time.Second, 2 * time.Second, 400 * time.Millisecond}, true},
		{Timing{Duration: 3 * time.Second, RenewDeadline: 4 * time.Second}, Timing{3 * time.Second, 4 * time.Second, 400 * time.Millisecond}, false},
	}
	for _, tt := range tests {
		got := tt.in.Defaulted()
		if got != tt.want || (got.Validate() == nil) != tt.valid {
			t.Errorf("%+v.Defaulted() = %+v (valid: %v), want %+v (%v)", tt.in, got, got.Validate(), tt.want, tt.valid)
		}
	}
	if s := (Timing{Duration: 2500 * time.Millisecond}).Seconds(); s != 3 {
		t.Errorf("Seconds() = %d, want 3 (rounded up)", s)
	}
}

// The election's steps on one clock: the first candidate creates and holds
// the Lease; another cannot take it while it is renewed, nor before its
// record has stayed unchanged for its duration as the other observes it;
// then it takes it (a transition), and the old holder cannot renew it.
func TestHeldElection(t *testing.T) {
	ctx := context.Background()
	client := fake.NewClientset().CoordinationV1().Leases("ns")
	clock := clocktesting.NewFakePassiveClock(t0)
	held := func(id string) *Held {
		return &Held{Writer: Writer{Leases: client, Identity: id, Duration: 15 * time.Second, Clock: clock}, Name: "lease"}
	}
	a, b := held("a"), held("b")
	steps := []struct {
		name       string
		who        *Held
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
		{"b: a's record unchanged for its duration", b, 25 * time.Second, true, "b", 1},
		{"a cannot renew a Lease b holds", a, 26 * time.Second, false, "b", 1},
		{"b renews", b, 27 * time.Second, true, "b", 1},
	}
	for _, s := range steps {
		clock.SetTime(t0.Add(s.at))
		got, err := s.who.TryAcquireOrRenew(ctx)
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		l, err := client.Get(ctx, "lease", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got != s.want || Holder(l) != s.wantHolder || ptr.Deref(l.Spec.LeaseTransitions, 0) != s.wantTrans {
			t.Fatalf("%s: acquired %v, holder %q, transitions %d; want %v, %q, %d", s.name, got, Holder(l), ptr.Deref(l.Spec.LeaseTransitions, 0), s.want, s.wantHolder, s.wantTrans)
		}
	}
	// b releases: a takes it at once, without waiting for its duration.
	if err := b.Release(ctx); err != nil {
		t.Fatal(err)
	}
	clock.SetTime(t0.Add(28 * time.Second))
	if ok, err := a.TryAcquireOrRenew(ctx); !ok || err != nil {
		t.Fatalf("a did not take the released Lease at once: %v, %v", ok, err)
	}
	// b's release of a Lease it does not hold writes nothing.
	if err := b.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if l, _ := client.Get(ctx, "lease", metav1.GetOptions{}); Holder(l) != "a" {
		t.Fatalf("b's release freed a's Lease: holder %q", Holder(l))
	}
}

// Renew creates the Lease, then renews it; it is deleted on Delete.
func TestHeldRenew(t *testing.T) {
	ctx := context.Background()
	client := fake.NewClientset().CoordinationV1().Leases("ns")
	clock := clocktesting.NewFakePassiveClock(t0)
	h := &Held{Writer: Writer{Leases: client, Identity: "a", Clock: clock}, Name: "m", Labels: map[string]string{"role": "member"}}
	for i := range 3 {
		clock.SetTime(t0.Add(time.Duration(i) * time.Second))
		if err := h.Renew(ctx); err != nil {
			t.Fatal(err)
		}
		l, err := client.Get(ctx, "m", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if Holder(l) != "a" || !l.Spec.RenewTime.Time.Equal(clock.Now()) || !l.Spec.AcquireTime.Time.Equal(t0) || l.Labels["role"] != "member" || *l.Spec.LeaseDurationSeconds != 15 {
			t.Fatalf("renewal %d: %+v", i, l)
		}
	}
	if err := h.Delete(ctx); err != nil {
		t.Fatal(err)
	}
	if err := h.Delete(ctx); err != nil {
		t.Fatalf("deleting a deleted Lease: %v", err)
	}
}

func TestDetectOwnID(t *testing.T) {
	t.Setenv("POD_ID", "x")
	if id := DetectOwnID(false); id != "x" {
		t.Errorf("id = %q, want $POD_ID", id)
	}
	t.Setenv("POD_ID", "")
	os.Unsetenv("POD_ID") // restored by t.Setenv's cleanup
	if id := DetectOwnID(false); !regexp.MustCompile(`^[^@/]+@[^/]+/\d{14}/[a-z0-9]{3}$`).MatchString(id) {
		t.Errorf("id = %q, want user@host/YYYYmmddHHMMSS/xyz", id)
	}
}
