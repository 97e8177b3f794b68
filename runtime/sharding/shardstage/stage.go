// Package shardstage is the sharding stage of an operator's pipeline
// (watcher → shard stage → queue → reactor): it admits only the events of
// the objects in the buckets this replica owns, and it starts and stops
// the objects' work as buckets are gained and lost (package sharding's
// Coordinator decides which; docs/sharding.md).
//
// A Stage is the replica's share of the objects; a Lane is one served
// resource under it, with two hooks into the pipeline:
//
//   - Admit, on the watch side: wraps the way into the queue (the next
//     stage), and lets through the events of owned objects only;
//   - Process, on the worker side: wraps the reactor's processing, skips
//     an object no longer owned, stamps an owned one first (see
//     sharding.Fence), and tracks its processing so that a hand-off waits
//     for it;
//
// and one seam into the reactor: Writer, the fenced Patcher of the
// resource's objects, through which the reactor's writes go.
//
// Gain and Lose are the Coordinator's Acquire and Release: Gain lists the
// gained buckets' objects and queues them (as a first listing after a
// start); Lose returns once the lost buckets' objects are no longer
// processed here and their daemons and timers are stopped, or after the
// hand-off timeout, having abandoned them.
//
// In the label and server modes (sharding.Mode), a lane whose resource is
// watched by bucket (Lane.WatchBuckets) receives only the buckets held,
// from watches of its own; Gain awaits their first listings instead of
// listing (Initial mark included).
//
// In the label mode, the lane runs ONE watch (per namespace) over the set
// of buckets held, "key in (b1,b2,...)" (onewatch.go): the API server's
// watch cache gives every write of the resource to each of its watchers'
// buffers, so that a watch per bucket multiplied that work by the buckets
// held, and closed the bucket watches that fell behind (bench/RESULTS.md).
// The watch is replaced when the set changes:
//
//   - Gain starts a watch over the new set, awaits its first listing, and
//     the watch it replaces is then stopped. That listing delivers the
//     buckets held before too: only the gained buckets' objects keep the
//     first-listing mark; the others come as listed if changed (a version
//     already admitted is dropped, as the watcher drops it from its own
//     relistings: the lane keeps each object's last resourceVersion,
//     a few dozen bytes, as the watcher does). While both
//     watches run, an object's events may come twice: the lane drops a
//     version not newer than the last admitted (a deletion's too, kept
//     until the watches that ran at the deletion have stopped: the new
//     one replays the changes since its listing's snapshot), and the
//     queue keeps the newer resourceVersion (queueing.Stream). A watch
//     stopped delivers nothing more, and no deletion of the objects it
//     knew; so that a deletion still on its way in it is not lost, the
//     objects known of the buckets held before that the new listing
//     neither listed nor saw deleted are delivered as deleted stubs,
//     which the reactor reads again (Reactor.Selects): gone, a deletion;
//     there, a change.
//   - Lose starts a watch over the smaller set without awaiting it: the
//     hand-off does not need it, as the lane's filter drops the lost
//     buckets' events from the disowning on (as in the filter mode); it is
//     started at once rather than at the next Gain so that a replica that
//     only loses buckets (the group grows) does not keep receiving them.
//     With no bucket left, the watch is stopped.
//
// A replacement costs a listing of the buckets held (one pass of the API
// server over the resource, as one bucket's did) rather than of the
// gained ones only. In the server mode, each bucket held has a watch of
// its own (KEP-5866's shardSelector of its hash range), started by Gain
// and stopped by Lose (watches.go); sharding.ShardSelector could express
// the set held as one selector (a union of ranges, adjacent buckets
// merged), not done yet. In the label mode the lane also labels the
// objects without their bucket label, or with a wrong one (Lane.Unlabelled
// and the labeller, labeller.go), and an object's bucket is that of its
// key (sharding.KeyBucket) rather than of its uid, in Admit's filter, in
// Process, in Gain's listing and in Lose's stopping of daemons alike.
package shardstage

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/kopf-go/kopf/runtime/daemons"
	"github.com/kopf-go/kopf/runtime/sharding"
)

