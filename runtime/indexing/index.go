// Package indexing holds the operator's in-memory indices of objects
// (Kopf's @kopf.index): typed, read-only views for handlers, written by the
// runtime only.
//
// # Semantics
//
// An index function is called for every object of its resource (that
// matches its filters) on every watch event, and returns the object's
// contribution: a set of key-value pairs. [Index] maps each key to a
// [Store]: the values contributed under that key by all the objects, one
// per object. A new event of an object replaces its whole contribution
// (keys it no longer returns lose its value; a key left with no values
// leaves the index); a deleted object and one that stops matching the
// filters contribute nothing, and so does one whose function returns an
// empty map. A function that returns nothing (a nil map, or no single
// value: Kopf's None) leaves the object's contribution as it was, and so
// does one that fails (returns an error or panics), which is logged and
// ignored, as Kopf's indices are (errors=ignored): the stale values stay
// until the object's next event calls the function again. This is Kopf's
// OperatorIndexer, except that objects are told apart by namespace and
// name (Kopf adds the uid, which a relist's deletions lack).
//
// Kopf's shapes of results become Go types: a dict is a map[K]V, whose
// key type K may be any comparable type (Kopf's tuples are arrays such as
// [2]string or structs); a single value is a V under the key [None]{} (Kopf's
// None key), in an Index[None, V].
//
// # Concurrency
//
// An index is written by one goroutine per watched resource and read by
// any number of handlers at once, under a sync.RWMutex. Reads are short:
// Get and Len take the read lock once; iterations (Index.All, Index.Keys,
// Store.All) copy what they yield under the read lock and yield it
// without holding it, so that a handler may do anything inside the loop
// (including reading the index again) and never holds up the watch. What
// an iteration yields is a snapshot; a Store is a live view of its key.
//
// # Memory
//
// An index holds only what its function returns, with the key of each
// contributing object (its "namespace/name", shared with the watch's own
// bookkeeping) and the keys it contributed under. A key with one value
// (the most common case: one object per key) keeps it inline, without a
// map of its own.
package indexing

import (
	"iter"
	"sync"
)

// None is the key of an index whose function returns a single value
// instead of key-value pairs: Kopf's None key.
type None = struct{}

// Index is a read-only view of one index: for each key, the [Store] of
// the values that objects contributed under it. The zero Index is empty
// and stays so; indices are made by [New] and filled by the runtime.
// Index is a small handle: copies of it are the same index.
type Index[K comparable, V any] struct {
	x *index[K, V]
}

// Store is a read-only view of the values contributed under one key of an
// index, one per contributing object, in no particular order. It is live:
// it follows the index while the key is in it (and is empty once the key
// has left it). The zero Store is empty.
type Store[V any] struct {
	mu *sync.RWMutex
	s  *store[V]
}

type index[K comparable, V any] struct {
	mu sync.RWMutex
	// items are the stores by key; reverse are the keys each object
	// contributed under, by the object's key.
	items   map[K]*store[V]
	reverse map[string][]K
}

// store holds one key's values: the first object's inline, the others in
// a map only when there are more.
type store[V any] struct {
	obj  string // the first object, "" if none
	val  V
	more map[string]V
}

// New returns a new empty index.
func New[K comparable, V any]() Index[K, V] {
	return Index[K, V]{x: &index[K, V]{items: map[K]*store[V]{}, reverse: map[string][]K{}}}
}

// Len returns the number of keys in the index.
func (i Index[K, V]) Len() int {
	if i.x == nil {
		return 0
	}
	i.x.mu.RLock()
	defer i.x.mu.RUnlock()
	return len(i.x.items)
}

// Get returns the store of a key, and whether the key is in the index
// (Kopf's index[key] and key in index).
func (i Index[K, V]) Get(key K) (Store[V], bool) {
	if i.x == nil {
		return Store[V]{}, false
	}
	i.x.mu.RLock()
	defer i.x.mu.RUnlock()
	s, ok := i.x.items[key]
	if !ok {
		return Store[V]{}, false
	}
	return Store[V]{mu: &i.x.mu, s: s}, true
}

