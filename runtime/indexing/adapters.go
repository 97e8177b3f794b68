package indexing

import (
	"context"
	"iter"
	"maps"

	"github.com/kopf-go/kopf/runtime/kwargs"
	"github.com/kopf-go/kopf/runtime/registry"
)

// The adapters below make a registry.IndexFn of an index function and the
// index it fills, one call per index in generated Register functions.
// Index functions return a map[K]V (Kopf's dict) or a single value V and
// whether there is one (Kopf's single value, under the key None). A nil
// map, or no single value, is Kopf's None: the result is ignored and the
// object's values in the index stay as they are; an empty map removes the
// object from the index. NoError
// adapts those that return no error. The typed ones decode the object as T
// once per event: a body that does not decode is the function's error.

// Func adapts an index function returning a map to the index idx.
func Func[K comparable, V any](idx Index[K, V], fn func(context.Context, kwargs.Index) (map[K]V, error)) registry.IndexFn {
	return writer[K, V]{idx.x, func(ctx context.Context, kw *kwargs.Index) (iter.Seq2[K, V], error) {
		m, err := fn(ctx, *kw)
		return seq(m), err
	}}
}

// TypedFunc adapts an index function of a resource of Go type T returning
// a map to the index idx.
func TypedFunc[T any, K comparable, V any](idx Index[K, V], fn func(context.Context, kwargs.TypedIndex[T]) (map[K]V, error)) registry.IndexFn {
	return writer[K, V]{idx.x, func(ctx context.Context, kw *kwargs.Index) (iter.Seq2[K, V], error) {
		typed, err := kwargs.DecodeIndex[T](kw)
		if err != nil {
			return nil, err
		}
		m, err := fn(ctx, typed)
		return seq(m), err
	}}
}

// ValueFunc adapts an index function returning a single value, or none
// (false), to the index idx, whose only key is None{}.
func ValueFunc[V any](idx Index[None, V], fn func(context.Context, kwargs.Index) (V, bool)) registry.IndexFn {
	return writer[None, V]{idx.x, func(ctx context.Context, kw *kwargs.Index) (iter.Seq2[None, V], error) {
		v, ok := fn(ctx, *kw)
		return single(v, ok), nil
	}}
}

// TypedValueFunc adapts an index function of a resource of Go type T
// returning a single value, or none (false), to the index idx.
func TypedValueFunc[T, V any](idx Index[None, V], fn func(context.Context, kwargs.TypedIndex[T]) (V, bool)) registry.IndexFn {
	return writer[None, V]{idx.x, func(ctx context.Context, kw *kwargs.Index) (iter.Seq2[None, V], error) {
		typed, err := kwargs.DecodeIndex[T](kw)
		if err != nil {
			return nil, err
		}
		v, ok := fn(ctx, typed)
		return single(v, ok), nil
	}}
}

// NoError adapts an index function returning a map without an error to
// the form with one (always nil).
func NoError[KW any, K comparable, V any](fn func(context.Context, KW) map[K]V) func(context.Context, KW) (map[K]V, error) {
	return func(ctx context.Context, kw KW) (map[K]V, error) { return fn(ctx, kw), nil }
}

// Present adapts an index function returning a bare single value (Kopf's
// index function returning a value that is not a dict) to the (V, bool)
// form: the value is always there.
func Present[KW, V any](fn func(context.Context, KW) V) func(context.Context, KW) (V, bool) {
	return func(ctx context.Context, kw KW) (V, bool) { return fn(ctx, kw), true }
}

// seq returns the pairs of a map; nil for a nil map (Kopf's None: the
// result is ignored), none for an empty one (the object leaves the index).
func seq[K comparable, V any](m map[K]V) iter.Seq2[K, V] {
	if m == nil {
		return nil
	}
	return maps.All(m)
}

// single returns a single value under None{}; nil for none (Kopf's None:
// the result is ignored).
func single[V any](v V, ok bool) iter.Seq2[None, V] {
	if !ok {
		return nil
	}
	return func(yield func(None, V) bool) { yield(None{}, v) }
}

// writer is an index function with its index: registry.IndexFn.
type writer[K comparable, V any] struct {
	x  *index[K, V]
	fn func(context.Context, *kwargs.Index) (iter.Seq2[K, V], error)
}

func (w writer[K, V]) Index(ctx context.Context, kw *kwargs.Index, obj string) error {
	pairs, err := w.fn(ctx, kw)
	if err != nil || pairs == nil {
		return err // nothing returned: the index is left as it is
	}
	w.x.replace(obj, pairs)
	return nil
}

func (w writer[K, V]) Discard(obj string) { w.x.discard(obj) }
