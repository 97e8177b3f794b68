package sharding

import (
	"fmt"
	"hash/fnv"
	"math"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func TestHashIsFNV1a64(t *testing.T) {
	tests := []struct {
		uid  string
		want uint64
	}{
		{"", 0xcbf29ce484222325}, // FNV-1a 64's offset basis
		{"a", 0xaf63dc4c8601ec8c},
		{"foobar", 0x85944171f73967e8},
	}
	for _, tt := range tests {
		if got := Hash(tt.uid); got != tt.want {
			t.Errorf("Hash(%q) = %#x, want %#x", tt.uid, got, tt.want)
		}
	}
	uid := "6d8e3b0a-2f4c-4a1e-9c57-0b8f3f1a2c3d"
	h := fnv.New64a()
	h.Write([]byte(uid))
	if got, want := Bucket(uid, 256), int(h.Sum64()>>56); got != want { // 256 ranges: the top byte
		t.Errorf("Bucket(%q, 256) = %d, want %d", uid, got, want)
	}
}

// uids returns n UUID-like strings.
func uids(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%08x-%04x-4%03x-8%03x-%012x", i*2654435761%(1<<32), i%65536, i%4096, (i*7)%4096, i*40503)
	}
	return out
}

func TestBucketsAreEven(t *testing.T) {
	for _, buckets := range []int{16, 64, 256} {
		t.Run(fmt.Sprint(buckets), func(t *testing.T) {
			counts := make([]int, buckets)
			const n = 100_000
			for _, uid := range uids(n) {
				counts[Bucket(uid, buckets)]++
			}
			mean := float64(n) / float64(buckets)
			for b, c := range counts {
				if math.Abs(float64(c)-mean) > 0.2*mean {
					t.Errorf("bucket %d has %d objects, the mean is %.0f", b, c, mean)
				}
			}
		})
	}
}

func members(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("operator-%d@%d", i, 1000+i)
	}
	return out
}

// Rendezvous hashing moves only the buckets of the member that joins or
// leaves: about buckets/N of them, and none between the others.
func TestRendezvousMovesFewBuckets(t *testing.T) {
	tests := []struct {
		name          string
		buckets       int
		before, after []string
	}{
		{"3 to 4, 64 buckets", 64, members(3), members(4)},
		{"4 to 3, 64 buckets", 64, members(4), members(3)},
		{"3 to 2 (one killed), 256 buckets", 256, members(3), append(members(1), members(3)[2])},
		{"1 to 2, 256 buckets", 256, members(1), members(2)},
		{"9 to 10, 256 buckets", 256, members(9), members(10)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before, after := Assign(tt.buckets, tt.before), Assign(tt.buckets, tt.after)
			moved := 0
			for b := range before {
				if before[b] == after[b] {
					continue
				}
				moved++
				// A bucket moves only from a member that left or to one
				// that joined.
				if slices.Contains(tt.after, before[b]) && slices.Contains(tt.before, after[b]) {
					t.Errorf("bucket %d moved from %s to %s, both members before and after", b, before[b], after[b])
				}
			}
			n := max(len(tt.before), len(tt.after))
			expected := float64(tt.buckets) / float64(n)
			if float64(moved) > 1.6*expected || float64(moved) < 0.4*expected {
				t.Errorf("%d of %d buckets moved, expected about %.1f (1/%d)", moved, tt.buckets, expected, n)
			}
			t.Logf("%d of %d buckets moved (1/N = %.1f)", moved, tt.buckets, expected)
		})
	}
}

func TestAssignmentIsBalancedAndDeterministic(t *testing.T) {
	for _, n := range []int{2, 3, 4, 8} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			ms := members(n)
			a := Assign(256, ms)
			reversed := slices.Clone(ms)
			slices.Reverse(reversed)
			if b := Assign(256, reversed); !slices.Equal(a, b) {
				t.Fatal("the assignment depends on the members' order")
			}
			counts := map[string]int{}
			for _, m := range a {
				counts[m]++
			}
			mean := 256.0 / float64(n)
			for _, m := range ms {
				if c := float64(counts[m]); c < 0.6*mean || c > 1.4*mean {
					t.Errorf("%s owns %d of 256 buckets, the mean is %.0f", m, counts[m], mean)
				}
			}
		})
	}
	if got := Owner(3, nil); got != "" {
		t.Errorf("Owner without members = %q, want \"\"", got)
	}
}

