package sharding

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	coordinationclient "k8s.io/client-go/kubernetes/typed/coordination/v1"
)

// cuttable is a Leases client whose requests, while cut is set, hang
// until their context ends, as on a stalled connection; ok is when the
// last request that was answered began.
type cuttable struct {
	coordinationclient.LeaseInterface
	cut *atomic.Bool
	ok  *atomic.Int64 // unix nanoseconds
}

func (c cuttable) stall(ctx context.Context) error {
	if !c.cut.Load() {
		c.ok.Store(time.Now().UnixNano())
		return nil
	}
	<-ctx.Done()
	return ctx.Err()
}

func (c cuttable) Get(ctx context.Context, name string, opts metav1.GetOptions) (*coordinationv1.Lease, error) {
	if err := c.stall(ctx); err != nil {
		return nil, err
	}
	return c.LeaseInterface.Get(ctx, name, opts)
}

func (c cuttable) List(ctx context.Context, opts metav1.ListOptions) (*coordinationv1.LeaseList, error) {
	if err := c.stall(ctx); err != nil {
		return nil, err
	}
	return c.LeaseInterface.List(ctx, opts)
}

func (c cuttable) Create(ctx context.Context, l *coordinationv1.Lease, opts metav1.CreateOptions) (*coordinationv1.Lease, error) {
	if err := c.stall(ctx); err != nil {
		return nil, err
	}
	return c.LeaseInterface.Create(ctx, l, opts)
}

func (c cuttable) Update(ctx context.Context, l *coordinationv1.Lease, opts metav1.UpdateOptions) (*coordinationv1.Lease, error) {
	if err := c.stall(ctx); err != nil {
		return nil, err
	}
	return c.LeaseInterface.Update(ctx, l, opts)
}

// A replica cut off from the API server while it holds buckets (its
// requests hang: the rebalancing's listing among them) gives them all up
// (Release) with a deadline before its member Lease can expire for the
// others, whenever in its cycle the cut comes: the rebalancing does not
// wait for the API server past that.
func TestCoordinatorGivesUpWhenCut(t *testing.T) {
	for _, cutAfter := range []time.Duration{3 * time.Second, 3300 * time.Millisecond, 3700 * time.Millisecond} {
		t.Run(cutAfter.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { testCoordinatorGivesUpWhenCut(t, cutAfter) })
		})
	}
}

func testCoordinatorGivesUpWhenCut(t *testing.T, cutAfter time.Duration) {
	const duration, interval = 4 * time.Second, time.Second
	var cut atomic.Bool
	var okAt atomic.Int64
	var mu sync.Mutex
	var released []int
	var releasedAt, deadline time.Time
	c, err := New(Config{
		Leases: cuttable{LeaseInterface: fake.NewClientset().CoordinationV1().Leases("ns"), cut: &cut, ok: &okAt},
		Group:  "g", Identity: "a", Buckets: 4, LeaseDuration: duration, RenewInterval: interval,
		Release: func(ctx context.Context, buckets []int) {
			mu.Lock()
			defer mu.Unlock()
			released = append(released, buckets...)
			releasedAt = time.Now()
			deadline, _ = ctx.Deadline()
		},
		Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go c.Run(ctx)
	time.Sleep(cutAfter)
	if got := c.Held(); len(got) != 4 {
		t.Fatalf("held %v before the cut, want all 4 buckets", got)
	}
	cut.Store(true)
	time.Sleep(2 * duration)
	mu.Lock()
	defer mu.Unlock()
	lastOK := time.Unix(0, okAt.Load())
	if len(released) != 4 || len(c.Held()) != 0 {
		t.Fatalf("released %v, still held %v, want all 4 given up", released, c.Held())
	}
	if at := releasedAt.Sub(lastOK); at > duration-interval {
		t.Errorf("gave up %s after the last answered request, want within %s", at, duration-interval)
	}
	if by := deadline.Sub(lastOK); deadline.IsZero() || by >= duration {
		t.Errorf("the give-up's deadline is %s after the last answered request, want before the Lease's %s", by, duration)
	}
}
