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

	"github.com/kopf-go/kopf/runtime/leases"
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
	// group; default: leases.DetectOwnID (Kopf's detect_own_id).
	Identity string
	// Buckets is the number of buckets (default DefaultBuckets). Every
	// replica of the group must use the same.
	Buckets int
	// LeaseDuration is how long a replica's Lease stays valid after its
	// last renewal, as the other replicas observe it (runtime/leases'
	// rule; default leases.DefaultDuration, 15 s): a replica that dies
	// loses its buckets after that long. RenewInterval is how often each
	// replica renews its Lease and rebalances (default the leases'
	// RetryPeriod for that duration: 2 s for 15 s), at most a quarter of
	// LeaseDuration: a replica starts giving its buckets up when its Lease
	// has not been renewed for LeaseDuration less two RenewIntervals, which
	// at a quarter leaves the next renewal an interval to land (at a
	// third, none: a renewal not landed by the next rebalancing would
	// stop all the buckets).
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
//     is alive while its Lease is live by runtime/leases' one rule (its
//     renewals observed within LeaseDuration on the observer's own clock,
//     as client-go's leader election does, so that clocks need not agree;
//     a Lease seen for the first time is live for LeaseDuration from then,
//     so a replica that starts after another was killed waits for the
//     killed one's Lease to expire before it takes its buckets);
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
//     Release for everything at once without writing, with a context
//     that ends half a RenewInterval before the Lease expires (the
//     renewal's start counts: no other replica can have observed it
//     earlier): the others may take over then. A renewal that lands
//     meanwhile moves that end on, as it moves the expiry, so that the
//     cycles in progress finish rather than being abandoned. A
//     rebalancing that waits for the API server (its connection stalled)
//     is cut short for it, half an interval after the give-up's point at
//     the latest.
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

	writer   leases.Writer   // the bucket Leases' claims and releases
	member   *leases.Held    // this replica's member Lease
	observer leases.Observer // the liveness of the members' Leases

	mu        sync.Mutex
	held      map[int]bool
	members   []string
	lastRenew time.Time
}

