package clusters

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	coordinationclient "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/rest"

	"github.com/kopf-go/kopf/runtime/leases"
	"github.com/kopf-go/kopf/runtime/sharding"
)

// DefaultSharedGroup is the group of the replicas of a fleet operator
// when SharedOptions.Group is not set.
const DefaultSharedGroup = "kopf-fleet"

// SharedOptions say how the replicas of a fleet operator find each other
// (Shared). The zero values are defaults.
type SharedOptions struct {
	// Group names the replicas that split the clusters; their Leases are
	// named after it (default DefaultSharedGroup, "kopf-fleet"). It must
	// differ from the group of --shards (objects' buckets) in the home
	// cluster, if both are used.
	Group string
	// Namespace is where the Leases are, in the home cluster: default
	// $POD_NAMESPACE, else "default".
	Namespace string
	// Identity is this replica's, unique in the group: default Kopf's
	// detect_own_id (leases.DetectOwnID).
	Identity string
	// Buckets is the number of buckets the cluster names are hashed into
	// (default sharding.DefaultBuckets, 64); every replica must use the
	// same. A bucket is the unit of a claim and a hand-off: clusters of one
	// bucket move together; with many more buckets than clusters, nearly
	// every cluster is a bucket of its own.
	Buckets int
	// LeaseDuration and RenewInterval are the Leases' (sharding.Config's):
	// defaults runtime/leases', 15 s and 2 s; RenewInterval at most a quarter
	// of LeaseDuration. A dead replica's clusters are taken over after
	// about LeaseDuration plus one RenewInterval.
	LeaseDuration time.Duration
	RenewInterval time.Duration
	// Logger receives the group's changes and the hand-offs (nil:
	// slog.Default()).
	Logger *slog.Logger
}

// Shared returns a Provider that splits the clusters of p between the
// replicas of a fleet operator, each of which runs Shared(p) with the same
// Group: every cluster that p yields is engaged on one live replica only.
//
// The split is sharding's (runtime/sharding, docs/sharding.md) applied to
// cluster names instead of objects' UIDs: a cluster belongs to the bucket
// sharding.Bucket(name, Buckets) (FNV-1a 64 of its name), the buckets are
// assigned to the live replicas by rendezvous hashing, and a
// sharding.Coordinator keeps this replica's membership and its buckets'
// claims on coordination.k8s.io Leases in the home cluster (home: its
// client configuration; runtime/leases' rules). When a replica joins or
// leaves, about 1/N of the buckets move. p itself runs on every replica:
// each knows every cluster, and engages on its sink those of its buckets.
//
// The hand-off, in order: the old owner disengages the bucket's clusters
// (Sink.Disengage, which returns once their handlers have stopped) and
// only then releases the bucket's claim; the new owner claims a bucket
// only when its claim has no live holder, and engages its clusters only
// once its claim is written. A replica that dies (killed, its node lost)
// releases nothing: its member Lease expires (LeaseDuration after its
// last renewal, as each of the others observes it) and then the others
// claim its buckets.
//
// Fencing: no two replicas serve one cluster at a time as long as (1) a
// cluster is engaged only under a claim written by this replica, and (2) a
// replica that cannot renew its member Lease (the home cluster unreachable
// or slow) disengages all its clusters, without writing, before its Lease
// could expire for the others: it starts LeaseDuration less two
// RenewIntervals after its last renewal and abandons what has not stopped
// half an interval before the expiry (sharding.Coordinator's rule, the one
// e2e/partition checks). What this does not prevent is a process paused
// (SIGSTOP, a frozen VM) past its Lease's expiry, which may still write to
// its clusters once it resumes, before it notices; sharding fences such
// writes per object (sharding.Fence), the writes of a fleet's member
// clusters are not fenced.
//
// A cluster that p yields while this replica holds its bucket is engaged
// at once; one that p removes is disengaged. A cluster the sink fails to
// engage is tried again every RenewInterval. When ctx is done, Run stops
// p, disengages its clusters, releases its claims and deletes its member
// Lease (so that the others take over at once), and returns p's error if
// p failed at its start.
func Shared(home *rest.Config, p Provider, opts SharedOptions) Provider {
	if opts.Group == "" {
		opts.Group = DefaultSharedGroup
	}
	if opts.Namespace == "" {
		opts.Namespace = os.Getenv("POD_NAMESPACE")
		if opts.Namespace == "" {
			opts.Namespace = "default"
		}
	}
	if opts.Identity == "" {
		opts.Identity = leases.DetectOwnID(false)
	}
	if opts.Buckets <= 0 {
		opts.Buckets = sharding.DefaultBuckets
	}
	opts.Logger = logger(opts.Logger)
	return &sharedProvider{home: home, inner: p, opts: opts}
}

type sharedProvider struct {
	home  *rest.Config
	inner Provider
	opts  SharedOptions
}

