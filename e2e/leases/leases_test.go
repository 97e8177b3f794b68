// Package leases checks runtime/leases against a real control plane: the
// API server's resourceVersion preconditions make one of two writers of a
// Lease fail, and the liveness rule is judged on each replica's own clock.
package leases

import (
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/kopf-go/kopf/e2e/cluster"
	"github.com/kopf-go/kopf/runtime/leases"
)

func TestLeasesOnARealAPIServer(t *testing.T) {
	c := cluster.Start(t)
	ctx := t.Context()
	client := kubernetes.NewForConfigOrDie(c.Config).CoordinationV1().Leases("default")
	t0 := time.Now()
	// Each replica has a clock of its own; b's is an hour behind a's.
	clocks := map[string]*clocktesting.FakePassiveClock{"a": clocktesting.NewFakePassiveClock(t0), "b": clocktesting.NewFakePassiveClock(t0.Add(-time.Hour))}
	held := func(id string) *leases.Held {
		return &leases.Held{Writer: leases.Writer{Leases: client, Identity: id, Duration: 3 * time.Second, Clock: clocks[id]}, Name: "election"}
	}
	a, b := held("a"), held("b")

	t.Run("two candidates at once: one holds it", func(t *testing.T) {
		var wg sync.WaitGroup
		won := make([]bool, 2)
		for i, h := range []*leases.Held{a, b} {
			wg.Go(func() { won[i], _ = h.TryAcquireOrRenew(ctx) })
		}
		wg.Wait()
		if won[0] == won[1] {
			t.Fatalf("a won %v, b won %v: want exactly one", won[0], won[1])
		}
		if won[1] { // the rest of the test wants a to hold it
			if err := b.Release(ctx); err != nil {
				t.Fatal(err)
			}
			if ok, err := a.TryAcquireOrRenew(ctx); !ok || err != nil {
				t.Fatalf("a did not take the released Lease: %v, %v", ok, err)
			}
		}
	})

	t.Run("a stale write is a conflict", func(t *testing.T) {
		stale, err := client.Get(ctx, "election", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		clocks["a"].SetTime(clocks["a"].Now().Add(time.Second)) // a renewal of the same time writes nothing
		if err := a.Renew(ctx); err != nil {
			t.Fatal(err)
		}
		_, err = b.Take(ctx, stale)
		if !apierrors.IsConflict(err) {
			t.Fatalf("b's take of a stale version: %v, want a conflict", err)
		}
	})

	t.Run("expiry on the observer's clock", func(t *testing.T) {
		if ok, err := b.TryAcquireOrRenew(ctx); ok || err != nil {
			t.Fatalf("b took a live Lease: %v, %v", ok, err)
		}
		// b's clock is an hour behind the renewTime a writes: what counts
		// is how long b has seen the record unchanged.
		clocks["b"].SetTime(clocks["b"].Now().Add(2 * time.Second))
		if ok, _ := b.TryAcquireOrRenew(ctx); ok {
			t.Fatal("b took the Lease before its duration passed on b's clock")
		}
		clocks["b"].SetTime(clocks["b"].Now().Add(time.Second))
		if ok, err := b.TryAcquireOrRenew(ctx); !ok || err != nil {
			t.Fatalf("b did not take an expired Lease: %v, %v", ok, err)
		}
		l, err := client.Get(ctx, "election", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if leases.Holder(l) != "b" || ptr.Deref(l.Spec.LeaseTransitions, 0) < 1 {
			t.Fatalf("holder %q, transitions %d: want b, at least 1", leases.Holder(l), ptr.Deref(l.Spec.LeaseTransitions, 0))
		}
		if ok, err := a.TryAcquireOrRenew(ctx); ok || err != nil {
			t.Fatalf("a renewed a Lease b holds: %v, %v", ok, err)
		}
	})

	t.Run("a member's Lease: renewed, observed, deleted", func(t *testing.T) {
		m := &leases.Held{Writer: leases.Writer{Leases: client, Identity: "a", Duration: 3 * time.Second, Clock: clocks["a"]}, Name: "member-a", Labels: map[string]string{"role": "member"}}
		if err := m.Renew(ctx); err != nil {
			t.Fatal(err)
		}
		o := &leases.Observer{Clock: clocks["b"]}
		l, err := client.Get(ctx, "member-a", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !o.Live(l, 0) {
			t.Fatal("a first-seen member Lease is not live")
		}
		clocks["b"].SetTime(clocks["b"].Now().Add(3 * time.Second))
		if o.Live(l, 0) {
			t.Fatal("a member Lease unchanged for its duration is live")
		}
		clocks["a"].SetTime(clocks["a"].Now().Add(time.Second))
		if err := m.Renew(ctx); err != nil {
			t.Fatal(err)
		}
		if l, err = client.Get(ctx, "member-a", metav1.GetOptions{}); err != nil || !o.Live(l, 0) {
			t.Fatalf("a renewed member Lease is not live: %v", err)
		}
		if err := m.Delete(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := client.Get(ctx, "member-a", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Fatalf("the deleted Lease: %v", err)
		}
	})
}
