package shardstage

import (
	"context"
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/util/resourceversion"

	"github.com/kopf-go/kopf/runtime/body"
	"github.com/kopf-go/kopf/runtime/sharding"
	"github.com/kopf-go/kopf/runtime/watching"
)

// setWatch is a watch (one per namespace) of a lane over a set of buckets,
// in the label mode: the selector "key in (buckets)".
type setWatch struct {
	number  uint64 // of the lane's watches of sets, from 1
	buckets []int  // ascending
	fresh   []int  // the gained buckets that it is the first to list
	cancel  context.CancelFunc
	listed  chan struct{} // closed by the watch's first listing
	done    chan struct{} // closed when the watch has stopped
}

// bySet says whether the lane watches its buckets with one watch over
// the set held (the label mode), rather than one per bucket.
func (l *Lane) bySet() bool {
	return l.watch != nil && l.s.cfg.Mode == sharding.ModeLabel
}

// gainSet is Gain for a lane that watches by set: it replaces the lane's
// watch with one over the buckets held now, the gained ones included,
// awaits its first listing (while ctx lasts, up to listingTimeout), and
// returns how many of the gained buckets' objects the lane knows then.
func (l *Lane) gainSet(ctx context.Context, buckets []int) int {
	l.s.mu.Lock()
	for _, b := range buckets {
		if l.s.owned[b] {
			l.fresh[b] = true
		}
	}
	w := l.rewatchLocked()
	l.s.mu.Unlock()
	if l.labels != nil {
		l.labels.gained(buckets)
	}
	if w == nil {
		return 0
	}
	l.awaitListed(ctx, watchEnds{w.listed, w.done})
	return l.known(buckets)
}

// loseSet is Lose for a lane that watches by set: the lost buckets are no
// longer fresh, and a watch over the smaller set replaces the lane's,
// without waiting for it (see the package doc).
func (l *Lane) loseSet(set map[int]bool) {
	l.s.mu.Lock()
	defer l.s.mu.Unlock()
	for b := range set {
		delete(l.fresh, b)
	}
	l.rewatchLocked()
}

// rewatchLocked starts a watch over the buckets held now, unless the
// newest watch is over them already, and returns the watch that will
// deliver them (nil if none is held: every watch is then stopped). The
// older watches run until it has listed (setListed). s.mu is held.
func (l *Lane) rewatchLocked() *setWatch {
	var held []int
	for b, owned := range l.s.owned {
		if owned {
			held = append(held, b)
		}
	}
	if n := len(l.sets); n > 0 && slices.Equal(l.sets[n-1].buckets, held) {
		return l.sets[n-1]
	}
	if len(held) == 0 {
		for _, w := range l.sets {
			w.cancel() // their events are of buckets not owned: dropped
		}
		l.sets, l.seen = nil, nil
		l.forgetGoneLocked()
		return nil
	}
	ctx, cancel := context.WithCancel(l.watchOn)
	l.started++
	w := &setWatch{number: l.started, buckets: held, cancel: cancel, listed: make(chan struct{}), done: make(chan struct{})}
	for _, b := range held {
		if l.fresh[b] {
			w.fresh = append(w.fresh, b)
		}
	}
	l.sets = append(l.sets, w)
	l.seen = map[string]bool{}
	go l.runSet(ctx, w)
	return w
}

// runSet runs a watch over a set until ctx is done.
func (l *Lane) runSet(ctx context.Context, w *setWatch) {
	defer close(w.done)
	var once sync.Once
	l.watch(ctx, w.buckets, func() {
		once.Do(func() {
			l.s.mu.Lock()
			for _, b := range w.fresh {
				delete(l.fresh, b) // before Gain returns: a next watch's are its own
			}
			l.s.mu.Unlock()
			close(w.listed)
			go l.setListed(w)
		})
	})
}

