package sharding

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coordinationclient "k8s.io/client-go/kubernetes/typed/coordination/v1"
)

// The labels of the Leases: the group they belong to, and their role
// (a member's liveness or a bucket's claim).
const (
	GroupLabel = "kopf.dev/sharding-group"
	RoleLabel  = "kopf.dev/sharding-role"
	roleMember = "member"
	roleBucket = "bucket"
)

// Config says which group a replica joins and what it does with the
// buckets it gets.
type Config struct {
	// Leases are the Leases of the namespace where the group keeps its
	// Leases (one per replica, "<Group>-member-<hash of identity>", and
	// one per bucket, "<Group>-bucket-<n>").
	Leases coordinationclient.LeaseInterface
	// Group names the replicas that share the objects; replicas with
	// another group (or another number of buckets) do not see each other.
	Group string
	// Identity is the replica's, unique among the live replicas of the
	// group (e.g. host name and process id).
	Identity string
	// Buckets is the number of buckets (default DefaultBuckets). Every
	// replica of the group must use the same.
	Buckets int
	// LeaseDuration is how long a replica's Lease stays valid after its
	// last renewal, as the other replicas observe it (default 15 s): a
	// replica that dies loses its buckets after that long. RenewInterval is
	// how often each replica renews its Lease and rebalances (default a
	// fifth of LeaseDuration).
	LeaseDuration time.Duration
	RenewInterval time.Duration
	// Acquire is called with the buckets this replica has just claimed,
	// before anything else is done with them; Release with the buckets it
	// must give up, and it must return only once their objects are no
	// longer handled here: only then are the buckets' claims released for
	// the next owner. Both are called from Run's goroutine, one at a time.
	Acquire func(ctx context.Context, buckets []int)
	Release func(ctx context.Context, buckets []int)
	Logger  *slog.Logger
}

// Coordinator keeps a replica's membership in its group and the claims of
// the buckets that rendezvous hashing assigns to it.
//
// The protocol (each step a Lease write guarded by its resourceVersion, so
// that two replicas never both succeed in a claim):
//
//   - each replica renews its member Lease every RenewInterval; a member
//     is alive while the renewals of its Lease are observed (by the local
//     clock of the observer, as client-go's leader election does, so that
//     clocks need not agree) within LeaseDuration; a Lease seen for the
//     first time is judged by its renewTime (so a killed replica's Lease
//     is not taken for a member by a replica that starts later: this one
//     judgement trusts the clocks to agree within LeaseDuration);
//   - the live members, sorted, assign every bucket to one of them by
//     rendezvous hashing (Owner);
//   - a replica that holds a bucket assigned to another calls Release,
//     which stops the bucket's work here, and only then clears the bucket
//     Lease's holder;
//   - a replica claims a bucket assigned to it when the bucket Lease has
//     no holder or its holder is not alive (it died or left), and calls
//     Acquire once its claim is written;
//   - a replica whose own Lease has not been renewed for LeaseDuration
//     less two RenewIntervals (the API server unreachable or slow) calls
//     Release for everything at once without writing, with a deadline
//     before the Lease expires: the others may take over then.
//
// So a bucket is handled by at most one replica at a time as long as a
// replica notices its own lease's expiry before the others do (Release
// is called by LeaseDuration after the last renewal, the others claim no
// sooner than LeaseDuration after observing it); a replica paused past it
// may still write once it resumes, which is why objects' writes are
// fenced too (see Fence). And a bucket is unowned only while its previous
// owner releases it or its Lease expires.
type Coordinator struct {
	cfg Config

	mu        sync.Mutex
	held      map[int]bool
	members   []string
	lastRenew time.Time
	own       *coordinationv1.Lease
	observed  map[string]observation // member Lease name → last change seen
}

// observation is when a Lease's resourceVersion was last seen to change.
type observation struct {
	rv   string
	when time.Time
}

// New checks the configuration and fills in its defaults.
func New(cfg Config) (*Coordinator, error) {
	if cfg.Leases == nil || cfg.Group == "" || cfg.Identity == "" {
		return nil, errors.New("sharding: Leases, Group and Identity are required")
	}
	if cfg.Buckets <= 0 {
		cfg.Buckets = DefaultBuckets
	}
	if cfg.LeaseDuration <= 0 {
		cfg.LeaseDuration = 15 * time.Second
	}
	if cfg.RenewInterval <= 0 {
		cfg.RenewInterval = cfg.LeaseDuration / 5
	}
	if 3*cfg.RenewInterval > cfg.LeaseDuration {
		return nil, fmt.Errorf("sharding: the renew interval %s must be at most a third of the lease duration %s", cfg.RenewInterval, cfg.LeaseDuration)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Acquire == nil {
		cfg.Acquire = func(context.Context, []int) {}
	}
	if cfg.Release == nil {
		cfg.Release = func(context.Context, []int) {}
	}
	return &Coordinator{cfg: cfg, held: map[int]bool{}, observed: map[string]observation{}}, nil
}

// Held returns the buckets this replica holds now, sorted.
func (c *Coordinator) Held() []int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]int, 0, len(c.held))
	for b := range c.held {
		out = append(out, b)
	}
	slices.Sort(out)
	return out
}

