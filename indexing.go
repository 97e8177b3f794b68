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

// NoError adapts an index function returning a map without an error to
// the form with one (always nil).
func NoError[KW any, K comparable, V any](fn func(context.Context, KW) map[K]V) func(context.Context, KW) (map[K]V, error) {
	return indexing.NoError(fn)
}

// IndexWhen adapts a when= callback of an index.
func IndexWhen(fn func(IndexKwargs) bool) func(*IndexKwargs) bool {
	return registry.IndexWhen(fn)
}

// TypedIndexWhen adapts a when= callback of an index of a resource of Go
// type T.
func TypedIndexWhen[T any](fn func(TypedIndexKwargs[T]) bool) func(*IndexKwargs) bool {
	return registry.TypedIndexWhen(fn)
}

// WithIndices adapts a handler whose kwargs KW embed the kwargs K of its
// kind and the package's indices (generated for packages with indices) to
// a handler of K, for the adapter of its kind:
//
//	kopf.ChangingFunc(kopf.WithIndices[kopf.ChangingKwargs](CreateFnKwargs{Indices: indices}, CreateFn))
//
// proto holds the indices; each call gets a copy of it with K set.
func WithIndices[K, KW any, P interface {
	*KW
	kwargs.Embedded[K]
}](proto KW, fn func(context.Context, KW) (any, error)) func(context.Context, K) (any, error) {
	return kwargs.WithIndices[K, KW, P](proto, fn)
}

// WithIndicesEvent is WithIndices for event handlers, which return no
// result.
func WithIndicesEvent[K, KW any, P interface {
	*KW
	kwargs.Embedded[K]
}](proto KW, fn func(context.Context, KW) error) func(context.Context, K) error {
	return kwargs.WithIndicesEvent[K, KW, P](proto, fn)
}

// WithIndicesWhen is WithIndices for when= callbacks that take a
// handler's kwargs with indices.
func WithIndicesWhen[K, KW any, P interface {
	*KW
	kwargs.Embedded[K]
}](proto KW, fn func(KW) bool) func(K) bool {
	return kwargs.WithIndicesWhen[K, KW, P](proto, fn)
}