// New checks the configuration and fills in its defaults.
func New(cfg Config) (*Coordinator, error) {
	if cfg.Leases == nil || cfg.Group == "" {
		return nil, errors.New("sharding: Leases and Group are required")
	}
	if cfg.Identity == "" {
		cfg.Identity = leases.DetectOwnID(false)
	}
	if cfg.Buckets <= 0 {
		cfg.Buckets = DefaultBuckets
	}
	timing := leases.Timing{Duration: cfg.LeaseDuration, RetryPeriod: cfg.RenewInterval}.Defaulted()
	cfg.LeaseDuration, cfg.RenewInterval = timing.Duration, timing.RetryPeriod
	if 4*cfg.RenewInterval > cfg.LeaseDuration {
		return nil, fmt.Errorf("sharding: the renew interval %s must be at most a quarter of the lease duration %s", cfg.RenewInterval, cfg.LeaseDuration)
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
	w := leases.Writer{Leases: cfg.Leases, Identity: cfg.Identity, Duration: cfg.LeaseDuration}
	c := &Coordinator{cfg: cfg, held: map[int]bool{}, writer: w}
	c.member = &leases.Held{Writer: w, Name: c.memberLease(cfg.Identity), Labels: c.labels(roleMember)}
	return c, nil
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
	return c.member.Renew(ctx)
}

// tick rebalances once: it gives everything up if the member Lease has
// not been renewed in time; otherwise it reads the group's Leases, judges
// which members live, and hands the buckets over in order: first what
// this replica must give up (stopped, then released), then what it may
// claim (claimed, then started). The rebalancing's requests end when the
// member Lease is about to expire (untilExpiry, rebalanceMargin): a
// replica whose API server stalls gives its buckets up in time rather
// than waiting for it.
func (c *Coordinator) tick(ctx context.Context) {
	if ctx.Err() != nil || c.giveUpIfExpired(ctx) {
		return
	}
	rctx, cancel := c.untilExpiry(ctx, c.rebalanceMargin())
	defer cancel()
	c.rebalance(rctx)
	if rctx.Err() != nil && ctx.Err() == nil {
		c.giveUpIfExpired(ctx) // now, not at the next tick
	}
}

// rebalance reads the group's Leases and hands the buckets over.
func (c *Coordinator) rebalance(ctx context.Context) {
	list, err := c.cfg.Leases.List(ctx, metav1.ListOptions{LabelSelector: GroupLabel + "=" + c.cfg.Group})
	if err != nil {
		c.cfg.Logger.Warn(fmt.Sprintf("Sharding: the leases of the group %s could not be listed: %v", c.cfg.Group, err))
		return
	}
	live, buckets := c.observe(list.Items)
	target := Assign(c.cfg.Buckets, c.setMembers(live))
	c.giveUp(ctx, buckets, target)
	c.releaseLeftovers(ctx, buckets, target)
	c.claimAssigned(ctx, buckets, target, live)
}

// The member Lease expires for the others LeaseDuration after the start
// of its last successful renewal (the earliest moment another replica can
// have observed it). Before that, by these margins: this replica starts
// giving its buckets up (two RenewIntervals: it checks once per interval,
// and the work must stop before the others may take over); a rebalancing
// still waiting for the API server is cut short (an interval and a half:
// the half interval is the time a renewal started at the give-up has to
// succeed); the cycles of a give-up still running are abandoned (half an
// interval).
func (c *Coordinator) giveUpMargin() time.Duration    { return 2 * c.cfg.RenewInterval }
func (c *Coordinator) rebalanceMargin() time.Duration { return 3 * c.cfg.RenewInterval / 2 }
func (c *Coordinator) abandonMargin() time.Duration   { return c.cfg.RenewInterval / 2 }

// errLeaseExpiring is the cause with which untilExpiry ends its context.
var errLeaseExpiring = fmt.Errorf("sharding: the member lease is about to expire: %w", context.DeadlineExceeded)

// untilExpiry is ctx, ended (its cause errLeaseExpiring) margin before the
// member Lease expires; a renewal that lands meanwhile moves that moment
// on (the Lease is valid again: no other replica may claim this one's
// buckets), so the context lasts while the renewals keep up. Its cancel
// func must be called once the work is done.
func (c *Coordinator) untilExpiry(ctx context.Context, margin time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(ctx)
	go func() {
		for {
			c.mu.Lock()
			left := time.Until(c.lastRenew.Add(c.cfg.LeaseDuration - margin))
			c.mu.Unlock()
			if left <= 0 {
				cancel(errLeaseExpiring)
				return
			}
			t := time.NewTimer(left)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
		}
	}()
	return ctx, func() { cancel(context.Canceled) }
}

// giveUpIfExpired stops every bucket, without writing, when the member
// Lease has not been renewed for LeaseDuration less giveUpMargin (checked
// once per RenewInterval); it says whether it has. The stopping's context
// lasts until abandonMargin before the Lease expires, as the renewals
// move it (untilExpiry): a slow renewal that lands while the cycles in
// progress finish lets them finish and store their outcomes, rather than
// abandoning them to run again once the buckets are claimed back.
func (c *Coordinator) giveUpIfExpired(ctx context.Context) bool {
	c.mu.Lock()
	since := time.Since(c.lastRenew)
	c.mu.Unlock()
	if since < c.cfg.LeaseDuration-c.giveUpMargin() {
		return false
	}
	if held := c.Held(); len(held) > 0 {
		c.cfg.Logger.Warn(fmt.Sprintf("Sharding: the lease of %s has not been renewed for %s; giving up its %d buckets.", c.cfg.Identity, since.Round(time.Millisecond), len(held)))
		// The others may take over once the lease has expired: what is
		// not stopped by then is abandoned.
		dctx, cancel := c.untilExpiry(ctx, c.abandonMargin())
		c.drop(dctx, held)
		cancel()
	}
	return true
}

// observe judges the group's Leases: the identities of the live members
// (this replica's always) and the bucket Leases by bucket.
func (c *Coordinator) observe(items []coordinationv1.Lease) (map[string]bool, map[int]*coordinationv1.Lease) {
	live := map[string]bool{c.cfg.Identity: true}
	buckets := map[int]*coordinationv1.Lease{}
	seen := map[string]bool{}
	for i := range items {
		l := &items[i]
		switch l.Labels[RoleLabel] {
		case roleMember:
			seen[leases.Key(l)] = true
			if c.observer.Live(l, c.cfg.LeaseDuration) {
				live[leases.Holder(l)] = true
			}
		case roleBucket:
			if b, err := strconv.Atoi(l.Name[len(c.cfg.Group+"-bucket-"):]); err == nil && b >= 0 && b < c.cfg.Buckets {
				buckets[b] = l
			}
		}
	}
	c.observer.Forget(seen) // the Leases gone: a member seen again is new
	return live, buckets
}

// setMembers keeps the live members, sorted, and logs a change.
func (c *Coordinator) setMembers(live map[string]bool) []string {
	members := make([]string, 0, len(live))
	for m := range live {
		members = append(members, m)
	}
	slices.Sort(members)
	c.mu.Lock()
	defer c.mu.Unlock()
	if !slices.Equal(members, c.members) {
		c.cfg.Logger.Info(fmt.Sprintf("Sharding: %d replicas in the group %s: %v", len(members), c.cfg.Group, members))
	}
	c.members = members
	return members
}

// giveUp stops the buckets held here that are lost: those whose claim is
// another's (taken over while this replica was unable to renew: nothing
// to write), and those assigned to another member (released once stopped
// here).
func (c *Coordinator) giveUp(ctx context.Context, buckets map[int]*coordinationv1.Lease, target []string) {
	start := time.Now()
	var taken, moving []int
	for _, b := range c.Held() {
		switch l := buckets[b]; {
		case l == nil || leases.Holder(l) != c.cfg.Identity:
			taken = append(taken, b)
		case target[b] != c.cfg.Identity:
			moving = append(moving, b)
		}
	}
	if len(taken) > 0 {
		c.cfg.Logger.Warn(fmt.Sprintf("Sharding: buckets %v were taken over by other replicas; stopping them here.", taken))
		dctx, cancel := context.WithDeadline(ctx, time.Now()) // already another's: abandon at once
		c.drop(dctx, taken)
		cancel()
	}
	if len(moving) > 0 {
		c.drop(ctx, moving)
		parallel(moving, func(b int) { c.release(ctx, b, buckets[b]) })
		c.cfg.Logger.Info(fmt.Sprintf("Sharding: released buckets %v in %s.", moving, time.Since(start).Round(time.Millisecond)))
	}
}

// releaseLeftovers releases the claims held here by name only (a release
// that failed) of buckets assigned to another.
func (c *Coordinator) releaseLeftovers(ctx context.Context, buckets map[int]*coordinationv1.Lease, target []string) {
	for b, l := range buckets {
		if leases.Holder(l) == c.cfg.Identity && !c.isHeld(b) && target[b] != c.cfg.Identity {
			c.release(ctx, b, l)
		}
	}
}

// release frees the claim of bucket b (its Lease l, as listed); a
// conflict means another replica wrote it meanwhile.
func (c *Coordinator) release(ctx context.Context, b int, l *coordinationv1.Lease) {
	if _, err := c.writer.Release(ctx, l); err != nil && !apierrors.IsConflict(err) {
		c.cfg.Logger.Warn(fmt.Sprintf("Sharding: bucket %d could not be released: %v", b, err))
	}
}

// claimAssigned claims the buckets assigned here that are free or held
// by the dead, and starts those it got (Acquire) once their claims are
// written.
func (c *Coordinator) claimAssigned(ctx context.Context, buckets map[int]*coordinationv1.Lease, target []string, live map[string]bool) {
	var claims []int
	for b, owner := range target {
		if owner == c.cfg.Identity && !c.isHeld(b) {
			claims = append(claims, b)
		}
	}
	var gainedMu sync.Mutex
	var gained []int
	parallel(claims, func(b int) {
		if ctx.Err() == nil && c.claim(ctx, b, buckets[b], live) {
			gainedMu.Lock()
			gained = append(gained, b)
			gainedMu.Unlock()
		}
	})
	if len(gained) == 0 {
		return
	}
	slices.Sort(gained)
	c.mu.Lock()
	for _, b := range gained {
		c.held[b] = true
	}
	c.mu.Unlock()
	c.cfg.Acquire(ctx, gained)
	c.cfg.Logger.Info(fmt.Sprintf("Sharding: acquired buckets %v (%d held).", gained, len(c.Held())))
}

// claim writes this replica's claim of bucket b, whose Lease is l (nil
// if none yet), unless a live replica holds it; it says whether it did.
func (c *Coordinator) claim(ctx context.Context, b int, l *coordinationv1.Lease, live map[string]bool) bool {
	var err error
	if l == nil {
		_, err = c.writer.Create(ctx, c.bucketLease(b), c.labels(roleBucket))
	} else if h := leases.Holder(l); h != "" && h != c.cfg.Identity && live[h] {
		return false // its owner releases it first
	} else {
		_, err = c.writer.Take(ctx, l)
	}
	if err != nil {
		if !apierrors.IsAlreadyExists(err) && !apierrors.IsConflict(err) {
			c.cfg.Logger.Warn(fmt.Sprintf("Sharding: bucket %d could not be claimed: %v", b, err))
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
		if l, err := c.cfg.Leases.Get(ctx, c.bucketLease(b), metav1.GetOptions{}); err == nil {
			_, _ = c.writer.Release(ctx, l)
		}
	}
	if err := c.member.Delete(ctx); err != nil {
		c.cfg.Logger.Warn(fmt.Sprintf("Sharding: the lease of %s could not be deleted: %v", c.cfg.Identity, err))
	}
}