// Members returns the live members as last seen, sorted.
func (c *Coordinator) Members() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.members)
}

// Run takes part in the group until ctx is done, then releases every
// bucket it holds (Release first) and deletes its member Lease, so that
// the others take over at once rather than after LeaseDuration.
//
// The member Lease is renewed in a goroutine of its own, so that a slow
// rebalancing (a Release that waits for handlers) never lets it expire.
func (c *Coordinator) Run(ctx context.Context) {
	c.renewOnce(ctx)
	renewCtx, stopRenewing := context.WithCancel(ctx)
	renewing := make(chan struct{})
	go func() {
		defer close(renewing)
		t := time.NewTicker(c.cfg.RenewInterval)
		defer t.Stop()
		for {
			select {
			case <-renewCtx.Done():
				return
			case <-t.C:
				c.renewOnce(renewCtx)
			}
		}
	}()
	t := time.NewTicker(c.cfg.RenewInterval)
	defer t.Stop()
	for {
		c.tick(ctx)
		select {
		case <-ctx.Done():
			stopRenewing()
			<-renewing
			c.leave(context.WithoutCancel(ctx))
			return
		case <-t.C:
		}
	}
}

// renewOnce renews the member Lease, waiting for the API server at most
// until the Lease would expire (and at least RenewInterval).
func (c *Coordinator) renewOnce(ctx context.Context) {
	start := time.Now()
	c.mu.Lock()
	timeout := max(c.cfg.RenewInterval, c.lastRenew.Add(c.cfg.LeaseDuration).Sub(start))
	c.mu.Unlock()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := c.renew(ctx); err != nil {
		if ctx.Err() == nil || time.Since(start) >= timeout {
			c.cfg.Logger.Warn(fmt.Sprintf("Sharding: the lease of %s could not be renewed: %v", c.cfg.Identity, err))
		}
		return
	}
	c.mu.Lock()
	c.lastRenew = start
	c.mu.Unlock()
}

// memberLease is the name of a member's Lease.
func (c *Coordinator) memberLease(identity string) string {
	h := fnv.New64a()
	_, _ = h.Write([]byte(identity))
	return c.cfg.Group + "-member-" + strconv.FormatUint(h.Sum64(), 16)
}

func (c *Coordinator) bucketLease(b int) string {
	return c.cfg.Group + "-bucket-" + strconv.Itoa(b)
}

func (c *Coordinator) labels(role string) map[string]string {
	return map[string]string{GroupLabel: c.cfg.Group, RoleLabel: role}
}

// renew creates or renews the member Lease.
func (c *Coordinator) renew(ctx context.Context) error {
	now := metav1.NewMicroTime(time.Now())
	seconds := int32((c.cfg.LeaseDuration + time.Second - 1) / time.Second)
	if c.own == nil {
		l, err := c.cfg.Leases.Get(ctx, c.memberLease(c.cfg.Identity), metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			l = &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: c.memberLease(c.cfg.Identity), Labels: c.labels(roleMember)}}
			l.Spec = coordinationv1.LeaseSpec{HolderIdentity: &c.cfg.Identity, LeaseDurationSeconds: &seconds, AcquireTime: &now, RenewTime: &now}
			created, err := c.cfg.Leases.Create(ctx, l, metav1.CreateOptions{})
			if err != nil {
				return err
			}
			c.own = created
			return nil
		case err != nil:
			return err
		}
		c.own = l
	}
	l := c.own.DeepCopy()
	l.Spec.HolderIdentity = &c.cfg.Identity
	l.Spec.LeaseDurationSeconds = &seconds
	l.Spec.RenewTime = &now
	updated, err := c.cfg.Leases.Update(ctx, l, metav1.UpdateOptions{})
	if err != nil {
		c.own = nil // read it again next time
		return err
	}
	c.own = updated
	return nil
}

