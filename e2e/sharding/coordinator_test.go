package sharding_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	coordinationclient "k8s.io/client-go/kubernetes/typed/coordination/v1"

	"github.com/kopf-go/kopf/e2e/cluster"
	"github.com/kopf-go/kopf/runtime/sharding"
)

// partitionable is a Lease client that can be cut off from the API server.
type partitionable struct {
	coordinationclient.LeaseInterface
	cut atomic.Bool
}

var errPartitioned = errors.New("partitioned")

func (p *partitionable) Get(ctx context.Context, name string, opts metav1.GetOptions) (*coordinationv1.Lease, error) {
	if p.cut.Load() {
		return nil, errPartitioned
	}
	return p.LeaseInterface.Get(ctx, name, opts)
}

func (p *partitionable) List(ctx context.Context, opts metav1.ListOptions) (*coordinationv1.LeaseList, error) {
	if p.cut.Load() {
		return nil, errPartitioned
	}
	return p.LeaseInterface.List(ctx, opts)
}

func (p *partitionable) Create(ctx context.Context, l *coordinationv1.Lease, opts metav1.CreateOptions) (*coordinationv1.Lease, error) {
	if p.cut.Load() {
		return nil, errPartitioned
	}
	return p.LeaseInterface.Create(ctx, l, opts)
}

func (p *partitionable) Update(ctx context.Context, l *coordinationv1.Lease, opts metav1.UpdateOptions) (*coordinationv1.Lease, error) {
	if p.cut.Load() {
		return nil, errPartitioned
	}
	return p.LeaseInterface.Update(ctx, l, opts)
}

func (p *partitionable) Delete(ctx context.Context, name string, opts metav1.DeleteOptions) error {
	if p.cut.Load() {
		return errPartitioned
	}
	return p.LeaseInterface.Delete(ctx, name, opts)
}

// ledger is what the coordinators' callbacks say: who works on each bucket
// now. Two at once is the failure this test looks for.
type ledger struct {
	mu      sync.Mutex
	working map[int]string
	errs    []string
}

func (l *ledger) acquire(who string, buckets []int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, b := range buckets {
		if other, ok := l.working[b]; ok {
			l.errs = append(l.errs, fmt.Sprintf("%s acquired bucket %d while %s still works on it", who, b, other))
		}
		l.working[b] = who
	}
}

func (l *ledger) release(who string, buckets []int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, b := range buckets {
		if l.working[b] == who {
			delete(l.working, b)
		} else {
			l.errs = append(l.errs, fmt.Sprintf("%s released bucket %d, which %q works on", who, b, l.working[b]))
		}
	}
}

// settled says whether the ledger and the Leases agree with the
// assignment among the members.
func (l *ledger) settled(members []string) bool {
	want := sharding.Assign(buckets, members)
	l.mu.Lock()
	defer l.mu.Unlock()
	for b, m := range want {
		if l.working[b] != m {
			return false
		}
	}
	return len(l.working) == buckets
}

// Coordinators against a real API server: buckets are handed over in
// order (the old owner's Release before the new owner's Acquire, never two
// at once) when a replica joins, leaves, or is cut off from the API
// server, and every bucket is worked on while any replica lives.
func TestCoordinatorsHandOverInOrder(t *testing.T) {
	c := startCluster(t)
	cs := kubernetes.NewForConfigOrDie(c.Config)
	led := &ledger{working: map[int]string{}}
	type member struct {
		name   string
		client *partitionable
		cancel context.CancelFunc
		done   chan struct{}
	}
	start := func(name string) *member {
		m := &member{name: name, client: &partitionable{LeaseInterface: cs.CoordinationV1().Leases(namespace)}, done: make(chan struct{})}
		co, err := sharding.New(sharding.Config{
			Leases: m.client, Group: "coord", Identity: name, Buckets: buckets,
			LeaseDuration: 3 * time.Second, RenewInterval: 500 * time.Millisecond,
			Acquire: func(_ context.Context, bs []int) { led.acquire(name, bs) },
			Release: func(_ context.Context, bs []int) {
				time.Sleep(100 * time.Millisecond) // stopping takes time
				led.release(name, bs)
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		m.cancel = cancel
		go func() {
			defer close(m.done)
			co.Run(ctx)
		}()
		t.Cleanup(func() { cancel(); <-m.done })
		return m
	}
	await := func(step string, members ...string) {
		t.Helper()
		begun := time.Now()
		err := cluster.WaitFor(context.Background(), 30*time.Second, func(context.Context) (bool, error) {
			return led.settled(members), nil
		})
		if err != nil {
			t.Fatalf("%s: the buckets are not worked on as assigned among %v: %v", step, members, err)
		}
		t.Logf("%s: settled among %v in %s", step, members, time.Since(begun).Round(time.Millisecond))
	}
	a, b, _ := start("a"), start("b"), start("c")
	await("start", "a", "b", "c")
	d := start("d")
	await("d joins", "a", "b", "c", "d")
	a.client.cut.Store(true) // a is cut off: it must stop before the others take over
	await("a cut off", "b", "c", "d")
	a.cancel()
	<-a.done
	b.cancel() // b leaves gracefully
	<-b.done
	await("b leaves", "c", "d")
	_ = d
	led.mu.Lock()
	defer led.mu.Unlock()
	for _, e := range led.errs {
		t.Error(e)
	}
	holders := slices.Sorted(func(yield func(string) bool) {
		for _, w := range led.working {
			if !yield(w) {
				return
			}
		}
	})
	if slices.Contains(holders, "a") || slices.Contains(holders, "b") {
		t.Errorf("buckets are still worked on by a replica that is gone: %v", slices.Compact(holders))
	}
}
