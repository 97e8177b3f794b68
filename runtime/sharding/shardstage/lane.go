package shardstage

import (
	"context"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/kopf-go/kopf/runtime/body"
	"github.com/kopf-go/kopf/runtime/queueing"
	"github.com/kopf-go/kopf/runtime/resources"
	"github.com/kopf-go/kopf/runtime/scope"
	"github.com/kopf-go/kopf/runtime/sharding"
	"github.com/kopf-go/kopf/runtime/watching"
)

// Lane is one served resource under sharding. Its hooks are Admit (watch
// side) and Process (worker side); its Writer is the reactor's Patcher.
type Lane struct {
	s          *Stage
	res        resources.Resource
	client     dynamic.NamespaceableResourceInterface
	writer     *sharding.Writer
	namespaces []string
	matches    func(namespace string) bool
	next       func(watching.Event) // set once by Admit

	// Under s.mu: the owned objects' buckets by key (for the stubs of
	// vanished objects, which have no uid); while gained buckets are being
	// listed, those buckets and the keys delivered since the listing began
	// (so that an older listed version never overtakes them); the objects
	// being processed.
	keys     map[string]int
	catching int
	gaining  map[int]bool
	since    map[string]bool
	inflight map[string]*flight

	// The label and server modes (watches.go, onewatch.go, labeller.go):
	// the watches of the buckets held, and the labeller's objects to
	// label. Under s.mu: running (the server mode's watch per bucket);
	// sets (the label mode's watches over the set held, oldest first:
	// more than one while the newest lists), fresh (the buckets gained
	// whose objects no watch has listed yet) and seen (the keys listed
	// or deleted since the newest of sets started), versions (the last
	// resourceVersion admitted of each key, the label mode only), gone
	// (the keys deleted while more than one watch of sets ran, with the
	// number of the newest then: their deletion's version stays in
	// versions until every watch that may still bring it has stopped)
	// and started (the watches of sets started so far).
	watch    WatchFunc
	watchOn  context.Context
	running  map[int]*bucketWatch
	sets     []*setWatch
	fresh    map[int]bool
	seen     map[string]bool
	versions map[string]string
	gone     map[string]uint64
	started  uint64
	// listings holds a slot per bucket watch in its first listing.
	listings chan struct{}
	labels   *labeller // nil unless in the label mode
}

// flight is one object's processing in progress.
type flight struct {
	bucket int
	cancel context.CancelFunc
	ev     watching.Event
}

// Lane makes the lane of a served resource: client lists its objects when
// buckets are gained (in the namespaces of sc, as its watchers do) and
// reads them for the fence; patcher sends its writes unfenced (the
// reactor's default Patcher), which Writer fences. The lane takes part in
// Gain and Lose once Admit has given it its way into the queue.
func (s *Stage) Lane(res resources.Resource, client dynamic.NamespaceableResourceInterface, sc scope.Scope, patcher sharding.Patcher) *Lane {
	gr := schema.GroupResource{Group: res.Group, Resource: res.Plural}
	l := &Lane{
		s: s, res: res, client: client,
		writer: s.fence.Writer(gr, patcher, sharding.DynamicGetter{Client: client}),
		keys:   map[string]int{}, inflight: map[string]*flight{},
		running: map[int]*bucketWatch{}, fresh: map[int]bool{}, versions: map[string]string{}, gone: map[string]uint64{}, listings: make(chan struct{}, listingsAtOnce),
	}
	namespaces, exact := sc.ExactNamespaces()
	l.matches = func(string) bool { return true }
	if !res.Namespaced || !exact {
		namespaces = []string{""}
		if res.Namespaced && !sc.Clusterwide() {
			l.matches = sc.Matches
		}
	}
	l.namespaces = namespaces
	return l
}

// Writer is the fenced Patcher of the lane's objects: the reactor's
// writes go through it (see sharding.Fence).
func (l *Lane) Writer() *sharding.Writer { return l.writer }

// Admit is the watch-side hook: it returns the watch callback that passes
// the events of owned objects on to next (the queue), and keeps the
// fence's knowledge of their stamps current. next is also where the
// lane queues the objects of gained buckets and wakes those of lost
// ones. Call it once, when the queue is made.
func (l *Lane) Admit(next func(watching.Event)) func(watching.Event) {
	l.s.mu.Lock()
	l.next = next
	l.s.lanes = append(l.s.lanes, l)
	l.s.mu.Unlock()
	return l.admit
}

// admit passes an event on if its object is in an owned bucket. In the
// label mode, an object whose bucket label is wrong is labelled anew
// (by whichever replica's watch sees it under the wrong bucket).
func (l *Lane) admit(ev watching.Event) {
	s := l.s
	s.mu.Lock()
	b, ok := l.bucketLocked(ev)
	if ok && l.labels != nil && ev.Type != watching.Deleted && !ev.Wakeup {
		l.labels.check(ev, b)
	}
	if !ok || !s.owned[b] {
		busy := l.inflight[ev.Key] != nil
		s.mu.Unlock()
		if busy {
			// The object's cycle in progress may be waiting for its own
			// patch to come back: it gets it, and returns as a newer
			// event is pending, which is then skipped (see Process).
			l.next(ev)
		}
		return
	}
	ev, fresh := l.rewatchedLocked(ev, b)
	if !fresh {
		s.mu.Unlock()
		return // a version not newer than one admitted (the label mode)
	}
	if ev.Type != watching.Deleted {
		l.keys[ev.Key] = b // forgotten once the deletion is processed
	}
	if l.catching > 0 {
		if l.gaining[b] && !l.since[ev.Key] && ev.Type != watching.Deleted && !ev.Wakeup {
			// The first sight of an object of a gained bucket, which the
			// listing then skips: it carries the listing's mark instead,
			// so that the object is resumed here as after a start.
			ev.Initial = true
		}
		l.since[ev.Key] = true
	}
	s.mu.Unlock()
	ns, name := splitKey(ev.Key)
	if ev.Type == watching.Deleted {
		l.writer.Forget(ns, name)
	} else if !ev.Wakeup {
		meta := body.Body(ev.Object).Meta()
		l.writer.Observe(ns, name, meta.ResourceVersion(), stampOf(meta, s.fence.Key()))
	}
	l.next(ev)
}

