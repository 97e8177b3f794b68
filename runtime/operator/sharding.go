package operator

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	coordinationclient "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/rest"

	"github.com/kopf-go/kopf/runtime/body"
	"github.com/kopf-go/kopf/runtime/daemons"
	"github.com/kopf-go/kopf/runtime/kwargs"
	"github.com/kopf-go/kopf/runtime/leases"
	"github.com/kopf-go/kopf/runtime/queueing"
	"github.com/kopf-go/kopf/runtime/resources"
	"github.com/kopf-go/kopf/runtime/scope"
	"github.com/kopf-go/kopf/runtime/sharding"
	"github.com/kopf-go/kopf/runtime/watching"
)

// Sharding says how the replicas of one operator split its objects among
// them (package sharding; docs/sharding.md). Options.Sharding nil: this
// replica handles every object it serves. The zero values are defaults.
type Sharding struct {
	// Buckets is the number of buckets the objects are hashed into
	// (default sharding.DefaultBuckets, 64); every replica must use the
	// same. More replicas than buckets leave some idle.
	Buckets int
	// Group names the replicas that share the objects; their Leases are
	// named after it. Default: "kopf-sharding", or the peering name
	// (-P) if one is given.
	Group string
	// Namespace is where the Leases are: default $POD_NAMESPACE, else
	// "default".
	Namespace string
	// Identity is this replica's, unique in the group: default the
	// peering identity (Settings.Peering.Identity), else Kopf's
	// detect_own_id (leases.DetectOwnID).
	Identity string
	// LeaseDuration and RenewInterval are the Leases' (see
	// sharding.Config): defaults runtime/leases', 15 s and 2 s. A dead
	// replica's objects are taken over after about LeaseDuration plus one
	// RenewInterval.
	LeaseDuration time.Duration
	RenewInterval time.Duration
	// HandoffTimeout bounds how long a replica giving up buckets waits
	// for their objects' cycles in progress to finish and their daemons
	// and timers to stop, before abandoning them (cancelling the cycles'
	// contexts: what they would write is not sent). Default 30 s.
	HandoffTimeout time.Duration
}

// shards is a replica's share of the objects: which buckets it owns, and
// the resources ("lanes") whose objects it admits accordingly.
type shards struct {
	cfg     Sharding
	leases  *rest.Config
	fence   *sharding.Fence
	logger  *slog.Logger
	daemons *daemons.Engine

	mu    sync.Mutex
	owned []bool
	lanes []*lane
}

// lane is one served resource under sharding.
type lane struct {
	s          *shards
	res        resources.Resource
	client     dynamic.NamespaceableResourceInterface
	rest       rest.Interface
	mux        *queueing.Multiplexer
	namespaces []string
	matches    func(namespace string) bool

	// Under s.mu: the owned objects' buckets by key (for the stubs of
	// vanished objects, which have no uid); the keys delivered while a
	// gained bucket is being listed (so that an older listed version
	// never overtakes them); the objects being processed.
	keys     map[string]int
	catching int
	since    map[string]bool
	inflight map[string]*flight
}

// flight is one object's processing in progress.
type flight struct {
	bucket int
	cancel context.CancelFunc
	ev     watching.Event
}

