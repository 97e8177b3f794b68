package kwargs

import (
	"context"
	"time"
)

// Index are the arguments of an index function (Kopf's @kopf.index),
// in the body-only form: the object's resource kwargs. Patch is nil (an
// index function changes nothing: Kopf discards what it patches) and so is
// Memo (index functions run in the watch, apart from the object's
// handlers).
type Index struct {
	Base
	// Param is the index's param= option, as registered.
	Param any
	// Retry counts the failed attempts since the first failure of the
	// function for this object (0 when it last succeeded); Started is
	// when the first of them began (now, if none); Runtime is the time
	// since then. They matter with errors=temporary only.
	Retry   int
	Started time.Time
	Runtime time.Duration
}

// TypedIndex are the arguments of an index function of a resource
// whose objects are of the Go type T: every kwarg of Index, and the
// object decoded as T.
type TypedIndex[T any] struct {
	Index
	// Object is the body decoded as a T.
	Object *T
}

// DecodeIndex returns kw in the typed form for T: the body decoded as
// T, once per event and T (see the package doc).
func DecodeIndex[T any](kw *Index) (TypedIndex[T], error) {
	out := TypedIndex[T]{Index: *kw}
	var err error
	out.Object, err = decode[T](kw.decoded, 0, kw.Body)
	return out, err
}

// ShareDecoded starts a cache of typed views of kw's body, shared by kw and
// by every copy made of it from now on (see Changing.ShareDecoded).
func (kw *Index) ShareDecoded() {
	kw.decoded = &decodedCache{body: kw.Body}
}

// Embedded is implemented (through embedding) by the kwargs struct of a
// handler in a package with indices, which embeds the kwargs K of its
// kind and the package's indices:
//
//	type CreateFnKwargs struct {
//		kopf.ChangingKwargs
//		Indices
//	}
//
// *CreateFnKwargs implements Embedded[kwargs.Changing]: WithIndices fills
// the embedded K of such a struct. Every kwargs type of this package
// implements Embedded of itself (the typed forms of their own type, not
// of the body-only form they embed).
type Embedded[K any] interface {
	embedded() *K
}

func (kw *Changing) embedded() *Changing                 { return kw }
func (kw *TypedChanging[T]) embedded() *TypedChanging[T] { return kw }
func (kw *Event) embedded() *Event                       { return kw }
func (kw *TypedEvent[T]) embedded() *TypedEvent[T]       { return kw }
func (kw *Daemon) embedded() *Daemon                     { return kw }
func (kw *TypedDaemon[T]) embedded() *TypedDaemon[T]     { return kw }
func (kw *Timer) embedded() *Timer                       { return kw }
func (kw *TypedTimer[T]) embedded() *TypedTimer[T]       { return kw }
func (kw *Index) embedded() *Index                       { return kw }
func (kw *TypedIndex[T]) embedded() *TypedIndex[T]       { return kw }

// WithIndices adapts a handler whose kwargs KW embed the kwargs K of its
// kind and the package's indices to a handler of K: each call gets a copy
// of proto (a KW holding the indices, which are handles: every copy reads
// the same indices) with K set to the call's kwargs. Generated code uses
// it for every handler of a package with indices, with the runtime's
// adapter of the kind around it:
//
//	kopf.ChangingFunc(kopf.WithIndices[kopf.ChangingKwargs](CreateFnKwargs{Indices: indices}, CreateFn))
func WithIndices[K, KW any, P interface {
	*KW
	Embedded[K]
}](proto KW, fn func(context.Context, KW) (any, error)) func(context.Context, K) (any, error) {
	return func(ctx context.Context, kw K) (any, error) {
		out := proto
		*P(&out).embedded() = kw
		return fn(ctx, out)
	}
}

// WithIndicesEvent is WithIndices for event handlers, which return no
// result.
func WithIndicesEvent[K, KW any, P interface {
	*KW
	Embedded[K]
}](proto KW, fn func(context.Context, KW) error) func(context.Context, K) error {
	return func(ctx context.Context, kw K) error {
		out := proto
		*P(&out).embedded() = kw
		return fn(ctx, out)
	}
}

// WithIndicesWhen is WithIndices for when= callbacks (R is bool) and
// initial_delay=fn:F callbacks (R is time.Duration) that take a handler's
// kwargs with indices.
func WithIndicesWhen[K, KW any, P interface {
	*KW
	Embedded[K]
}, R any](proto KW, fn func(KW) R) func(K) R {
	return func(kw K) R {
		out := proto
		*P(&out).embedded() = kw
		return fn(out)
	}
}

func (kw *Activity) embedded() *Activity { return kw }
