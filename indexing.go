package kopf

import (
	"context"

	"github.com/kopf-go/kopf/runtime/indexing"
	"github.com/kopf-go/kopf/runtime/kwargs"
	"github.com/kopf-go/kopf/runtime/registry"
)

// Index is a read-only view of an index (Kopf's kopf.Index): for each key,
// the Store of the values that objects contributed under it. See
// docs/indexing.md and package runtime/indexing.
type Index[K comparable, V any] = indexing.Index[K, V]

// Store is a read-only view of the values contributed under one key of an
// Index (Kopf's kopf.Store).
type Store[V any] = indexing.Store[V]

// None is the key of an index whose function returns a single value:
// Kopf's None key.
type None = indexing.None

type (
	// IndexHandler is one index (Kopf's @kopf.index).
	IndexHandler = registry.IndexHandler
	// IndexFn is an index function together with the index it fills.
	IndexFn = registry.IndexFn
	// IndexKwargs are the arguments of an index function.
	IndexKwargs = kwargs.Index
)

// TypedIndexKwargs are the arguments of an index function of a
// resource of Go type T.
type TypedIndexKwargs[T any] = kwargs.TypedIndex[T]

// NewIndex returns a new empty index, for an IndexHandler to fill.
func NewIndex[K comparable, V any]() Index[K, V] { return indexing.New[K, V]() }

// IndexFunc adapts an index function returning a map (Kopf's dict) to the
// index idx.
func IndexFunc[K comparable, V any](idx Index[K, V], fn func(context.Context, IndexKwargs) (map[K]V, error)) IndexFn {
	return indexing.Func(idx, fn)
}

// TypedIndexFunc adapts an index function of a resource of Go type T
// returning a map to the index idx.
func TypedIndexFunc[T any, K comparable, V any](idx Index[K, V], fn func(context.Context, TypedIndexKwargs[T]) (map[K]V, error)) IndexFn {
	return indexing.TypedFunc(idx, fn)
}

// ValueIndexFunc adapts an index function returning a single value, or
// none (false), to the index idx, whose only key is None{}.
func ValueIndexFunc[V any](idx Index[None, V], fn func(context.Context, IndexKwargs) (V, bool)) IndexFn {
	return indexing.ValueFunc(idx, fn)
}

// TypedValueIndexFunc adapts an index function of a resource of Go type T
// returning a single value, or none (false), to the index idx.
func TypedValueIndexFunc[T, V any](idx Index[None, V], fn func(context.Context, TypedIndexKwargs[T]) (V, bool)) IndexFn {
	return indexing.TypedValueFunc(idx, fn)
}