// newShards prepares sharding: the fence goes onto cfg (the operator's
// own requests, not the handlers'), before the clients are made.
func newShards(cfg *rest.Config, opts Options) *shards {
	sc := *opts.Sharding
	if sc.Buckets <= 0 {
		sc.Buckets = sharding.DefaultBuckets
	}
	if sc.Group == "" {
		sc.Group = "kopf-sharding"
		if opts.PeeringName != "" {
			sc.Group = opts.PeeringName
		}
	}
	if sc.Namespace == "" {
		sc.Namespace = os.Getenv("POD_NAMESPACE")
		if sc.Namespace == "" {
			sc.Namespace = "default"
		}
	}
	if sc.Identity == "" && opts.Settings != nil {
		sc.Identity = opts.Settings.Peering.Identity
	}
	if sc.Identity == "" {
		sc.Identity = leases.DetectOwnID(false)
	}
	if sc.HandoffTimeout <= 0 {
		sc.HandoffTimeout = 30 * time.Second
	}
	s := &shards{cfg: sc, logger: opts.Logger, owned: make([]bool, sc.Buckets)}
	// The Leases' client: not fenced, and not queued behind the
	// operator's patches (settings.Networking.MaxInFlight), so that a busy
	// replica still renews its Lease in time.
	s.leases = rest.CopyConfig(cfg)
	if s.leases.QPS == 0 && s.leases.RateLimiter == nil {
		s.leases.QPS = -1 // as the operator's: claims come in bursts of up to Buckets
	}
	s.fence = &sharding.Fence{Identity: sc.Identity}
	cfg.Wrap(s.fence.Wrap)
	return s
}

// run takes part in the group until ctx is done (see sharding.Coordinator).
func (s *shards) run(ctx context.Context) error {
	cs, err := coordinationclient.NewForConfig(s.leases) // not the whole clientset: an operator links what it uses
	if err != nil {
		return fmt.Errorf("creating the client of the sharding leases: %w", err)
	}
	c, err := sharding.New(sharding.Config{
		Leases:        cs.Leases(s.cfg.Namespace),
		Group:         s.cfg.Group,
		Identity:      s.cfg.Identity,
		Buckets:       s.cfg.Buckets,
		LeaseDuration: s.cfg.LeaseDuration,
		RenewInterval: s.cfg.RenewInterval,
		Acquire:       s.gain,
		Release:       s.lose,
		Logger:        s.logger,
	})
	if err != nil {
		return err
	}
	s.logger.Info(fmt.Sprintf("Sharding: %s joins the group %s in %s with %d buckets.", s.cfg.Identity, s.cfg.Group, s.cfg.Namespace, s.cfg.Buckets))
	c.Run(ctx)
	return nil
}

// lane registers a served resource; its put is the watch callback that
// admits the events of owned objects only into its mux (set once made),
// and its process wraps the reactor's.
func (s *shards) lane(res resources.Resource, client dynamic.NamespaceableResourceInterface, rc rest.Interface, sc scope.Scope) *lane {
	l := &lane{s: s, res: res, client: client, rest: rc, keys: map[string]int{}, inflight: map[string]*flight{}}
	namespaces, exact := sc.ExactNamespaces()
	l.matches = func(string) bool { return true }
	if !res.Namespaced || !exact {
		namespaces = []string{""}
		if res.Namespaced && !sc.Clusterwide() {
			l.matches = sc.Matches
		}
	}
	l.namespaces = namespaces
	s.fence.Guard(res.Path(""))
	s.mu.Lock()
	s.lanes = append(s.lanes, l)
	s.mu.Unlock()
	return l
}

// bucketLocked is the bucket of an event's object: by its uid, or for the
// stub of a vanished object, as remembered; false if unknown.
func (l *lane) bucketLocked(ev watching.Event) (int, bool) {
	if uid := body.Body(ev.Object).Meta().UID(); uid != "" {
		return sharding.Bucket(uid, len(l.s.owned)), true
	}
	b, ok := l.keys[ev.Key]
	return b, ok
}

// objectPath is the object's URL path, the fence's key.
func (l *lane) objectPath(key string) string {
	ns, name, found := strings.Cut(key, "/")
	if !found {
		ns, name = "", key
	}
	return l.res.Path(ns) + "/" + name
}

