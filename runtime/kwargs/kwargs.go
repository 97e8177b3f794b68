// Package kwargs defines what the reactor gives to handlers: one type per
// kind of handler, holding every keyword argument Kopf gives that kind.
//
// # Design
//
// Each kind of handler has one kwargs type in two forms:
//
//   - the body-only form, for resources without a Go type: [Changing]
//     (create, update, delete, resume and field handlers) and [Event]
//     (on.event). The object is a [body.Body] (a JSON tree) with its views
//     (Spec, Meta, Status, Name, Labels, ...), and Old and New are the
//     essences (or, with field=, the field's values) as JSON values. These
//     are what the reactor builds, once per cycle, and what filters and
//     registry functions (registry.ChangingFn, registry.EventFn) take.
//   - the typed form, generic over the resource's Go type T (in the spirit
//     of client-go's gentype: one generic implementation, no generated
//     code per type): [TypedChanging][T] and [TypedEvent][T]. It embeds the
//     body-only form, so every kwarg is there under the same name, and adds
//     Object *T, the body decoded as T; TypedChanging also shadows Old and
//     New with the old and new essences decoded as T (whole objects, also
//     for field handlers, whose field values stay in Changing.Old and
//     Changing.New, and whose Diff is reduced to the field). Spec and
//     Status stay the body's views: a generic type cannot name T's fields,
//     so the typed ones are kw.Object.Spec and kw.Object.Status.
//
// Generated code declares nothing per kwargs type: a handler's kwargs type
// is an alias named after it, for IDE completion and for documentation,
// of the form its resource calls for:
//
//	type CreateFnKwargs = kopf.ChangingKwargs                   // untyped
//	type CreateFnKwargs = kopf.TypedChangingKwargs[KopfExample] // typed
//
// and registers the handler through the adapters of package registry
// (registry.ChangingFunc, registry.TypedChangingFunc, ...), which convert
// the reactor's kwargs into the handler's. In a package with indices
// (Kopf's @kopf.index), the kwargs type is instead a struct embedding the
// kind's type and the package's generated Indices, filled by [WithIndices]
// (see indexing.go); index functions get [Index] and [TypedIndex][T]. Daemons and timers have [Daemon]
// and [Timer], with [TypedDaemon][T] and [TypedTimer][T] (decoded on every
// invocation: they are built once per call, not per cycle); admission
// webhook handlers have [Admission] and [TypedAdmission][T] (decoded once
// per admission request).
//
// # Decoding once per cycle
//
// User code gets a deep copy of the object, made by the reactor at most
// once per cycle (runtime/reactor/userdata.go). The reactor calls
// [Changing.ShareDecoded] (or [Event.ShareDecoded]) on that copy: from then
// on, the copy and every copy made of it (the narrowed kwargs of each
// handler, the kwargs of sub-handlers) share one cache of decoded objects.
// [DecodeChanging] and [DecodeEvent] decode the body, and Old and New, into
// a T at most once per cycle and per T, whichever of the handlers, their
// when= callbacks and their sub-handlers asks first; they all get the same
// *T, which is theirs to read and change as the body is (changes to it are
// not written back: use Patch). Kwargs without a shared cache (built by
// hand, in tests) are decoded on every call.
//
// Decoding uses apimachinery's DefaultUnstructuredConverter, as client-go's
// dynamic informers do; a body that does not decode as T is an error of the
// handler (its when= callback matches, so that the handler runs and
// reports it), never a panic: a [DecodeError], which names the field that
// does not fit.
package kwargs

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kopf-go/kopf/runtime/body"
	"github.com/kopf-go/kopf/runtime/causes"
	"github.com/kopf-go/kopf/runtime/diffs"
	"github.com/kopf-go/kopf/runtime/patches"
	"github.com/kopf-go/kopf/runtime/resources"
)

// Memo is free-form per-object memory, kept for as long as the operator
// watches the object. It is only touched by that object's worker, so it
// needs no locking inside a handler.
type Memo map[string]any

// Base are the arguments of every handler that serves one object (Kopf's
// resource kwargs), embedded in the kwargs of each kind, so that they read
// as the kind's own: kw.Name, kw.Spec, kw.Resource (the served resource).
type Base struct {
	// Resource is the served resource, as resolved through the cluster's
	// discovery.
	Resource resources.Resource
	// Body is the whole object; Spec, Meta and Status are its parts.
	Body   body.Body
	Spec   body.Spec
	Meta   body.Meta
	Status body.Status
	// UID, Name and Namespace are the object's metadata.uid, .name and
	// .namespace (empty for cluster-scoped objects).
	UID       string
	Name      string
	Namespace string
	// Labels and Annotations are the object's metadata.labels and
	// .annotations.
	Labels      map[string]string
	Annotations map[string]string
	// Patch collects the changes the handler wants made to the object;
	// they are applied after the handler returns, with the reactor's own.
	Patch patches.Patch
	// Logger logs messages about the object (Kopf's per-object logger).
	Logger *slog.Logger
	// Memo is free-form memory kept per object while the operator runs.
	Memo Memo
	// Cluster is the name of the object's cluster in a fleet operator
	// (see package clusters); "" in a single-cluster operator. The
	// handler's context is that cluster's: its clients (kopf.Client,
	// kopf.RESTConfig) talk to it.
	Cluster string

	// decoded caches typed views of this version of the object; shared by
	// the copies of one cycle's user kwargs (see ShareDecoded).
	decoded *decodedCache
}

