package shardstage

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/kopf-go/kopf/runtime/sharding"
)

// WatchFunc runs the watches of a set of buckets' objects of a lane: in
// each of the lane's namespaces, with the set's selector, their events
// passed to the callback that Admit returned, until ctx is done. In the
// label mode, the set is the buckets held ("key in (buckets)", one watch
// per namespace for them all: onewatch.go); in the server mode, one
// bucket (its shardSelector), each bucket held watched apart. It calls
// listed once, when every one of them has delivered its first listing.
// It returns when ctx is done and the watches have stopped; a watch
// stopped delivers nothing more, and no deletion of the objects it knew.
type WatchFunc func(ctx context.Context, buckets []int, listed func())

// listingsAtOnce bounds how many of a lane's bucket watches (the server
// mode's, one per bucket) are in their first listing at once; the others
// wait for a slot before they start.
// Each listing is a pass of the API server over every object of the
// resource in the namespace, to select the bucket's: the buckets gained at
// once (64 at a first start) are as many passes, better done a few at a
// time, each quickly, than all at once, each slowed by the others while
// the objects already listed are being stamped. (As watch-lists, such
// slow listings were closed by the API server and started again: see
// watching.Watcher.Lists, and bench/RESULTS.md.)
const listingsAtOnce = 4

// listingTimeout bounds how long Gain waits for the first listings of the
// gained buckets' watches; the watches go on (and deliver) past it.
const listingTimeout = time.Minute

// bucketWatch is the watch of one bucket held.
type bucketWatch struct {
	cancel context.CancelFunc
	listed chan struct{} // closed by the watch's first listing
	done   chan struct{} // closed when the watch has stopped
}

// WatchBuckets makes the lane watch only the buckets held: in the label
// mode, one watch (per namespace) over the set held, replaced by Gain and
// Lose (onewatch.go); in the server mode, one watch (per namespace) per
// bucket, started by Gain and stopped by Lose: a bucket
// lost takes its objects away without any event, a bucket gained brings
// them as a first listing. ctx bounds the watches' lives (the operator's
// run). In the label mode it also starts the labeller (labeller.go), fed
// by Unlabelled. Call it once, after Admit; the buckets already held are
// watched at once. Without it, the lane is in the filter mode (every
// object watched, Gain lists).
func (l *Lane) WatchBuckets(ctx context.Context, watch WatchFunc) {
	var held []int
	l.s.mu.Lock()
	l.watchOn, l.watch = ctx, watch
	if l.s.cfg.Mode == sharding.ModeLabel {
		l.labels = newLabeller(l)
		go l.labels.run(ctx)
	}
	for b, owned := range l.s.owned {
		if owned {
			held = append(held, b)
			l.fresh[b] = true
		}
	}
	if l.bySet() {
		if len(held) > 0 {
			l.rewatchLocked()
		}
		l.s.mu.Unlock()
		return
	}
	l.s.mu.Unlock()
	if len(held) > 0 {
		go l.startWatches(ctx, held)
	}
}

// startWatches starts the watches of the buckets not yet watched, awaits
// their first listings (while ctx lasts, up to listingTimeout), labels
// the objects of those buckets seen unlabelled, and returns how many of
// the buckets' objects the lane knows then.
func (l *Lane) startWatches(ctx context.Context, buckets []int) int {
	if l.bySet() {
		return l.gainSet(ctx, buckets)
	}
	var started []*bucketWatch
	l.s.mu.Lock()
	for _, b := range buckets {
		if l.running[b] != nil || !l.s.owned[b] {
			continue // watched already, or lost meanwhile
		}
		wctx, cancel := context.WithCancel(l.watchOn)
		bw := &bucketWatch{cancel: cancel, listed: make(chan struct{}), done: make(chan struct{})}
		l.running[b] = bw
		started = append(started, bw)
		go l.runWatch(wctx, b, bw)
	}
	l.s.mu.Unlock()
	if l.labels != nil {
		l.labels.gained(buckets)
	}
	ends := make([]watchEnds, len(started))
	for i, bw := range started {
		ends[i] = watchEnds{bw.listed, bw.done}
	}
	l.awaitListed(ctx, ends...)
	return l.known(buckets)
}

// watchEnds are a watch's two ends for Gain: its first listing, its stop.
type watchEnds struct{ listed, done <-chan struct{} }

// awaitListed waits until every watch has listed (or stopped), while ctx
// lasts and up to listingTimeout; past it, it warns, and the watches
// deliver their objects when they list.
func (l *Lane) awaitListed(ctx context.Context, watches ...watchEnds) {
	timeout := time.NewTimer(listingTimeout)
	defer timeout.Stop()
	for _, w := range watches {
		select {
		case <-w.listed:
		case <-w.done:
		case <-ctx.Done():
			return
		case <-timeout.C:
			l.s.cfg.Logger.Warn(fmt.Sprintf("Sharding: the watches of the buckets gained of %s have not listed their objects in %s seconds; they deliver them when they do.", l.res, seconds(listingTimeout)))
			return
		}
	}
}

// runWatch runs the watch of bucket b once a slot of its first listing is
// free (listingsAtOnce); the slot is freed when it has listed, or has
// stopped without.
func (l *Lane) runWatch(ctx context.Context, b int, bw *bucketWatch) {
	defer close(bw.done)
	select {
	case l.listings <- struct{}{}:
	case <-ctx.Done():
		return
	}
	var once sync.Once
	free := func() { <-l.listings }
	defer once.Do(free)
	l.watch(ctx, []int{b}, func() {
		once.Do(func() {
			free()
			close(bw.listed)
		})
	})
}

// known counts the objects of the buckets that the lane knows.
func (l *Lane) known(buckets []int) int {
	set := map[int]bool{}
	for _, b := range buckets {
		set[b] = true
	}
	l.s.mu.Lock()
	defer l.s.mu.Unlock()
	n := 0
	for _, b := range l.keys {
		if set[b] {
			n++
		}
	}
	return n
}

// stopWatches stops the watches of the buckets in every lane, and returns
// once they have stopped: no event of the buckets comes after. A lane
// that watches by set (the label mode) has its watch replaced by one over
// the smaller set, which Lose does not await: the lane's filter drops the
// lost buckets' events meanwhile.
func (s *Stage) stopWatches(set map[int]bool) {
	var stopped []*bucketWatch
	var sets []*Lane
	s.mu.Lock()
	for _, l := range s.lanes {
		if l.bySet() {
			sets = append(sets, l)
			continue
		}
		for b := range set {
			if bw := l.running[b]; bw != nil {
				bw.cancel()
				stopped = append(stopped, bw)
				delete(l.running, b)
			}
		}
	}
	s.mu.Unlock()
	for _, l := range sets {
		l.loseSet(set)
	}
	for _, bw := range stopped {
		<-bw.done
	}
}
