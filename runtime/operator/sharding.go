package operator

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	coordinationclient "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/rest"

	"github.com/kopf-go/kopf/runtime/admission"
	"github.com/kopf-go/kopf/runtime/sharding"
	"github.com/kopf-go/kopf/runtime/sharding/shardstage"
)

// Sharding says how the replicas of one operator split its objects among
// them (package sharding; docs/sharding.md). Options.Sharding nil: this
// replica handles every object it serves. The zero values are defaults.
type Sharding struct {
	// Buckets is the number of buckets the objects are hashed into
	// (default sharding.DefaultBuckets, 64); every replica must use the
	// same. More replicas than buckets leave some idle.
	Buckets int
	// Mode is how each replica receives its buckets' objects (see
	// sharding.Mode and shardwatch.go): sharding.ModeFilter (""), every
	// object watched and filtered here; sharding.ModeLabel, a bucket label
	// on every object and one watch over the buckets held (replaced when
	// they change); sharding.ModeServer,
	// KEP-5866's shardSelector, a watch per bucket held. Every replica
	// must use the same.
	Mode sharding.Mode
	// Group names the replicas that share the objects; their Leases are
	// named after it. Default: "kopf-sharding", or the peering name
	// (-P) if one is given.
	Group string
	// Namespace is where the Leases are: default $POD_NAMESPACE, else
	// "default".
	Namespace string
	// Identity is this replica's, unique in the group: default the
	// operator's one identity, which its peering and admission Leases
	// share (Settings.Peering.Identity, else Kopf's detect_own_id,
	// leases.DetectOwnID, detected once per run).
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

// shards is a replica's part in sharding: its settings, the client of
// its Leases, and its stage in the pipelines (see shardstage).
type shards struct {
	cfg    Sharding
	leases *rest.Config
	logger *slog.Logger
	stage  *shardstage.Stage
	stamp  *admission.Stamp // the label mode's stamp at creation; nil: none (see bucketStamp)
}

// newShards prepares sharding: the settings' defaults, the Leases' client
// (a copy of cfg), the stage. The operator's writes are fenced by the
// stage's lanes (Lane.Writer is the reactor's Patcher), not by cfg.
func newShards(cfg *rest.Config, opts Options, identity string) *shards {
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
	if sc.Identity == "" {
		sc.Identity = identity
	}
	if sc.HandoffTimeout <= 0 {
		sc.HandoffTimeout = 30 * time.Second
	}
	if sc.Mode == "" {
		sc.Mode = sharding.ModeFilter
	}
	s := &shards{cfg: sc, logger: opts.Logger}
	// The Leases' client: not fenced, and not queued behind the
	// operator's patches (settings.Networking.MaxInFlight), so that a busy
	// replica still renews its Lease in time.
	s.leases = rest.CopyConfig(cfg)
	if s.leases.QPS == 0 && s.leases.RateLimiter == nil {
		s.leases.QPS = -1 // as the operator's: claims come in bursts of up to Buckets
	}
	s.stage = shardstage.New(shardstage.Config{Identity: sc.Identity, Buckets: sc.Buckets, Mode: sc.Mode, HandoffTimeout: sc.HandoffTimeout, Logger: opts.Logger})
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
		Acquire:       s.stage.Gain,
		Release:       s.stage.Lose,
		Logger:        s.logger,
	})
	if err != nil {
		return err
	}
	s.logger.Info(fmt.Sprintf("Sharding: %s joins the group %s in %s with %d buckets (the %s mode).", s.cfg.Identity, s.cfg.Group, s.cfg.Namespace, s.cfg.Buckets, s.cfg.Mode))
	c.Run(ctx)
	return nil
}