// Run implements Provider.
func (p *sharedProvider) Run(ctx context.Context, sink Sink) error {
	cfg := rest.CopyConfig(p.home)
	if cfg.QPS == 0 && cfg.RateLimiter == nil {
		cfg.QPS = -1 // claims come in bursts of up to Buckets, as sharding's
	}
	cs, err := coordinationclient.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("clusters: the client of the fleet's Leases: %w", err)
	}
	s := &split{sink: sink, buckets: p.opts.Buckets, logger: p.opts.Logger, known: map[string]Cluster{}, held: map[int]bool{}, engaged: map[string]bool{}}
	co, err := sharding.New(sharding.Config{
		Leases:        cs.Leases(p.opts.Namespace),
		Group:         p.opts.Group,
		Identity:      p.opts.Identity,
		Buckets:       p.opts.Buckets,
		LeaseDuration: p.opts.LeaseDuration,
		RenewInterval: p.opts.RenewInterval,
		Acquire:       s.acquire,
		Release:       s.release,
		Logger:        p.opts.Logger,
	})
	if err != nil {
		return fmt.Errorf("clusters: %w", err)
	}
	p.opts.Logger.Info(fmt.Sprintf("Clusters: %s joins the fleet group %s in %s.", p.opts.Identity, p.opts.Group, p.opts.Namespace))
	return s.run(ctx, p.inner, co, p.renewInterval())
}

func (p *sharedProvider) renewInterval() time.Duration {
	return leases.Timing{Duration: p.opts.LeaseDuration, RetryPeriod: p.opts.RenewInterval}.Defaulted().RetryPeriod
}

// split is one replica's part of the fleet: the clusters its provider
// yields (known), the buckets it holds, and the clusters it engaged on
// its sink. Every call of the sink is made under mu, so that the
// coordinator's hand-offs and the provider's changes are applied one at a
// time.
type split struct {
	sink    Sink
	buckets int
	logger  *slog.Logger

	mu      sync.Mutex
	known   map[string]Cluster
	held    map[int]bool
	engaged map[string]bool
}

// run runs the provider on the split and the coordinator until ctx is
// done or the provider fails; the coordinator's leaving disengages what
// is engaged and releases its claims.
func (s *split) run(ctx context.Context, inner Provider, co *sharding.Coordinator, retry time.Duration) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	innerDone := make(chan error, 1)
	go func() { innerDone <- inner.Run(ctx, (*splitSink)(s)) }()
	coDone := make(chan struct{})
	go func() { defer close(coDone); co.Run(ctx) }()
	t := time.NewTicker(retry)
	defer t.Stop()
	var err error
	running := true
	for running && ctx.Err() == nil {
		select {
		case <-ctx.Done():
		case err = <-innerDone:
			running = false
		case <-t.C:
			s.engageMissing(ctx)
		}
	}
	cancel()
	<-coDone
	if running {
		err = <-innerDone
	}
	return err
}

// acquire engages the known clusters of the buckets just claimed.
func (s *split) acquire(ctx context.Context, buckets []int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, b := range buckets {
		s.held[b] = true
	}
	s.engageHeldLocked(ctx)
}

// engageMissing engages the known clusters of held buckets not engaged
// (those the sink failed to engage before).
func (s *split) engageMissing(ctx context.Context) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.engageHeldLocked(ctx)
}

func (s *split) engageHeldLocked(ctx context.Context) {
	for _, name := range sortedKeys(s.known) {
		if !s.engaged[name] && s.held[sharding.Bucket(name, s.buckets)] {
			s.engageLocked(ctx, s.known[name])
		}
	}
}

func (s *split) engageLocked(ctx context.Context, c Cluster) {
	if err := s.sink.Engage(ctx, c); err != nil {
		s.logger.Error(fmt.Sprintf("Cluster %s could not be engaged: %v", c.Name, err))
		delete(s.engaged, c.Name)
		return
	}
	s.engaged[c.Name] = true
}

// release disengages the engaged clusters of the buckets to give up, all
// at once, and returns once the sink has stopped them (or ctx is done:
// the coordinator's deadline).
func (s *split) release(ctx context.Context, buckets []int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	lost := map[int]bool{}
	for _, b := range buckets {
		lost[b] = true
		delete(s.held, b)
	}
	var wg sync.WaitGroup
	for name := range s.engaged {
		if !lost[sharding.Bucket(name, s.buckets)] {
			continue
		}
		delete(s.engaged, name)
		wg.Go(func() {
			if err := s.sink.Disengage(ctx, name); err != nil {
				s.logger.Error(fmt.Sprintf("Cluster %s could not be disengaged: %v", name, err))
			}
		})
	}
	wg.Wait()
}

// splitSink is the sink of the provider that Shared wraps.
type splitSink split

// Engage notes the cluster and engages it if its bucket is held here.
func (s *splitSink) Engage(ctx context.Context, c Cluster) error {
	if err := valid(c); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.known[c.Name] = c
	if !s.held[sharding.Bucket(c.Name, s.buckets)] {
		return nil
	}
	if err := s.sink.Engage(ctx, c); err != nil {
		delete(s.engaged, c.Name)
		return err
	}
	s.engaged[c.Name] = true
	return nil
}

// Disengage forgets the cluster and disengages it if engaged here.
func (s *splitSink) Disengage(ctx context.Context, name string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.known, name)
	if !s.engaged[name] {
		return nil
	}
	delete(s.engaged, name)
	return s.sink.Disengage(ctx, name)
}
