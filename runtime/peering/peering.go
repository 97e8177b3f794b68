package peering

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"
)

// Object is one peering object that an operator takes part in: one
// resource, one namespace ("" for a ClusterKopfPeering), one name.
type Object struct {
	Client    dynamic.NamespaceableResourceInterface
	Namespace string // "" cluster-wide
	Name      string
	Logger    *slog.Logger
	// Exists is whether the object existed when last read (for the caller).
	Exists bool
}

func (o Object) resource() dynamic.ResourceInterface {
	if o.Namespace == "" {
		return o.Client
	}
	return o.Client.Namespace(o.Namespace)
}

// where is Kopf's "in 'ns'" or "cluster-wide".
func (o Object) where() string {
	if o.Namespace == "" {
		return "cluster-wide"
	}
	return fmt.Sprintf("in '%s'", o.Namespace)
}

// Get reports whether the object exists.
func (o Object) Get(ctx context.Context) (bool, error) {
	_, err := o.resource().Get(ctx, o.Name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return true, nil
}

// Touch writes the identity's record (Kopf's touch): status.<id> =
// {priority, lifetime, lastseen=now} by a JSON merge patch, or null when
// the record is dead at once (lifetime 0: the record is removed). It
// reports false, with no error, if the object does not exist. The result
// is logged at DEBUG unless stealth ("Keep-alive in 'default'
// cluster-wide: ok."); a missing object always.
func (o Object) Touch(ctx context.Context, id Identity, priority int, lifetime time.Duration, stealth bool) (bool, error) {
	now := time.Now().UTC()
	p := Peer{Identity: id, Priority: priority, Lifetime: lifetime.Truncate(time.Second), LastSeen: now}
	var rec any
	if !p.IsDead(now) {
		rec = p.Record()
	}
	found, err := o.patch(ctx, map[string]any{string(id): rec})
	if err != nil {
		return false, err
	}
	if !stealth || !found {
		result := "ok"
		if !found {
			result = "not found"
		}
		o.Logger.Debug(fmt.Sprintf("Keep-alive in '%s' %s: %s.", o.Name, o.where(), result))
	}
	return found, nil
}

// Clean removes the records of the peers (Kopf's clean).
func (o Object) Clean(ctx context.Context, peers List) error {
	status := map[string]any{}
	for _, p := range peers {
		status[string(p.Identity)] = nil
	}
	_, err := o.patch(ctx, status)
	return err
}

func (o Object) patch(ctx context.Context, status map[string]any) (bool, error) {
	data, err := json.Marshal(map[string]any{"status": status})
	if err != nil {
		return false, err
	}
	_, err = o.resource().Patch(ctx, o.Name, types.MergePatchType, data, metav1.PatchOptions{})
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("patching the peering %q %s: %w", o.Name, o.where(), err)
	}
	return true, nil
}

// KeepaliveInterval is Kopf's pause between keep-alives:
// min(lifetime, max(1, lifetime - randint(5, 10))) seconds, at least 1.
func KeepaliveInterval(lifetime time.Duration) time.Duration {
	l := int(lifetime / time.Second)
	d := min(l, max(1, l-(5+rand.IntN(6))))
	return time.Duration(max(1, d)) * time.Second
}