// Every bucket is one range of the hash space, the ranges in the buckets'
// order, adjacent and covering it: each bound belongs to the bucket it
// starts, the hash before it to the bucket before.
func TestBucketRanges(t *testing.T) {
	for _, total := range []int{1, 2, 3, 7, 64, 100, 256, 1 << 20} {
		t.Run(fmt.Sprint(total), func(t *testing.T) {
			next := uint64(0)
			for b := range total {
				lo, hi, last := BucketRange(b, total)
				if lo != next {
					t.Fatalf("bucket %d starts at %#x, the previous ends at %#x", b, lo, next)
				}
				if last != (b == total-1) {
					t.Fatalf("bucket %d: last = %v", b, last)
				}
				if hashBucket(lo, total) != b || (b > 0 && hashBucket(lo-1, total) != b-1) {
					t.Fatalf("bucket %d starts at %#x, whose bucket is %d (the one before: %d)", b, lo, hashBucket(lo, total), hashBucket(lo-1, total))
				}
				if last {
					if hi != 0 || hashBucket(math.MaxUint64, total) != b {
						t.Fatalf("the last bucket %d: hi %#x, the bucket of 2^64-1 is %d", b, hi, hashBucket(math.MaxUint64, total))
					}
					continue
				}
				if hi <= lo || hashBucket(hi-1, total) != b {
					t.Fatalf("bucket %d is [%#x, %#x)", b, lo, hi)
				}
				next = hi
			}
		})
	}
	if lo, hi, _ := BucketRange(1, 4); lo != 0x4000000000000000 || hi != 0x8000000000000000 {
		t.Errorf("BucketRange(1, 4) = [%#x, %#x), want [0x4000000000000000, 0x8000000000000000)", lo, hi)
	}
}

func TestShardSelector(t *testing.T) {
	const (
		half0 = "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')"
		half1 = "shardRange(object.metadata.uid, '0x8000000000000000', '0x10000000000000000')"
	)
	tests := []struct {
		name    string
		buckets []int
		total   int
		want    string
	}{
		{"first of two", []int{0}, 2, half0},
		{"last of two: to 2^64", []int{1}, 2, half1},
		{"all, merged", []int{1, 0}, 2, "shardRange(object.metadata.uid, '0x0000000000000000', '0x10000000000000000')"},
		{"one bucket of one", []int{0}, 1, "shardRange(object.metadata.uid, '0x0000000000000000', '0x10000000000000000')"},
		{"adjacent merged, sorted, duplicates", []int{3, 0, 1, 1}, 4,
			"shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000') || shardRange(object.metadata.uid, '0xc000000000000000', '0x10000000000000000')"},
		{"thirds: rounded up", []int{1}, 3, "shardRange(object.metadata.uid, '0x5555555555555556', '0xaaaaaaaaaaaaaaab')"},
		{"none", nil, 4, ""},
		{"out of range ignored", []int{-1, 4, 0}, 4, "shardRange(object.metadata.uid, '0x0000000000000000', '0x4000000000000000')"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ShardSelector(tt.buckets, tt.total); got != tt.want {
				t.Errorf("ShardSelector(%v, %d) =\n%s\nwant\n%s", tt.buckets, tt.total, got, tt.want)
			}
		})
	}
}

// shardRangeRE is a range of a selector as the API server parses it.
var shardRangeRE = regexp.MustCompile(`^shardRange\(object\.metadata\.uid, '(0x[0-9a-f]{16}|0x10000000000000000)', '(0x[0-9a-f]{16}|0x10000000000000000)'\)$`)

// selects evaluates a shard selector as kube-apiserver 1.36 does
// (k8s.io/apimachinery/pkg/sharding): the hash as 0x and 16 hex digits,
// within a range if not less than its start and less than its end, the
// strings compared by length, then bytes.
func selects(t *testing.T, selector, uid string) bool {
	t.Helper()
	hexLess := func(a, b string) bool {
		if len(a) != len(b) {
			return len(a) < len(b)
		}
		return a < b
	}
	hash := fmt.Sprintf("0x%016x", Hash(uid))
	for _, part := range strings.Split(selector, " || ") {
		m := shardRangeRE.FindStringSubmatch(part)
		if m == nil {
			t.Fatalf("not a range of KEP-5866: %q", part)
		}
		if !hexLess(hash, m[1]) && hexLess(hash, m[2]) {
			return true
		}
	}
	return false
}

// The API server's evaluation of a replica's selector admits exactly the
// objects of its buckets.
func TestShardSelectorSelectsTheBuckets(t *testing.T) {
	all := uids(2000)
	for _, total := range []int{3, 64} {
		for _, n := range []int{2, 5} {
			owners := Assign(total, members(n))
			for _, m := range members(n) {
				var mine []int
				for b, o := range owners {
					if o == m {
						mine = append(mine, b)
					}
				}
				sel := ShardSelector(mine, total)
				if sel == "" {
					continue
				}
				for _, uid := range all {
					if got, want := selects(t, sel, uid), owners[Bucket(uid, total)] == m; got != want {
						t.Fatalf("%d buckets, %s: the selector selects %s: %v, its bucket %d is %s's", total, m, uid, got, Bucket(uid, total), owners[Bucket(uid, total)])
					}
				}
			}
		}
	}
}
