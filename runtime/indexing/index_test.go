package indexing

import (
	"iter"
	"maps"
	"slices"
	"sync"
	"testing"
)

// contents renders an index as key → sorted values.
func contents[K comparable, V any](idx Index[K, V]) map[K][]V {
	out := map[K][]V{}
	for k, s := range idx.All() {
		out[k] = s.Values()
	}
	return out
}

func TestIndexReplaceAndDiscard(t *testing.T) {
	type step struct {
		obj     string
		pairs   map[string]int // nil: discard
		discard bool
	}
	tests := []struct {
		name  string
		steps []step
		want  map[string][]int // values sorted
	}{
		{"empty", nil, map[string][]int{}},
		{"one object, two keys", []step{{obj: "ns/a", pairs: map[string]int{"x": 1, "y": 2}}}, map[string][]int{"x": {1}, "y": {2}}},
		{"two objects under one key", []step{
			{obj: "ns/a", pairs: map[string]int{"x": 1}},
			{obj: "ns/b", pairs: map[string]int{"x": 2}},
		}, map[string][]int{"x": {1, 2}}},
		{"three objects under one key, the first leaves", []step{
			{obj: "ns/a", pairs: map[string]int{"x": 1}},
			{obj: "ns/b", pairs: map[string]int{"x": 2}},
			{obj: "ns/c", pairs: map[string]int{"x": 3}},
			{obj: "ns/a", discard: true},
		}, map[string][]int{"x": {2, 3}}},
		{"a new event replaces the whole contribution", []step{
			{obj: "ns/a", pairs: map[string]int{"x": 1, "y": 2}},
			{obj: "ns/a", pairs: map[string]int{"y": 3, "z": 4}},
		}, map[string][]int{"y": {3}, "z": {4}}},
		{"nothing returned removes the object", []step{
			{obj: "ns/a", pairs: map[string]int{"x": 1}},
			{obj: "ns/b", pairs: map[string]int{"x": 2}},
			{obj: "ns/a", pairs: map[string]int{}},
		}, map[string][]int{"x": {2}}},
		{"deletion removes keys left empty", []step{
			{obj: "ns/a", pairs: map[string]int{"x": 1, "y": 1}},
			{obj: "ns/b", pairs: map[string]int{"y": 2}},
			{obj: "ns/a", discard: true},
		}, map[string][]int{"y": {2}}},
		{"discarding an unknown object changes nothing", []step{
			{obj: "ns/a", pairs: map[string]int{"x": 1}},
			{obj: "ns/zz", discard: true},
		}, map[string][]int{"x": {1}}},
		{"the same object again with a new value", []step{
			{obj: "ns/a", pairs: map[string]int{"x": 1}},
			{obj: "ns/b", pairs: map[string]int{"x": 2}},
			{obj: "ns/b", pairs: map[string]int{"x": 5}},
		}, map[string][]int{"x": {1, 5}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			idx := New[string, int]()
			for _, s := range tt.steps {
				if s.discard {
					idx.x.discard(s.obj)
				} else {
					idx.x.replace(s.obj, maps.All(s.pairs))
				}
			}
			got := contents(idx)
			for _, v := range got {
				slices.Sort(v)
			}
			if !maps.EqualFunc(got, tt.want, slices.Equal) {
				t.Errorf("index = %v, want %v", got, tt.want)
			}
			if idx.Len() != len(tt.want) {
				t.Errorf("Len() = %d, want %d", idx.Len(), len(tt.want))
			}
			for k, vs := range tt.want {
				s, ok := idx.Get(k)
				if !ok || s.Len() != len(vs) {
					t.Errorf("Get(%q) = %d values, %v; want %d, true", k, s.Len(), ok, len(vs))
				}
			}
			if _, ok := idx.Get("absent"); ok {
				t.Errorf("Get(absent) found a store")
			}
			// No object is remembered without a contribution.
			for obj, keys := range idx.x.reverse {
				if len(keys) == 0 {
					t.Errorf("object %s is remembered with no keys", obj)
				}
			}
		})
	}
}

func TestZeroValues(t *testing.T) {
	var idx Index[[2]string, bool]
	if idx.Len() != 0 {
		t.Errorf("zero Index: Len() = %d", idx.Len())
	}
	if _, ok := idx.Get([2]string{"a", "b"}); ok {
		t.Errorf("zero Index: Get found a store")
	}
	for range idx.All() {
		t.Errorf("zero Index: All yielded")
	}
	var s Store[int]
	if s.Len() != 0 || s.Values() != nil {
		t.Errorf("zero Store is not empty")
	}
}

func TestStoreIsLive(t *testing.T) {
	idx := New[string, int]()
	idx.x.replace("ns/a", maps.All(map[string]int{"x": 1}))
	s, _ := idx.Get("x")
	idx.x.replace("ns/b", maps.All(map[string]int{"x": 2}))
	if s.Len() != 2 {
		t.Errorf("the store has %d values after another object joined its key, want 2", s.Len())
	}
	idx.x.discard("ns/a")
	idx.x.discard("ns/b")
	if s.Len() != 0 {
		t.Errorf("the store has %d values after its key left the index, want 0", s.Len())
	}
}

// Iterations yield without holding the lock: the loop may read the index
// again, and a writer waiting meanwhile is not deadlocked.
func TestIterationsDoNotHoldTheLock(t *testing.T) {
	idx := New[int, int]()
	for i := range 10 {
		idx.x.replace(string(rune('a'+i)), single2(i, i))
	}
	var wg sync.WaitGroup
	n := 0
	for k, s := range idx.All() {
		wg.Add(1)
		go func() { // a writer
			defer wg.Done()
			idx.x.replace("writer", single2(k, -1))
		}()
		wg.Wait() // would deadlock if All held the read lock
		if _, ok := idx.Get(k); !ok || s.Len() == 0 {
			t.Errorf("key %d vanished", k)
		}
		for range s.All() {
		}
		n++
	}
	if n != 10 {
		t.Errorf("All yielded %d keys, want 10 (a snapshot)", n)
	}
	keys := slices.Collect(idx.Keys())
	if len(keys) != 10 {
		t.Errorf("Keys yielded %d keys, want 10", len(keys))
	}
}

func single2[K comparable, V any](k K, v V) iter.Seq2[K, V] {
	return func(yield func(K, V) bool) { yield(k, v) }
}

// Readers and the writer run at once: go test -race checks them.
func TestConcurrentReadsAndWrites(t *testing.T) {
	idx := New[string, int]()
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				for _, s := range idx.All() {
					_ = s.Len()
					_ = s.Values()
				}
				_, _ = idx.Get("k1")
			}
		}()
	}
	for i := range 2000 {
		obj := string(rune('a' + i%26))
		if i%7 == 0 {
			idx.x.discard(obj)
		} else {
			idx.x.replace(obj, single2("k"+string(rune('0'+i%3)), i))
		}
	}
	close(stop)
	wg.Wait()
}