// Keepalive writes the identity's record until ctx is done, every
// KeepaliveInterval, then removes it (Kopf's keepalive). Failures are
// logged and retried at the next interval.
func (o Object) Keepalive(ctx context.Context, id Identity, priority int, lifetime time.Duration, stealth bool) {
	defer func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if _, err := o.Touch(rctx, id, priority, 0, stealth); err != nil {
			o.Logger.Error(fmt.Sprintf("Couldn't remove self from the peering. Ignoring. %v", err))
		}
	}()
	for {
		if _, err := o.Touch(ctx, id, priority, lifetime, stealth); err != nil && ctx.Err() == nil {
			o.Logger.Warn(fmt.Sprintf("The keep-alive in '%s' %s has failed: %v", o.Name, o.where(), err))
		}
		t := time.NewTimer(KeepaliveInterval(lifetime))
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// Observer watches one peering object and turns its Conflicts toggle on
// while a live peer has a higher priority (Kopf's process_peering_event),
// removing the expired records of any peer on the way.
//
// Peers of the same priority: with Lease false, as Kopf, every operator
// warns and pauses. With Lease true (kopf-go replicas), the warning is
// logged when that set of peers changes, and the choice of the active
// replica is the Lease's (see Elector); a Kopf operator among them pauses
// itself, so that at most one of them is active.
type Observer struct {
	Object
	Identity  Identity
	Priority  int
	Conflicts *Toggle
	Lease     bool
	// Seen, if set, is called (from the observer's goroutine) each time the
	// object is seen: it exists; Processed after each judgement of it.
	Seen      func()
	Processed func()

	mu       sync.Mutex
	latest   *unstructured.Unstructured
	kick     chan struct{}
	sameSeen string // the same-priority identities last warned about
}

// Run watches the object until ctx is done.
func (ob *Observer) Run(ctx context.Context) {
	ob.kick = make(chan struct{}, 1)
	ri := ob.resource()
	sel := fields.OneTermEqualSelector("metadata.name", ob.Name).String()
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, lo metav1.ListOptions) (runtime.Object, error) {
			lo.FieldSelector = sel
			return ri.List(ctx, lo)
		},
		WatchFuncWithContext: func(ctx context.Context, lo metav1.ListOptions) (watch.Interface, error) {
			lo.FieldSelector = sel
			return ri.Watch(ctx, lo)
		},
	}
	inf := cache.NewSharedIndexInformer(lw, &unstructured.Unstructured{}, 0, cache.Indexers{})
	put := func(obj any) {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				u, _ = tomb.Obj.(*unstructured.Unstructured)
			}
		}
		if u == nil || u.GetName() != ob.Name {
			return
		}
		ob.mu.Lock()
		ob.latest = u
		ob.mu.Unlock()
		select {
		case ob.kick <- struct{}{}:
		default:
		}
	}
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    put,
		UpdateFunc: func(_, obj any) { put(obj) },
		DeleteFunc: put,
	})
	go inf.RunWithContext(ctx)
	var timer *time.Timer
	var due <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			if timer != nil {
				timer.Stop()
			}
			return
		case <-ob.kick:
		case <-due:
		}
		ob.mu.Lock()
		u := ob.latest
		ob.mu.Unlock()
		if u == nil {
			continue
		}
		if ob.Seen != nil {
			ob.Seen()
		}
		next := ob.Process(ctx, u.Object, time.Now())
		if ob.Processed != nil {
			ob.Processed()
		}
		if timer != nil {
			timer.Stop()
			due = nil
		}
		if !next.IsZero() {
			timer = time.NewTimer(max(time.Until(next), 0) + 10*time.Millisecond)
			due = timer.C
		}
	}
}

// Process judges one state of the peering object at now: it removes the
// expired records, turns Conflicts on or off with Kopf's log lines, and
// returns when a blocking peer expires (zero: none blocks), to judge the
// object again then.
func (ob *Observer) Process(ctx context.Context, obj map[string]any, now time.Time) time.Time {
	status, _ := obj["status"].(map[string]any)
	peers, _ := Parse(status, now)
	slices.SortFunc(peers, func(a, b Peer) int { return strings.Compare(string(a.Identity), string(b.Identity)) })
	var dead, prio, same List
	for _, p := range peers {
		switch {
		case p.IsDead(now):
			dead = append(dead, p)
		case p.Identity == ob.Identity:
		case p.Priority > ob.Priority:
			prio = append(prio, p)
		case p.Priority == ob.Priority:
			same = append(same, p)
		}
	}
	if len(dead) > 0 && ctx.Err() == nil {
		if err := ob.Clean(ctx, dead); err != nil {
			ob.Logger.Warn(fmt.Sprintf("The expired peers could not be removed from '%s' %s: %v", ob.Name, ob.where(), err))
		}
	}
	sameIDs := ""
	for _, p := range same {
		sameIDs += string(p.Identity) + "\n"
	}
	switch {
	case len(prio) > 0:
		ob.sameSeen = "" // warned again about the same priority once these are gone
		if !ob.Conflicts.On() {
			ob.Logger.Info(fmt.Sprintf("Pausing operations in favour of %s.", prio))
			ob.Conflicts.Set(true)
		}
	case len(same) > 0 && !ob.Lease:
		ob.Logger.Warn(fmt.Sprintf("Possibly conflicting operators with the same priority: %s.", same))
		if !ob.Conflicts.On() {
			ob.Logger.Warn(fmt.Sprintf("Pausing all operators, including self: %s", peers))
			ob.Conflicts.Set(true)
		}
	default:
		if len(same) > 0 && sameIDs != ob.sameSeen {
			ob.Logger.Warn(fmt.Sprintf("Possibly conflicting operators with the same priority: %s.", same))
			ob.Logger.Info("The kopf-go operators of the same priority elect the active one through their Lease; a Kopf operator among them pauses itself.")
		}
		ob.sameSeen = sameIDs
		if ob.Conflicts.On() {
			ob.Logger.Info("Resuming operations after the pause. Conflicting operators with the same priority are gone.")
			ob.Conflicts.Set(false)
		}
	}
	var next time.Time
	for _, p := range append(slices.Clone(prio), same...) {
		if d := p.Deadline(); next.IsZero() || d.Before(next) {
			next = d
		}
	}
	return next
}