// setListed follows the first listing of a watch over a set (whose fresh
// buckets are then fresh no more: runSet): the older watches are stopped,
// and, if it is
// the newest, the objects that the lane knows in the buckets it took over
// from them, but that it has neither listed nor seen deleted, are
// delivered as deleted (stubs): their deletion may have been on its way
// in a stopped watch. An object that exists yet (created after the
// listing began) is read again by the reactor, as after it left the
// selector (reactor.Reactor.Selects), and handled as a change.
func (l *Lane) setListed(w *setWatch) {
	s := l.s
	s.mu.Lock()
	i := slices.Index(l.sets, w)
	if i < 0 {
		s.mu.Unlock()
		return // stopped meanwhile: no bucket held
	}
	older := l.sets[:i]
	l.sets = slices.Clone(l.sets[i:])
	for _, o := range older {
		o.cancel()
	}
	s.mu.Unlock()
	for _, o := range older {
		<-o.done
	}
	s.mu.Lock()
	l.forgetGoneLocked()
	s.mu.Unlock()
	unseen := l.unseen(w)
	if len(older) == 0 {
		return // the first watch: it took over from none
	}
	for _, key := range unseen {
		ns, name := splitKey(key)
		meta := map[string]any{"name": name}
		if ns != "" {
			meta["namespace"] = ns
		}
		l.admit(watching.Event{Type: watching.Deleted, Key: key, Object: body.Body{"metadata": meta}})
	}
}

// unseen ends the record of the keys seen since w started, if w is the
// newest watch, and returns the keys that the lane knows in w's buckets
// but its fresh ones, and that were neither listed nor deleted since.
func (l *Lane) unseen(w *setWatch) []string {
	s := l.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(l.sets) == 0 || l.sets[len(l.sets)-1] != w || l.seen == nil {
		return nil // a newer watch lists: it does this when it has listed
	}
	var keys []string
	for key, b := range l.keys {
		if !l.seen[key] && s.owned[b] && slices.Contains(w.buckets, b) && !slices.Contains(w.fresh, b) {
			keys = append(keys, key)
		}
	}
	l.seen = nil
	return keys
}

// rewatchedLocked is admit's step for a lane that watches by set (else
// the event as is): the first-listing mark is kept for the objects of the
// fresh buckets only (a watch over a set lists the buckets held before
// too, which are no first listing); a version of an object not newer than
// the last admitted is dropped (false): listed again by the watch that
// replaces another (as the watcher drops it from its own relistings), or
// late from the watch replaced, which may lag behind. The keys listed or
// deleted are recorded for setListed, and a deleted one is forgotten at
// once (its bucket is by its key: a stub needs none remembered), so that
// setListed adds no stub of a deletion admitted already; but while more
// than one watch runs, the deletion's version is kept (gone) until they
// have all stopped, so that their late copies of the object (being
// deleted, or deleted) are dropped, not handled again. Either may be the
// late one: the replaced watch lags, or the new one, which replays the
// changes since its listing's snapshot, taken when it started. s.mu is
// held; b is the event's owned bucket.
func (l *Lane) rewatchedLocked(ev watching.Event, b int) (watching.Event, bool) {
	if !l.bySet() || ev.Wakeup {
		return ev, true
	}
	if l.seen != nil && (ev.Type == watching.Listed || ev.Type == watching.Deleted) {
		l.seen[ev.Key] = true
	}
	rv := body.Body(ev.Object).Meta().ResourceVersion()
	if last, ok := l.versions[ev.Key]; ok && rv != "" && !newerVersion(rv, last) {
		return ev, false
	}
	if ev.Type == watching.Deleted {
		delete(l.keys, ev.Key) // its deletion on its way: no stub of it
		if n := len(l.sets); n > 1 && rv != "" {
			l.versions[ev.Key], l.gone[ev.Key] = rv, l.sets[n-1].number
		} else {
			delete(l.versions, ev.Key)
		}
		return ev, true
	}
	delete(l.gone, ev.Key) // created again
	if ev.Initial && !l.fresh[b] {
		ev.Initial = false
	}
	if rv != "" {
		l.versions[ev.Key] = rv
	}
	return ev, true
}

// forgetGoneLocked forgets the versions of the keys deleted while more
// than one watch ran, once every watch started by then has stopped: the
// watches started after a deletion was admitted list after it, and
// bring nothing older. Until the next replacement, the deletions admitted
// during the last one are remembered. s.mu is held.
func (l *Lane) forgetGoneLocked() {
	for key, newest := range l.gone {
		if len(l.sets) == 0 || l.sets[0].number > newest {
			delete(l.versions, key)
			delete(l.gone, key)
		}
	}
}

// newerVersion says whether resourceVersion a is later than b, compared
// as the queue's streams and the fence compare them; when either is not
// well formed, a is taken as the newer (the latest seen wins).
func newerVersion(a, b string) bool {
	c, err := resourceversion.CompareResourceVersion(a, b)
	return err != nil || c > 0
}
