package sharding

import (
	"fmt"
	"hash/fnv"
	"math"
	"slices"
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
