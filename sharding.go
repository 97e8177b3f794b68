package kopf

import "github.com/kopf-go/kopf/runtime/operator"

// Sharding says how the replicas of an operator split its objects among
// them: by buckets of the objects' uids, assigned to the live replicas by
// rendezvous hashing, with safe hand-offs (docs/sharding.md). The zero
// value is the defaults: 64 buckets, Leases in $POD_NAMESPACE (else
// "default"), 15-second leases.
type Sharding = operator.Sharding

// WithSharding turns sharding on with these settings (--shards on the
// command line turns it on too, and sets the number of buckets).
func WithSharding(s Sharding) Option {
	return func(o *operator.Options) { o.Sharding = &s }
}