// Changing are the arguments of create, update, delete, resume and field
// handlers, in the body-only form.
type Changing struct {
	Base
	// Param is the handler's param= option, as registered.
	Param any
	// Retry counts the previous attempts of this handler for this cause.
	Retry int
	// Started is when the handler was first attempted for this cause.
	Started time.Time
	// Runtime is how long the handler has been attempted so far.
	Runtime time.Duration
	// Reason is the cause of this invocation: create, update, delete or
	// resume.
	Reason causes.Reason
	// Old and New are the object's essence before and after the change
	// (with field=, the field's values), nil if there was or is none.
	Old any
	New any
	// Diff lists the changes from Old to New.
	Diff diffs.Diff
}

// Event are the arguments of event-watching handlers (on.event), in the
// body-only form.
type Event struct {
	Base
	// Param is the handler's param= option, as registered.
	Param any
	// Type is the watch event's type: "ADDED", "MODIFIED", "DELETED", or ""
	// for objects seen in a listing (Kopf's None).
	Type string
	// Event is the raw event: {"type": Type or nil, "object": Body}.
	Event map[string]any
}

// TypedChanging are the arguments of a changing handler of a resource whose
// objects are of the Go type T: every kwarg of Changing, and the object
// and its essences decoded as T.
type TypedChanging[T any] struct {
	Changing
	// Object is the body decoded as a T.
	Object *T
	// Old and New are the essences before and after the change decoded as
	// T (whole objects, also with field=: the field's values are
	// Changing.Old and Changing.New), nil if there was or is none; Old is
	// nil too if the old essence does not decode as T (the change fixes
	// it; Changing.Old keeps it).
	Old, New *T
}

// TypedEvent are the arguments of an event-watching handler of a resource
// whose objects are of the Go type T: every kwarg of Event, and the object
// decoded as T.
type TypedEvent[T any] struct {
	Event
	// Object is the body decoded as a T.
	Object *T
}

// FromBody fills the object-derived fields from a body. Body, Spec, Meta
// and Status are the body's own maps (Labels and Annotations are copies):
// give user code a body of its own (body.Body.DeepCopy), as the reactor
// does, so that what user code changes in it is never seen elsewhere.
func FromBody(res resources.Resource, b body.Body, p patches.Patch, logger *slog.Logger, memo Memo) Base {
	meta := b.Meta()
	return Base{
		Resource:    res,
		Body:        b,
		Spec:        b.Spec(),
		Meta:        meta,
		Status:      b.Status(),
		UID:         meta.UID(),
		Name:        meta.Name(),
		Namespace:   meta.Namespace(),
		Labels:      meta.Labels(),
		Annotations: meta.Annotations(),
		Patch:       p,
		Logger:      logger,
		Memo:        memo,
	}
}

// decodedCache holds the typed views of one version of an object: its
// body, old and new essences as the cycle began (before any narrowing to a
// field), and what was decoded from them, by Go type. It is used by one
// object's worker at a time, so it needs no locking.
type decodedCache struct {
	body     body.Body
	old, new any
	values   map[decodedKey]decodedValue
}

type decodedKey struct {
	typ   reflect.Type
	which int // 0: body, 1: old, 2: new
}

type decodedValue struct {
	ptr any
	err error
}

// ShareDecoded starts a cache of typed views of kw's body and essences,
// shared by kw and by every copy made of it from now on: typed adapters
// then decode each of them at most once per Go type. The reactor calls it
// once per cycle, on user code's copy, before narrowing it to handlers'
// fields.
func (kw *Changing) ShareDecoded() {
	kw.decoded = &decodedCache{body: kw.Body, old: kw.Old, new: kw.New}
}

// ShareDecoded starts a cache of typed views of kw's body, shared by kw and
// by every copy made of it from now on (see Changing.ShareDecoded).
func (kw *Event) ShareDecoded() {
	kw.decoded = &decodedCache{body: kw.Body}
}

