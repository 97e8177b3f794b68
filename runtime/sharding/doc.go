// Package sharding splits the objects of an operator among its replicas:
// a primitive usable on its own (as kube-rs offers its building blocks),
// which runtime/operator uses under --shards through the pipeline stage of
// its sub-package shardstage.
//
// Each object belongs to one of a fixed number of buckets by a stable hash
// of its metadata.uid (Bucket: FNV-1a 64, the hash of Kubernetes' sharded
// list and watch, KEP-5866). A bucket is a contiguous range of the hash
// space (BucketRange), so the buckets of a replica are a shard selector
// that an API server with KEP-5866 applies itself (ShardSelector); where
// it does not, the same buckets are filtered on the client. The buckets
// are assigned to the live replicas by rendezvous hashing (Owner, Assign):
// when a replica joins or leaves, only about 1/N of the buckets move.
//
// Mode says how a replica receives its buckets' objects: all of them,
// filtered on the client (ModeFilter); those whose bucket label selects
// its buckets (ModeLabel: the label LabelKey carries KeyBucket, the bucket
// of the object's namespace and name, which unlike the uid are known at
// admission); or those the API server selects by ShardSelector
// (ModeServer).
//
// Coordinator keeps a replica's membership (one coordination.k8s.io Lease
// per replica, renewed; an expired one is a dead replica) and claims the
// buckets assigned to it (one Lease per bucket, written with its
// resourceVersion as a precondition, so that one claim wins). A hand-off
// is ordered: the old owner stops the bucket's work (Config.Release) and
// only then clears its claim, and the new owner claims a bucket only when
// it has no live holder, and starts its work (Config.Acquire) only once
// its claim is written.
//
// Fence makes a stale owner's writes fail at the API server: the new owner
// stamps each object (an annotation) before handling it, and every write
// of the operator's patches is conditional on a version stamped by the
// writer. The writes are fenced explicitly, by a Writer: a Patcher (the
// method set of runtime/reactor's, through which the reactor sends all its
// writes) that adds the precondition to each patch and passes it on. See
// Fence for why this design.
package sharding