// Config is a Stage's.
type Config struct {
	// Identity is this replica's, unique in its group: the value of the
	// fence's stamp.
	Identity string
	// Buckets is the number of buckets (see sharding.Bucket).
	Buckets int
	// Mode is how the replica receives its buckets' objects (see
	// sharding.Mode; "" is sharding.ModeFilter). In the label mode, an
	// object's bucket is by its key (sharding.KeyBucket), else by its
	// uid; the lanes with watches of their own (Lane.WatchBuckets) start
	// and stop them with the buckets.
	Mode sharding.Mode
	// HandoffTimeout bounds how long Lose waits for the lost objects'
	// cycles in progress and daemons before abandoning them.
	HandoffTimeout time.Duration
	Logger         *slog.Logger
}

// Stage is a replica's share of the objects: which buckets it owns, and
// the resources (Lanes) whose objects it admits accordingly. It owns no
// bucket until Gain.
type Stage struct {
	// Daemons, if set before the first Lose, is the engine whose daemons
	// and timers of the lost objects Lose stops.
	Daemons *daemons.Engine

	cfg   Config
	fence *sharding.Fence

	mu    sync.Mutex
	owned []bool
	lanes []*Lane
}

// New returns a Stage that owns no bucket yet.
func New(cfg Config) *Stage {
	return &Stage{cfg: cfg, fence: &sharding.Fence{Identity: cfg.Identity}, owned: make([]bool, cfg.Buckets)}
}

// Gain starts the objects of the buckets just claimed: they are admitted
// from now on, and the objects already there are delivered (as the first
// listing after a start: resuming handlers see them so): listed from the
// API server and queued, or, for a lane that watches its buckets
// (Lane.WatchBuckets), by the first listing of each gained bucket's
// watch, which Gain awaits (while ctx lasts). An object whose watch
// event is admitted while its bucket is listed is not queued from the
// listing (an older version must not overtake it): that first event
// carries the listing's mark (watching.Event.Initial) instead.
func (s *Stage) Gain(ctx context.Context, buckets []int) {
	start := time.Now()
	set := map[int]bool{}
	s.mu.Lock()
	for _, b := range buckets {
		s.owned[b] = true
		set[b] = true
	}
	var lanes, watching []*Lane
	for _, l := range s.lanes {
		if l.watch != nil {
			watching = append(watching, l)
			continue
		}
		lanes = append(lanes, l)
		if l.catching == 0 {
			l.since, l.gaining = map[string]bool{}, map[int]bool{}
		}
		for b := range set {
			l.gaining[b] = true
		}
		l.catching++
	}
	s.mu.Unlock()
	n := 0
	for _, l := range watching {
		n += l.startWatches(ctx, buckets)
	}
	for _, l := range lanes {
		n += l.catchUp(ctx, set)
		s.mu.Lock()
		l.catching--
		if l.catching == 0 {
			l.since, l.gaining = nil, nil
		}
		s.mu.Unlock()
	}
	s.cfg.Logger.Info(fmt.Sprintf("Sharding: started %d buckets with %d objects in %s seconds.", len(buckets), n, seconds(time.Since(start))))
}

// bucket is an object's bucket by its key and uid: in the label mode by
// its key (sharding.KeyBucket), else by its uid (false if it has none:
// the stub of a vanished object).
func (s *Stage) bucket(key, uid string) (int, bool) {
	if s.cfg.Mode == sharding.ModeLabel {
		return sharding.KeyBucket(key, len(s.owned)), true
	}
	if uid == "" {
		return 0, false
	}
	return sharding.Bucket(uid, len(s.owned)), true
}

func seconds(d time.Duration) string {
	return fmt.Sprintf("%g", d.Seconds())
}