// bucketLocked is the bucket of an event's object (Stage.bucket), or for
// the stub of a vanished object in the modes that hash the uid, as
// remembered; false if unknown.
func (l *Lane) bucketLocked(ev watching.Event) (int, bool) {
	if b, ok := l.s.bucket(ev.Key, body.Body(ev.Object).Meta().UID()); ok {
		return b, true
	}
	b, ok := l.keys[ev.Key]
	return b, ok
}

// Process is the worker-side hook: it wraps the reactor's processing. An
// object no longer owned is skipped; an owned one is stamped first if it
// is not yet (see sharding.Fence); its processing is tracked so that a
// hand-off waits for it (or abandons it by cancelling its context).
func (l *Lane) Process(next queueing.Processor) queueing.Processor {
	return func(ctx context.Context, ev watching.Event, st *queueing.Stream) {
		ctx, done, ok := l.start(ctx, ev)
		if !ok {
			return // another replica handles it now
		}
		defer done()
		meta := body.Body(ev.Object).Meta()
		if ev.Type != watching.Deleted && !ev.Wakeup && meta.UID() != "" && stampOf(meta, l.s.fence.Key()) != l.s.cfg.Identity {
			if !l.stamp(ctx, ev, st) {
				return
			}
		}
		next(ctx, ev, st)
	}
}

// start tracks an owned object's processing; false if it is not owned.
// done ends the tracking.
func (l *Lane) start(ctx context.Context, ev watching.Event) (_ context.Context, done func(), ok bool) {
	s := l.s
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := l.bucketLocked(ev)
	if !ok || !s.owned[b] {
		return ctx, nil, false
	}
	ctx, cancel := context.WithCancel(ctx)
	l.inflight[ev.Key] = &flight{bucket: b, cancel: cancel, ev: ev}
	return ctx, func() {
		s.mu.Lock()
		delete(l.inflight, ev.Key)
		if ev.Type == watching.Deleted {
			delete(l.keys, ev.Key)
		}
		s.mu.Unlock()
		cancel()
	}, true
}

// stamp takes the object over (see sharding.Writer.Stamp) and tells the
// stream to expect the stamped version. False: the object is not to be
// processed now (it is gone, or the stamp failed and is retried in a
// second: the event is requeued).
func (l *Lane) stamp(ctx context.Context, ev watching.Event, st *queueing.Stream) bool {
	s := l.s
	sctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	ns, name := splitKey(ev.Key)
	rv, err := l.writer.Stamp(sctx, ns, name)
	switch {
	case apierrors.IsNotFound(err):
		return false // gone: its deletion comes next
	case err != nil:
		s.cfg.Logger.Warn(fmt.Sprintf("Sharding: %s could not be stamped as owned by %s; retrying in 1 second: %v", ev.Key, s.cfg.Identity, err))
		st.Requeue(ev, time.Second) // unless a newer event comes first
		return false
	}
	st.Expect(rv)
	return true
}

// catchUp lists the lane's objects and queues those of the buckets.
func (l *Lane) catchUp(ctx context.Context, buckets map[int]bool) int {
	n := 0
	for _, ns := range l.namespaces {
		ri := dynamic.ResourceInterface(l.client)
		if l.res.Namespaced && ns != "" {
			ri = l.client.Namespace(ns)
		}
		opts := metav1.ListOptions{Limit: 500}
		for {
			list, err := ri.List(ctx, opts)
			if err != nil {
				l.s.cfg.Logger.Error(fmt.Sprintf("Sharding: the objects of %s could not be listed for the buckets gained; they are handled at their next change: %v", l.res, err))
				break
			}
			for i := range list.Items {
				if l.queueListed(body.Body(list.Items[i].Object), buckets) {
					n++
				}
			}
			if opts.Continue = list.GetContinue(); opts.Continue == "" {
				break
			}
		}
	}
	return n
}

// queueListed queues a listed object if it is in the buckets and the
// lane's namespaces, and no event of it was admitted since the listing
// began. One that the watch admits between this check and the queueing
// is not overtaken either if it is newer: the queue keeps the higher
// resourceVersion of an object's pending events (queueing.Stream).
func (l *Lane) queueListed(b body.Body, buckets map[int]bool) bool {
	meta := b.Meta()
	key := sharding.ObjectKey(meta.Namespace(), meta.Name())
	if bucket, ok := l.s.bucket(key, meta.UID()); !ok || !buckets[bucket] || !l.matches(meta.Namespace()) {
		return false
	}
	delete(meta, "managedFields")
	l.s.mu.Lock()
	seen := l.since[key]
	l.s.mu.Unlock()
	if seen {
		return false
	}
	l.admit(watching.Event{Type: watching.Listed, Key: key, Object: b, Initial: true})
	return true
}

func stampOf(meta body.Meta, key string) string {
	a, _ := meta["annotations"].(map[string]any)
	v, _ := a[key].(string)
	return v
}

// splitKey splits an object's key ("namespace/name", or "name" if
// cluster-scoped).
func splitKey(key string) (namespace, name string) {
	if ns, name, found := strings.Cut(key, "/"); found {
		return ns, name
	}
	return "", key
}