// All yields the keys of the index with their stores (Kopf's
// index.items()), as they were when the iteration started, in no
// particular order.
func (i Index[K, V]) All() iter.Seq2[K, Store[V]] {
	return func(yield func(K, Store[V]) bool) {
		if i.x == nil {
			return
		}
		type item struct {
			k K
			s *store[V]
		}
		i.x.mu.RLock()
		items := make([]item, 0, len(i.x.items))
		for k, s := range i.x.items {
			items = append(items, item{k, s})
		}
		i.x.mu.RUnlock()
		for _, it := range items {
			if !yield(it.k, Store[V]{mu: &i.x.mu, s: it.s}) {
				return
			}
		}
	}
}

// Keys yields the keys of the index (Kopf's iteration over an index), as
// they were when the iteration started, in no particular order.
func (i Index[K, V]) Keys() iter.Seq[K] {
	return func(yield func(K) bool) {
		for k := range i.All() {
			if !yield(k) {
				return
			}
		}
	}
}

// Len returns the number of values in the store: the number of objects
// that contributed under its key.
func (s Store[V]) Len() int {
	if s.s == nil {
		return 0
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.s.len()
}

// All yields the values of the store (Kopf's iteration over a store), as
// they were when the iteration started.
func (s Store[V]) All() iter.Seq[V] {
	return func(yield func(V) bool) {
		for _, v := range s.Values() {
			if !yield(v) {
				return
			}
		}
	}
}

// Values returns the values of the store in a new slice.
func (s Store[V]) Values() []V {
	if s.s == nil {
		return nil
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]V, 0, s.s.len())
	if s.s.obj != "" {
		out = append(out, s.s.val)
	}
	for _, v := range s.s.more {
		out = append(out, v)
	}
	return out
}

func (s *store[V]) len() int {
	n := len(s.more)
	if s.obj != "" {
		n++
	}
	return n
}

// put sets obj's value.
func (s *store[V]) put(obj string, v V) {
	if s.obj == obj {
		s.val = v
		return
	}
	if _, ok := s.more[obj]; ok {
		s.more[obj] = v
		return
	}
	if s.obj == "" {
		s.obj, s.val = obj, v
		return
	}
	if s.more == nil {
		s.more = map[string]V{}
	}
	s.more[obj] = v
}

// remove drops obj's value.
func (s *store[V]) remove(obj string) {
	if s.obj == obj {
		var zero V
		s.obj, s.val = "", zero
		return
	}
	delete(s.more, obj)
	if len(s.more) == 0 {
		s.more = nil
	}
}

// replace makes pairs the whole contribution of the object obj (its
// "namespace/name"): its values under keys it no longer contributes under
// are removed. An empty pairs removes the object from the index.
func (x *index[K, V]) replace(obj string, pairs iter.Seq2[K, V]) {
	x.mu.Lock()
	defer x.mu.Unlock()
	old := x.reverse[obj]
	var keys []K
	for k, v := range pairs {
		s := x.items[k]
		if s == nil {
			s = &store[V]{}
			x.items[k] = s
		}
		s.put(obj, v)
		keys = appendNew(keys, k)
	}
	for _, k := range old {
		if !contains(keys, k) {
			x.drop(obj, k)
		}
	}
	if len(keys) == 0 {
		delete(x.reverse, obj)
		return
	}
	x.reverse[obj] = keys
}

// discard removes the object's whole contribution.
func (x *index[K, V]) discard(obj string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, k := range x.reverse[obj] {
		x.drop(obj, k)
	}
	delete(x.reverse, obj)
}

// drop removes obj's value under k, and k if no value is left.
func (x *index[K, V]) drop(obj string, k K) {
	s := x.items[k]
	if s == nil {
		return
	}
	s.remove(obj)
	if s.len() == 0 {
		delete(x.items, k)
	}
}

func contains[K comparable](keys []K, k K) bool {
	for _, have := range keys {
		if have == k {
			return true
		}
	}
	return false
}

func appendNew[K comparable](keys []K, k K) []K {
	if contains(keys, k) {
		return keys
	}
	return append(keys, k)
}