// tick renews the member Lease and rebalances once.
func (c *Coordinator) tick(ctx context.Context) {
	if ctx.Err() != nil {
		return
	}
	log := c.cfg.Logger
	start := time.Now()
	c.mu.Lock()
	// Checked once per RenewInterval: so from two intervals before the
	// expiry, for the work to stop before the others may take over.
	expired := time.Since(c.lastRenew) >= c.cfg.LeaseDuration-2*c.cfg.RenewInterval
	c.mu.Unlock()
	if expired {
		if held := c.Held(); len(held) > 0 {
			log.Warn(fmt.Sprintf("Sharding: the lease of %s has not been renewed for %s; giving up its %d buckets.", c.cfg.Identity, time.Since(c.lastRenew).Round(time.Millisecond), len(held)))
			// The others may take over once the lease has expired: what
			// is not stopped by then is abandoned.
			dctx, cancel := context.WithDeadline(ctx, c.lastRenew.Add(c.cfg.LeaseDuration-c.cfg.RenewInterval/2))
			c.drop(dctx, held)
			cancel()
		}
		return
	}
	list, err := c.cfg.Leases.List(ctx, metav1.ListOptions{LabelSelector: GroupLabel + "=" + c.cfg.Group})
	if err != nil {
		log.Warn(fmt.Sprintf("Sharding: the leases of the group %s could not be listed: %v", c.cfg.Group, err))
		return
	}
	now := time.Now()
	live := map[string]bool{c.cfg.Identity: true}
	buckets := map[int]*coordinationv1.Lease{}
	seen := map[string]bool{}
	for i := range list.Items {
		l := &list.Items[i]
		switch l.Labels[RoleLabel] {
		case roleMember:
			seen[l.Name] = true
			o, ok := c.observed[l.Name]
			if !ok || o.rv != l.ResourceVersion {
				o = observation{rv: l.ResourceVersion, when: now}
				if rt := l.Spec.RenewTime; !ok && rt != nil && rt.Time.Before(now) {
					// Seen for the first time: judged by its renewal
					// time, so that a killed replica's Lease does not
					// count as a member for a LeaseDuration more.
					o.when = rt.Time
				}
				c.observed[l.Name] = o
			}
			if l.Spec.HolderIdentity != nil && *l.Spec.HolderIdentity != "" && now.Sub(o.when) < c.cfg.LeaseDuration {
				live[*l.Spec.HolderIdentity] = true
			}
		case roleBucket:
			if b, err := strconv.Atoi(l.Name[len(c.cfg.Group+"-bucket-"):]); err == nil && b >= 0 && b < c.cfg.Buckets {
				buckets[b] = l
			}
		}
	}
	for name := range c.observed {
		if !seen[name] {
			delete(c.observed, name)
		}
	}
	members := make([]string, 0, len(live))
	for m := range live {
		members = append(members, m)
	}
	slices.Sort(members)
	c.mu.Lock()
	if !slices.Equal(members, c.members) {
		log.Info(fmt.Sprintf("Sharding: %d replicas in the group %s: %v", len(members), c.cfg.Group, members))
	}
	c.members = members
	c.mu.Unlock()
	target := Assign(c.cfg.Buckets, members)

	// Lost: buckets held here whose claim is another's (taken over while
	// this replica was unable to renew) — nothing to write; and buckets
	// assigned to another member: released once stopped here.
	var taken, moving []int
	for _, b := range c.Held() {
		switch l := buckets[b]; {
		case l == nil || holder(l) != c.cfg.Identity:
			taken = append(taken, b)
		case target[b] != c.cfg.Identity:
			moving = append(moving, b)
		}
	}
	if len(taken) > 0 {
		log.Warn(fmt.Sprintf("Sharding: buckets %v were taken over by other replicas; stopping them here.", taken))
		dctx, cancel := context.WithDeadline(ctx, time.Now()) // already another's: abandon at once
		c.drop(dctx, taken)
		cancel()
	}
	if len(moving) > 0 {
		c.drop(ctx, moving)
		parallel(moving, func(b int) {
			l := buckets[b].DeepCopy()
			l.Spec.HolderIdentity = nil
			if _, err := c.cfg.Leases.Update(ctx, l, metav1.UpdateOptions{}); err != nil && !apierrors.IsConflict(err) {
				log.Warn(fmt.Sprintf("Sharding: bucket %d could not be released: %v", b, err))
			}
		})
		log.Info(fmt.Sprintf("Sharding: released buckets %v in %s.", moving, time.Since(start).Round(time.Millisecond)))
	}

	// Claims left behind: held here by name only (a release that failed).
	for b, l := range buckets {
		if holder(l) == c.cfg.Identity && !c.isHeld(b) && target[b] != c.cfg.Identity {
			l = l.DeepCopy()
			l.Spec.HolderIdentity = nil
			if _, err := c.cfg.Leases.Update(ctx, l, metav1.UpdateOptions{}); err != nil && !apierrors.IsConflict(err) {
				log.Warn(fmt.Sprintf("Sharding: bucket %d could not be released: %v", b, err))
			}
		}
	}

	// Claims: the buckets assigned here, free or held by the dead.
	var claims []int
	for b, owner := range target {
		if owner == c.cfg.Identity && !c.isHeld(b) {
			claims = append(claims, b)
		}
	}
	var gainedMu sync.Mutex
	var gained []int
	seconds := int32((c.cfg.LeaseDuration + time.Second - 1) / time.Second)
	parallel(claims, func(b int) {
		if ctx.Err() != nil {
			return
		}
		if c.claim(ctx, b, buckets[b], live, seconds) {
			gainedMu.Lock()
			gained = append(gained, b)
			gainedMu.Unlock()
		}
	})
	if len(gained) > 0 {
		slices.Sort(gained)
		c.mu.Lock()
		for _, b := range gained {
			c.held[b] = true
		}
		c.mu.Unlock()
		c.cfg.Acquire(ctx, gained)
		log.Info(fmt.Sprintf("Sharding: acquired buckets %v (%d held).", gained, len(c.Held())))
	}
}

