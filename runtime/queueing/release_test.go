package queueing

import (
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

func TestMemoryReleaser(t *testing.T) {
	tests := []struct {
		name     string
		workers  []int // live workers of each source when the delay ends
		idles    int   // idle() calls in a row
		releases int32
		// unwatched: the last sources of workers are unwatched (stopped
		// queues) before the idle calls.
		unwatched int
	}{
		{name: "all idle", workers: []int{0, 0}, idles: 1, releases: 1},
		{name: "repeated idle calls release once", workers: []int{0}, idles: 5, releases: 1},
		{name: "one source busy again", workers: []int{0, 3}, idles: 1, releases: 0},
		{name: "no idle call", workers: []int{0}, idles: 0, releases: 0},
		{name: "a busy source unwatched", workers: []int{0, 3}, unwatched: 1, idles: 1, releases: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var released atomic.Int32
				r := NewMemoryReleaser(20 * time.Millisecond)
				r.release = func() { released.Add(1) }
				t.Cleanup(r.Stop)
				var unwatch []func()
				for _, n := range tt.workers {
					unwatch = append(unwatch, r.Watch(func() int { return n }))
				}
				for _, u := range unwatch[len(unwatch)-tt.unwatched:] {
					u()
				}
				for range tt.idles {
					r.Idle()
				}
				time.Sleep(200 * time.Millisecond) // well past the delay, in the bubble's time
				synctest.Wait()                    // the timer's function has returned
				if got := released.Load(); got != tt.releases {
					t.Errorf("released %d times, want %d", got, tt.releases)
				}
			})
		})
	}
}

func TestMemoryReleaserStop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var released atomic.Int32
		r := NewMemoryReleaser(50 * time.Millisecond)
		r.release = func() { released.Add(1) }
		r.Watch(func() int { return 0 })
		r.Idle()
		r.Stop()
		time.Sleep(150 * time.Millisecond) // well past the delay, in the bubble's time
		synctest.Wait()
		if released.Load() != 0 {
			t.Error("released after stop")
		}
	})
}

func TestNilMemoryReleaser(t *testing.T) {
	var r *MemoryReleaser // disabled: every method is a no-op
	r.Watch(func() int { return 0 })()
	r.Idle()
	r.Stop()
}