// put admits an event if its object is in an owned bucket.
func (l *lane) put(ev watching.Event) {
	s := l.s
	s.mu.Lock()
	b, ok := l.bucketLocked(ev)
	if !ok || !s.owned[b] {
		busy := l.inflight[ev.Key] != nil
		s.mu.Unlock()
		if busy {
			// The object's cycle in progress may be waiting for its own
			// patch to come back: it gets it, and returns as a newer
			// event is pending, which is then skipped (see process).
			l.mux.Put(ev)
		}
		return
	}
	if ev.Type != watching.Deleted {
		l.keys[ev.Key] = b // forgotten once the deletion is processed
	}
	if l.catching > 0 {
		l.since[ev.Key] = true
	}
	s.mu.Unlock()
	if ev.Type == watching.Deleted {
		s.fence.Forget(l.objectPath(ev.Key))
	} else if !ev.Wakeup {
		meta := body.Body(ev.Object).Meta()
		s.fence.Observe(l.objectPath(ev.Key), meta.ResourceVersion(), stampOf(meta, s.fence.Key()))
	}
	l.mux.Put(ev)
}

func stampOf(meta body.Meta, key string) string {
	a, _ := meta["annotations"].(map[string]any)
	v, _ := a[key].(string)
	return v
}

// process wraps the reactor's processing: an object no longer owned is
// skipped; an owned one is stamped first if it is not yet (see
// sharding.Fence); its processing is tracked so that a hand-off waits
// for it (or abandons it by cancelling its context).
func (l *lane) process(next queueing.Processor) queueing.Processor {
	return func(ctx context.Context, ev watching.Event, st *queueing.Stream) {
		s := l.s
		s.mu.Lock()
		b, ok := l.bucketLocked(ev)
		if !ok || !s.owned[b] {
			s.mu.Unlock()
			return // another replica handles it now
		}
		ctx, cancel := context.WithCancel(ctx)
		l.inflight[ev.Key] = &flight{bucket: b, cancel: cancel, ev: ev}
		s.mu.Unlock()
		defer func() {
			s.mu.Lock()
			delete(l.inflight, ev.Key)
			if ev.Type == watching.Deleted {
				delete(l.keys, ev.Key)
			}
			s.mu.Unlock()
			cancel()
		}()
		meta := body.Body(ev.Object).Meta()
		if ev.Type != watching.Deleted && !ev.Wakeup && meta.UID() != "" && stampOf(meta, s.fence.Key()) != s.cfg.Identity {
			rv, err := l.stamp(ctx, meta)
			switch {
			case apierrors.IsNotFound(err):
				return // gone: its deletion comes next
			case err != nil:
				s.logger.Warn(fmt.Sprintf("Sharding: %s could not be stamped as owned by %s; retrying in 1 second: %v", ev.Key, s.cfg.Identity, err))
				if st.Sleep(ctx, time.Second) == 0 && ctx.Err() == nil && !st.Stopping() {
					l.put(ev)
				}
				return
			}
			st.Expect(rv)
		}
		next(ctx, ev, st)
	}
}

// stamp writes this replica's identity into the object's stamp.
func (l *lane) stamp(ctx context.Context, meta body.Meta) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	res := l.rest.Patch(types.MergePatchType).AbsPath(l.res.Path(meta.Namespace()), meta.Name()).
		SetHeader(sharding.StampHeader, "1").Body(l.s.fence.Stamp()).Do(ctx)
	if err := res.Error(); err != nil {
		return "", err
	}
	raw, _ := res.Raw()
	obj := &unstructured.Unstructured{}
	if err := obj.UnmarshalJSON(raw); err != nil {
		return "", fmt.Errorf("decoding the stamp's response: %w", err)
	}
	return obj.GetResourceVersion(), nil
}

// gain starts the objects of the buckets just claimed: they are admitted
// from now on, and the objects already there are listed and queued (as
// the first listing after a start: resuming handlers see them so).
func (s *shards) gain(ctx context.Context, buckets []int) {
	start := time.Now()
	set := map[int]bool{}
	s.mu.Lock()
	for _, b := range buckets {
		s.owned[b] = true
		set[b] = true
	}
	lanes := append([]*lane(nil), s.lanes...)
	for _, l := range lanes {
		if l.catching == 0 {
			l.since = map[string]bool{}
		}
		l.catching++
	}
	s.mu.Unlock()
	n := 0
	for _, l := range lanes {
		n += l.catchUp(ctx, set)
		s.mu.Lock()
		l.catching--
		if l.catching == 0 {
			l.since = nil
		}
		s.mu.Unlock()
	}
	s.logger.Info(fmt.Sprintf("Sharding: started %d buckets with %d objects in %s seconds.", len(buckets), n, seconds(time.Since(start))))
}