// claim writes this replica's claim of bucket b, whose Lease is l (nil
// if none yet), unless a live replica holds it; it says whether it did.
func (c *Coordinator) claim(ctx context.Context, b int, l *coordinationv1.Lease, live map[string]bool, seconds int32) bool {
	log := c.cfg.Logger
	mt := metav1.NewMicroTime(time.Now())
	if l == nil {
		l = &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: c.bucketLease(b), Labels: c.labels(roleBucket)}}
		l.Spec = coordinationv1.LeaseSpec{HolderIdentity: &c.cfg.Identity, LeaseDurationSeconds: &seconds, AcquireTime: &mt, RenewTime: &mt}
		if _, err := c.cfg.Leases.Create(ctx, l, metav1.CreateOptions{}); err != nil {
			if !apierrors.IsAlreadyExists(err) {
				log.Warn(fmt.Sprintf("Sharding: bucket %d could not be claimed: %v", b, err))
			}
			return false
		}
		return true
	}
	if h := holder(l); h != "" && h != c.cfg.Identity && live[h] {
		return false // its owner releases it first
	}
	l = l.DeepCopy()
	l.Spec.HolderIdentity = &c.cfg.Identity
	l.Spec.LeaseDurationSeconds = &seconds
	l.Spec.AcquireTime, l.Spec.RenewTime = &mt, &mt
	transitions := int32(1)
	if l.Spec.LeaseTransitions != nil {
		transitions = *l.Spec.LeaseTransitions + 1
	}
	l.Spec.LeaseTransitions = &transitions
	if _, err := c.cfg.Leases.Update(ctx, l, metav1.UpdateOptions{}); err != nil {
		if !apierrors.IsConflict(err) {
			log.Warn(fmt.Sprintf("Sharding: bucket %d could not be claimed: %v", b, err))
		}
		return false
	}
	return true
}

// parallel calls fn for every bucket, 16 at a time.
func parallel(buckets []int, fn func(b int)) {
	sem := make(chan struct{}, 16)
	var wg sync.WaitGroup
	for _, b := range buckets {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			fn(b)
		}()
	}
	wg.Wait()
}

func (c *Coordinator) isHeld(b int) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.held[b]
}

// drop stops the buckets here (Release) and forgets them.
func (c *Coordinator) drop(ctx context.Context, buckets []int) {
	c.cfg.Release(ctx, buckets)
	c.mu.Lock()
	for _, b := range buckets {
		delete(c.held, b)
	}
	c.mu.Unlock()
}

// leave releases everything and deletes the member Lease.
func (c *Coordinator) leave(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.LeaseDuration)
	defer cancel()
	held := c.Held()
	c.drop(ctx, held)
	for _, b := range held {
		l, err := c.cfg.Leases.Get(ctx, c.bucketLease(b), metav1.GetOptions{})
		if err != nil || holder(l) != c.cfg.Identity {
			continue
		}
		l.Spec.HolderIdentity = nil
		_, _ = c.cfg.Leases.Update(ctx, l, metav1.UpdateOptions{})
	}
	if err := c.cfg.Leases.Delete(ctx, c.memberLease(c.cfg.Identity), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		c.cfg.Logger.Warn(fmt.Sprintf("Sharding: the lease of %s could not be deleted: %v", c.cfg.Identity, err))
	}
}

func holder(l *coordinationv1.Lease) string {
	if l.Spec.HolderIdentity == nil {
		return ""
	}
	return *l.Spec.HolderIdentity
}
