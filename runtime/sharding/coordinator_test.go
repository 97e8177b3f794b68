package sharding

import (
	"context"
	"errors"
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
// until their context ends or cut is cleared (then they are answered), as
// on a stalled or slow connection; ok is when the latest answered request
// began.
type cuttable struct {
	coordinationclient.LeaseInterface
	cut *atomic.Bool
	ok  *atomic.Int64 // unix nanoseconds
}

func (c cuttable) stall(ctx context.Context) error {
	began := time.Now().UnixNano()
	for c.cut.Load() {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
	for ok := c.ok.Load(); ok < began && !c.ok.CompareAndSwap(ok, began); ok = c.ok.Load() {
	}
	return nil
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

// cutCoordinator is a replica "a" of 4 buckets, Leases of 4 s renewed
// every second, whose Leases client is cut while cut is set (see
// cuttable; okAt: when the latest answered request began); it runs until
// the test ends.
func cutCoordinator(t *testing.T, cut *atomic.Bool, okAt *atomic.Int64, acquire, release func(context.Context, []int)) *Coordinator {
	t.Helper()
	c, err := New(Config{
		Leases: cuttable{LeaseInterface: fake.NewClientset().CoordinationV1().Leases("ns"), cut: cut, ok: okAt},
		Group:  "g", Identity: "a", Buckets: 4, LeaseDuration: 4 * time.Second, RenewInterval: time.Second,
		Acquire: acquire, Release: release,
		Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.Run(ctx)
	}()
	t.Cleanup(func() {
		cut.Store(false)
		cancel()
		<-done
	})
	return c
}

// A replica cut off from the API server while it holds buckets (its
// requests hang: the rebalancing's listing among them) gives them all up
// (Release) with a context that ends before its member Lease can expire
// for the others, whenever in its cycle the cut comes: the rebalancing
// does not wait for the API server past that.
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
	var releasedAt, ended time.Time
	var cause error
	c := cutCoordinator(t, &cut, &okAt, nil, func(ctx context.Context, buckets []int) {
		mu.Lock()
		released = append(released, buckets...)
		releasedAt = time.Now()
		mu.Unlock()
		<-ctx.Done() // a cycle that does not end by itself
		mu.Lock()
		ended, cause = time.Now(), context.Cause(ctx)
		mu.Unlock()
	})
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
	if by := ended.Sub(lastOK); ended.IsZero() || by >= duration || !errors.Is(cause, context.DeadlineExceeded) {
		t.Errorf("the give-up's context ended %s after the last answered request (%v), want a deadline before the Lease's %s", by, cause, duration)
	}
}

// A replica whose renewals are slow (they hang until the connection
// resumes) gives its buckets up; a renewal that lands while the cycles in
// progress run moves the end of the give-up's context on, as it moves the
// Lease's expiry, so that the cycles finish (their outcomes stored, not
// run again) and the buckets are claimed back at the next tick. One that
// never lands, or lands too late, ends the context half an interval
// before the Lease expires for the others: the cycles are abandoned.
func TestCoordinatorGiveUpFollowsRenewals(t *testing.T) {
	for _, tt := range []struct {
		name   string
		resume time.Duration // after the cut (3.5 s; the give-up: 5.5 s); 0: never
		lands  bool          // before the first deadline (6.5 s)
	}{
		{"renewal lands", 2200 * time.Millisecond, true},
		{"renewal lands just in time", 2900 * time.Millisecond, true},
		{"renewal lands too late", 3300 * time.Millisecond, false},
		{"renewal never lands", 0, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { testGiveUpFollowsRenewals(t, tt.resume, tt.lands) })
		})
	}
}

func testGiveUpFollowsRenewals(t *testing.T, resume time.Duration, lands bool) {
	const duration, interval, cycle = 4 * time.Second, time.Second, 2 * time.Second
	var cut atomic.Bool
	var okAt atomic.Int64
	var mu sync.Mutex
	var gaveUp, finished, ended time.Time
	var cause error
	acquired := 0
	c := cutCoordinator(t, &cut, &okAt, func(context.Context, []int) {
		mu.Lock()
		acquired++
		mu.Unlock()
	}, func(ctx context.Context, buckets []int) {
		mu.Lock()
		gaveUp = time.Now()
		mu.Unlock()
		select {
		case <-time.After(cycle): // the cycle in progress is done
			mu.Lock()
			finished = time.Now()
			mu.Unlock()
		case <-ctx.Done(): // abandoned
			mu.Lock()
			ended, cause = time.Now(), context.Cause(ctx)
			mu.Unlock()
		}
	})
	time.Sleep(3500 * time.Millisecond) // the last renewal began at 3 s
	cut.Store(true)
	lastOK := time.Unix(0, okAt.Load())
	if resume > 0 {
		time.Sleep(resume)
		cut.Store(false)
	}
	time.Sleep(3 * duration)
	mu.Lock()
	defer mu.Unlock()
	if gaveUp.IsZero() {
		t.Fatal("the buckets were not given up")
	}
	if lands {
		if !ended.IsZero() || finished.IsZero() {
			t.Errorf("the give-up's context ended %s after the give-up (%v), before its cycle of %s finished, although the renewal landed", ended.Sub(gaveUp), cause, cycle)
		}
		if held := c.Held(); acquired != 2 || len(held) != 4 {
			t.Errorf("acquired %d times, holding %v, want the 4 buckets claimed back", acquired, held)
		}
		return
	}
	if by := ended.Sub(lastOK); ended.IsZero() || by != duration-interval/2 || !errors.Is(cause, context.DeadlineExceeded) {
		t.Errorf("the give-up's context ended %s after the last renewal (%v), want %s, before its cycle finished", by, cause, duration-interval/2)
	}
}

// New requires a RenewInterval of at most a quarter of LeaseDuration
// (the defaults included), so that a renewal has an interval to land
// before the give-up starts.
func TestNewTiming(t *testing.T) {
	for _, tt := range []struct {
		duration, interval time.Duration
		ok                 bool
	}{
		{0, 0, true}, // 15 s and 2 s
		{4 * time.Second, time.Second, true},
		{8 * time.Second, time.Second, true},
		{3 * time.Second, time.Second, false},
		{0, 5 * time.Second, false}, // 15 s: a third
		{time.Second, 0, true},      // 133 ms
	} {
		_, err := New(Config{Leases: fake.NewClientset().CoordinationV1().Leases("ns"), Group: "g", LeaseDuration: tt.duration, RenewInterval: tt.interval})
		if (err == nil) != tt.ok {
			t.Errorf("New with %s and %s: %v, want ok: %v", tt.duration, tt.interval, err, tt.ok)
		}
	}
}