// catchUp lists the lane's objects and queues those of the buckets.
func (l *lane) catchUp(ctx context.Context, buckets map[int]bool) int {
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
				l.s.logger.Error(fmt.Sprintf("Sharding: the objects of %s could not be listed for the buckets gained; they are handled at their next change: %v", l.res, err))
				break
			}
			for i := range list.Items {
				obj := list.Items[i].Object
				b := body.Body(obj)
				meta := b.Meta()
				if !buckets[sharding.Bucket(meta.UID(), len(l.s.owned))] || !l.matches(meta.Namespace()) {
					continue
				}
				delete(meta, "managedFields")
				key := meta.Name()
				if meta.Namespace() != "" {
					key = meta.Namespace() + "/" + key
				}
				l.s.mu.Lock()
				seen := l.since[key]
				l.s.mu.Unlock()
				if !seen {
					l.put(watching.Event{Type: watching.Listed, Key: key, Object: b, Initial: true})
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

// lose stops the objects of the buckets given up, and returns once none
// is processed here any more and their daemons and timers are stopped (or
// after HandoffTimeout, having abandoned what is left).
func (s *shards) lose(ctx context.Context, buckets []int) {
	start := time.Now()
	set := map[int]bool{}
	s.mu.Lock()
	for _, b := range buckets {
		s.owned[b] = false
		set[b] = true
	}
	type wake struct {
		l  *lane
		ev watching.Event
	}
	var wakes []wake
	for _, l := range s.lanes {
		for key, b := range l.keys {
			if set[b] {
				delete(l.keys, key)
				s.fence.Forget(l.objectPath(key))
			}
		}
		for _, f := range l.inflight {
			if set[f.bucket] {
				wakes = append(wakes, wake{l, f.ev})
			}
		}
	}
	s.mu.Unlock()
	// A cycle sleeping for a delayed handler ends its sleep on a new
	// event: this one is then skipped, the bucket being gone.
	for _, w := range wakes {
		ev := w.ev
		ev.Wakeup = true
		w.l.mux.Put(ev)
	}
	var objs []*daemons.Object
	if s.daemons != nil {
		for _, o := range s.daemons.Objects() {
			if uid := o.Body().Meta().UID(); uid != "" && set[sharding.Bucket(uid, len(s.owned))] {
				o.Stop(kwargs.StopOperatorPausing)
				objs = append(objs, o)
			}
		}
	}
	busy := func() int {
		n := 0
		s.mu.Lock()
		for _, l := range s.lanes {
			for _, f := range l.inflight {
				if set[f.bucket] {
					n++
				}
			}
		}
		s.mu.Unlock()
		for _, o := range objs {
			if !o.Done() {
				n++
			}
		}
		return n
	}
	deadline := time.Now().Add(s.cfg.HandoffTimeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d // the lease expires, or another replica owns them already
	}
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for busy() > 0 && time.Now().Before(deadline) {
		<-tick.C
	}
	if n := busy(); n > 0 {
		s.logger.Warn(fmt.Sprintf("Sharding: %d objects of the buckets given up are still busy after %s seconds; abandoning their cycles.", n, seconds(time.Since(start))))
		s.mu.Lock()
		for _, l := range s.lanes {
			for _, f := range l.inflight {
				if set[f.bucket] {
					f.cancel()
				}
			}
		}
		s.mu.Unlock()
	}
	s.logger.Info(fmt.Sprintf("Sharding: stopped %d buckets in %s seconds.", len(buckets), seconds(time.Since(start))))
}
