package sharding

import (
	"fmt"
	"hash/fnv"
	"math/bits"
	"slices"
	"strconv"
	"strings"
)

// DefaultBuckets is the number of buckets when none is set: enough that
// three to a dozen replicas get near-equal shares (rendezvous hashing of
// 64 buckets over N replicas leaves each within a few buckets of 64/N),
// few enough that a replica's claims are a handful of Leases.
const DefaultBuckets = 64

// Hash is FNV-1a 64 of the object's metadata.uid: the hash of Kubernetes'
// server-side sharded list and watch (KEP-5866: a shard selector over
// ranges of the FNV-1a 64 hash of metadata.uid, alpha in 1.36), computed
// here on the client, so that the filter can move into the API server
// where it exists.
func Hash(uid string) uint64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte(uid))
	return h.Sum64()
}

// Bucket returns the bucket of the object whose metadata.uid is uid, in
// [0, buckets): the high 64 bits of Hash(uid) × buckets, so that each
// bucket is one contiguous range of the 64-bit hash space (BucketRange)
// and a set of buckets is a set of ranges, which is what Kubernetes'
// sharded list and watch (KEP-5866) selects (ShardSelector). It is stable
// across processes and restarts (not across kopf-go versions before
// range buckets, which took the hash modulo buckets); buckets must be
// positive.
func Bucket(uid string, buckets int) int {
	return hashBucket(Hash(uid), buckets)
}

// hashBucket is the bucket of a hash among buckets.
func hashBucket(h uint64, buckets int) int {
	hi, _ := bits.Mul64(h, uint64(buckets))
	return int(hi)
}

// BucketRange returns the hashes of bucket among total buckets: those in
// [lo, hi), or, when last is set (the last bucket), those from lo up to
// and including 2^64-1 (hi is then 0: 2^64 does not fit). Hash(uid) is in
// BucketRange(b, total) exactly when Bucket(uid, total) == b. bucket must
// be in [0, total).
func BucketRange(bucket, total int) (lo, hi uint64, last bool) {
	lo = rangeStart(bucket, total)
	if bucket+1 == total {
		return lo, 0, true
	}
	return lo, rangeStart(bucket+1, total), false
}

// rangeStart is the first hash of bucket b of total: the smallest h with
// h × total ≥ b × 2^64, i.e. ⌈b × 2^64 / total⌉.
func rangeStart(b, total int) uint64 {
	quo, rem := bits.Div64(uint64(b), 0, uint64(total))
	if rem != 0 {
		quo++
	}
	return quo
}

// ShardSelector returns the shard selector of KEP-5866 (ListOptions'
// shardSelector, Kubernetes 1.36+ with the ShardedListAndWatch feature
// gate) that selects the objects of buckets among total: one
// shardRange(object.metadata.uid, '<lo>', '<hi>') per run of adjacent
// buckets, in ascending order, joined by " || ", each bound 0x and 16 hex
// digits but the end of the hash space, '0x10000000000000000' (2^64), as
// the API server writes them (it echoes the selector in the list's
// metadata.shardInfo). Duplicates and buckets outside [0, total) are
// ignored; with none left, it returns "", which selects nothing on its own
// but, sent, means no selector (every object): a replica without buckets
// has nothing to watch.
func ShardSelector(buckets []int, total int) string {
	bs := slices.Sorted(slices.Values(buckets))
	bs = slices.Compact(bs)
	var parts []string
	for i := 0; i < len(bs); {
		if bs[i] < 0 || bs[i] >= total {
			i++
			continue
		}
		j := i
		for j+1 < len(bs) && bs[j+1] == bs[j]+1 && bs[j+1] < total {
			j++
		}
		lo, _, _ := BucketRange(bs[i], total)
		_, hi, last := BucketRange(bs[j], total)
		end := fmt.Sprintf("0x%016x", hi)
		if last {
			end = "0x10000000000000000"
		}
		parts = append(parts, fmt.Sprintf("shardRange(object.metadata.uid, '0x%016x', '%s')", lo, end))
		i = j + 1
	}
	return strings.Join(parts, " || ")
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