// decode returns v decoded as a *T (nil for a nil or non-object v),
// through the cache c if there is one.
func decode[T any](c *decodedCache, which int, v any) (*T, error) {
	var key decodedKey
	if c != nil {
		key = decodedKey{reflect.TypeFor[T](), which}
		if got, ok := c.values[key]; ok {
			ptr, _ := got.ptr.(*T)
			return ptr, got.err
		}
	}
	var obj *T
	var err error
	if m, ok := v.(map[string]any); ok && m != nil {
		obj = new(T)
		if err = runtime.DefaultUnstructuredConverter.FromUnstructured(m, obj); err != nil {
			obj = nil
			err = newDecodeError[T](m, err)
		}
	} else if b, ok := v.(body.Body); ok && b != nil {
		return decode[T](c, which, map[string]any(b))
	}
	if c != nil {
		if c.values == nil {
			c.values = map[decodedKey]decodedValue{}
		}
		c.values[key] = decodedValue{obj, err}
	}
	return obj, err
}

// DecodeError is an object (its body, or its old or new essence) that does
// not decode as the handler's Go type: a field's value of a JSON type that
// the Go field cannot hold (a string where the Go type has an int), which
// a CRD without a schema or with x-kubernetes-preserve-unknown-fields
// lets in. Its message names the field:
//
//	decoding the object as v1.Widget: field spec.replicas holds a string, not int32 (unrecognized type: int32)
//
// Decoding the same object fails the same way on every attempt, so a
// changing handler fails permanently on it (runtime/execution) instead of
// being retried: once per change of the object.
type DecodeError struct {
	// Type is the Go type decoded into.
	Type reflect.Type
	// Field is the path of the field that does not fit (e.g.
	// "spec.replicas", as encoding/json names it), "" if it is not known;
	// Value is the JSON type of its value ("string", "number", "object"…);
	// FieldType is the Go type of the field (nil if not known).
	Field, Value string
	FieldType    reflect.Type
	// Err is apimachinery's converter's error, which names no field.
	Err error
}

func (e *DecodeError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("decoding the object as %s: %v", e.Type, e.Err)
	}
	article := "a"
	if strings.ContainsAny(e.Value[:1], "aeiou") {
		article = "an"
	}
	return fmt.Sprintf("decoding the object as %s: field %s holds %s %s, not %s (%v)", e.Type, e.Field, article, e.Value, e.FieldType, e.Err)
}

func (e *DecodeError) Unwrap() error { return e.Err }

// newDecodeError explains the converter's failure to decode m as a T by
// the field that does not fit. The converter follows encoding/json's rules
// but its errors ("unrecognized type: int") name no field; encoding/json's
// do, so m is decoded again with it, on this error path only.
func newDecodeError[T any](m map[string]any, err error) *DecodeError {
	out := &DecodeError{Type: reflect.TypeFor[T](), Err: err}
	data, jerr := json.Marshal(m)
	if jerr != nil {
		return out
	}
	var probe T
	var te *json.UnmarshalTypeError
	if errors.As(json.Unmarshal(data, &probe), &te) && te.Field != "" && te.Value != "" && te.Type != nil {
		out.Field, out.Value, out.FieldType = te.Field, te.Value, te.Type
	}
	return out
}

// DecodeChanging returns kw in the typed form for T: the body and the
// essences decoded as T, once per cycle (see the package doc). An error
// means that the body or an essence does not decode as T.
func DecodeChanging[T any](kw *Changing) (TypedChanging[T], error) {
	src, old, new := kw.Body, kw.Old, kw.New
	if c := kw.decoded; c != nil {
		src, old, new = c.body, c.old, c.new
	}
	out := TypedChanging[T]{Changing: *kw}
	var err error
	out.Object, out.Old, out.New, err = decodeStates[T](kw.decoded, src, old, new)
	return out, err
}

// decodeStates decodes an object and its old and new states as T, each
// once per cache (see decode); it stops at the first that does not decode.
// An old state that does not decode is no error but a nil oldT: it is the
// state that this change fixes (the untyped kwargs keep it), and failing
// on it would fail the fix itself.
func decodeStates[T any](c *decodedCache, src, old, new any) (obj, oldT, newT *T, err error) {
	if obj, err = decode[T](c, 0, src); err != nil {
		return
	}
	if oldT, err = decode[T](c, 1, old); err != nil {
		oldT, err = nil, nil
	}
	newT, err = decode[T](c, 2, new)
	return
}

// DecodeEvent returns kw in the typed form for T: the body decoded as T,
// once per event (see the package doc).
func DecodeEvent[T any](kw *Event) (TypedEvent[T], error) {
	src := kw.Body
	if c := kw.decoded; c != nil {
		src = c.body
	}
	out := TypedEvent[T]{Event: *kw}
	var err error
	out.Object, err = decode[T](kw.decoded, 0, src)
	return out, err
}
