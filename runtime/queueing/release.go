package queueing

import (
	"runtime/debug"
	"sync"
	"time"
)

// MemoryReleaser returns the memory freed after a burst of work to the OS
// once the operator has been idle for a while: no object of any resource
// in a worker's hands for the whole delay. The Go runtime's scavenger would return it too,
// but only gradually and only after the next garbage collection, which an
// idle operator does not trigger for minutes.
//
// It costs one garbage collection per busy → idle transition, and nothing
// while idle.
type MemoryReleaser struct {
	delay   time.Duration
	release func() // debug.FreeOSMemory; replaced in tests

	mu    sync.Mutex
	busy  map[*source]struct{} // the queues' Active
	timer *time.Timer
}

// source is one watched source of work.
type source struct{ workers func() int }

// NewMemoryReleaser makes a MemoryReleaser that waits delay; a nil
// *MemoryReleaser does nothing.
func NewMemoryReleaser(delay time.Duration) *MemoryReleaser {
	return &MemoryReleaser{delay: delay, release: debug.FreeOSMemory}
}

// Watch adds a source of work: a function returning its work in progress
// (Queue.Active). The source is watched until unwatch is called (when its
// queue has stopped: a cluster of a fleet disengaged, a resource's
// pipeline ended), so that a stopped queue is not kept.
func (r *MemoryReleaser) Watch(workers func() int) (unwatch func()) {
	if r == nil {
		return func() {}
	}
	src := &source{workers: workers}
	r.mu.Lock()
	if r.busy == nil {
		r.busy = map[*source]struct{}{}
	}
	r.busy[src] = struct{}{}
	r.mu.Unlock()
	return func() {
		r.mu.Lock()
		delete(r.busy, src)
		r.mu.Unlock()
	}
}

// Idle is called when one source has no work left: the release happens
// after the delay if every source is still idle then. Calls meanwhile
// restart the delay.
func (r *MemoryReleaser) Idle() {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.timer != nil {
		r.timer.Reset(r.delay) // cheap: called at the end of every busy spell
		return
	}
	r.timer = time.AfterFunc(r.delay, r.fire)
}

func (r *MemoryReleaser) fire() {
	r.mu.Lock()
	sources := make([]*source, 0, len(r.busy))
	for src := range r.busy {
		sources = append(sources, src)
	}
	r.mu.Unlock()
	for _, src := range sources {
		if src.workers() > 0 {
			return // busy again: its next Idle() re-arms the release
		}
	}
	r.release()
}

// Stop cancels a pending release.
func (r *MemoryReleaser) Stop() {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.timer != nil {
		r.timer.Stop()
		r.timer = nil
	}
}
