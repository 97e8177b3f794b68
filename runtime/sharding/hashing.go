package sharding

import (
	"hash/fnv"
	"strconv"
)

// DefaultBuckets is the number of buckets when none is set: enough that
// three to a dozen replicas get near-equal shares (rendezvous hashing of
// 64 buckets over N replicas leaves each within a few buckets of 64/N),
// few enough that a replica's claims are a handful of Leases.
const DefaultBuckets = 64

// Hash is FNV-1a 64 of the object's metadata.uid: the hash of Kubernetes'
// proposed server-side sharded list and watch (a shard selector over the
// FNV-1a 64 hash of metadata.uid), computed here on the client, so that
// the filter can move into the API server where it exists.
func Hash(uid string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(uid))
	return h.Sum64()
}

// Bucket returns the bucket of the object whose metadata.uid is uid, in
// [0, buckets): its Hash modulo buckets. It is stable across processes,
// versions and restarts; buckets must be positive.
func Bucket(uid string, buckets int) int {
	return int(Hash(uid) % uint64(buckets))
}

// weight is the rendezvous (highest random weight) score of a member for a
// bucket: FNV-1a 64 of "member/bucket", mixed (FNV's low bits alone are
// poorly spread over such short, similar inputs).
func weight(member string, bucket int) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(member))
	_, _ = h.Write([]byte{'/'})
	_, _ = h.Write(strconv.AppendInt(nil, int64(bucket), 10))
	return mix(h.Sum64())
}

// mix is splitmix64's finaliser.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// Owner returns the member that bucket belongs to among members, by
// rendezvous hashing: the member of the highest weight for the bucket (ties,
// practically impossible, go to the smaller identity). Every replica that
// sees the same members computes the same owner; when a member joins or
// leaves, only the buckets whose highest weight it has or had move, about
// 1/N of them. "" if there are no members.
func Owner(bucket int, members []string) string {
	best, bestW := "", uint64(0)
	for _, m := range members {
		w := weight(m, bucket)
		if best == "" || w > bestW || (w == bestW && m < best) {
			best, bestW = m, w
		}
	}
	return best
}

// Assign returns the owner of every bucket in [0, buckets) among members
// (see Owner), indexed by bucket.
func Assign(buckets int, members []string) []string {
	out := make([]string, buckets)
	for b := range out {
		out[b] = Owner(b, members)
	}
	return out
}
