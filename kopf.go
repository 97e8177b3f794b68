package kopf

import (
	"context"
	"time"

	"k8s.io/client-go/rest"

	"github.com/kopf-go/kopf/runtime/apiserver"
	"github.com/kopf-go/kopf/runtime/body"
	"github.com/kopf-go/kopf/runtime/causes"
	"github.com/kopf-go/kopf/runtime/diffs"
	"github.com/kopf-go/kopf/runtime/execution"
	"github.com/kopf-go/kopf/runtime/filters"
	"github.com/kopf-go/kopf/runtime/kwargs"
	"github.com/kopf-go/kopf/runtime/patches"
	"github.com/kopf-go/kopf/runtime/registry"
	"github.com/kopf-go/kopf/runtime/resources"
)

// This file re-exports the everyday API of the runtime packages, so that
// operator code and generated code import one package. Everything here is an
// alias: the runtime packages remain the source of truth and can be used alone.

// Objects and patches.
type (
	// Body is a whole Kubernetes object as decoded from JSON.
	Body = body.Body
	// Meta is an object's metadata.
	Meta = body.Meta
	// Spec is an object's spec.
	Spec = body.Spec
	// Status is an object's status.
	Status = body.Status
	// Patch is a JSON merge patch that handlers fill and the reactor applies.
	Patch = patches.Patch
	// Diff is a list of changes between two versions of an object.
	Diff = diffs.Diff
	// DiffItem is one change in a Diff.
	DiffItem = diffs.Item
	// DiffOp is the kind of change of a DiffItem.
	DiffOp = diffs.Op
)

// Handlers and their registration.
type (
	// Registry holds an operator's handlers; generated Register functions fill it.
	Registry = registry.Registry
	// ChangingHandler is a create/update/delete/resume handler's registration.
	ChangingHandler = registry.ChangingHandler
	// ChangingKwargs are the arguments of a changing handler of a resource
	// without a Go type (the body-only form).
	ChangingKwargs = kwargs.Changing
	// ResourceKwargs are the object-derived arguments common to resource handlers.
	ResourceKwargs = kwargs.Base
	// Memo is per-object free-form memory.
	Memo = kwargs.Memo
	// Reason is the cause of a changing handler's invocation.
	Reason = causes.Reason
	// ErrorsMode says how a handler's arbitrary errors are treated.
	ErrorsMode = registry.ErrorsMode
	// Selector names the resource a handler serves.
	Selector = resources.Selector
	// Resource is a resource as resolved through the cluster's discovery.
	Resource = resources.Resource
	// SelectableFields declares fields that the API server selects on for
	// a resource (a CRD's selectableFields; docs/filters.md).
	SelectableFields = registry.SelectableFields
)

// The reasons of changing handlers.
const (
	ReasonCreate = causes.Create
	ReasonUpdate = causes.Update
	ReasonDelete = causes.Delete
	ReasonResume = causes.Resume
)

// The errors modes.
const (
	ErrorsTemporary = registry.ErrorsTemporary
	ErrorsPermanent = registry.ErrorsPermanent
	ErrorsIgnored   = registry.ErrorsIgnored
)

// The operations of diff items.
const (
	DiffAdd    = diffs.Add
	DiffChange = diffs.Change
	DiffRemove = diffs.Remove
)

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return registry.New() }

// Errors that handlers return to steer their retries.
type (
	// TemporaryError asks for a retry after its Delay.
	TemporaryError = execution.TemporaryError
	// PermanentError fails the handler at once, with no retries.
	PermanentError = execution.PermanentError
)

// NewTemporaryError returns a TemporaryError with the message, retried
// after delay: Kopf's kopf.TemporaryError(message, delay=...), in the same
// order. A zero delay is Kopf's default, 60 seconds. For a formatted
// message, use fmt.Sprintf. A TemporaryError still counts when wrapped:
// fmt.Errorf("connecting: %w", kopf.NewTemporaryError(...)).
func NewTemporaryError(message string, delay time.Duration) error {
	return execution.NewTemporaryError(message, delay)
}

// NewPermanentError returns a PermanentError.
func NewPermanentError(format string, args ...any) error {
	return execution.NewPermanentError(format, args...)
}

// Event-watching handlers, filters and sub-handlers.
type (
	// ChangingFn is the function behind a changing handler.
	ChangingFn = registry.ChangingFn
	// EventHandler is an on.event handler's registration.
	EventHandler = registry.EventHandler
	// EventFn is the function behind an event-watching handler.
	EventFn = registry.EventFn
	// EventKwargs are the arguments of an event-watching handler of a
	// resource without a Go type (the body-only form).
	EventKwargs = kwargs.Event
	// Filter holds a handler's labels/annotations/value/old/new filters.
	Filter = filters.Filter
	// Matcher checks one value of a Filter.
	Matcher = filters.Matcher
)

// TypedChangingKwargs are the arguments of a changing handler of a resource
// whose objects are of the Go type T: every kwarg of ChangingKwargs, with
// Object, Old and New decoded as T once per cycle.
type TypedChangingKwargs[T any] = kwargs.TypedChanging[T]

// TypedEventKwargs are the arguments of an event-watching handler of a
// resource whose objects are of the Go type T: every kwarg of EventKwargs,
// with Object decoded as T.
type TypedEventKwargs[T any] = kwargs.TypedEvent[T]

// Daemons and timers (Kopf's @kopf.daemon and @kopf.timer).
type (
	// DaemonHandler is a daemon's registration.
	DaemonHandler = registry.DaemonHandler
	// DaemonFn is the function behind a daemon.
	DaemonFn = registry.DaemonFn
	// DaemonKwargs are the arguments of a daemon of a resource without a Go
	// type (the body-only form).
	DaemonKwargs = kwargs.Daemon
	// TimerHandler is a timer's registration.
	TimerHandler = registry.TimerHandler
	// TimerFn is the function behind a timer.
	TimerFn = registry.TimerFn
	// TimerKwargs are the arguments of a timer of a resource without a Go
	// type (the body-only form).
	TimerKwargs = kwargs.Timer
	// StopReason says why a daemon or timer is stopped: the cause
	// (context.Cause) of its kwargs' Stopped.
	StopReason = kwargs.StopReason
)

// The reasons a daemon or timer is stopped for: compare
// context.Cause(kw.Stopped) with them.
var (
	StopDeleted         = kwargs.StopDeleted
	StopFiltersMismatch = kwargs.StopFiltersMismatch
	StopOperatorPausing = kwargs.StopOperatorPausing
	StopOperatorExiting = kwargs.StopOperatorExiting
)

// TypedDaemonKwargs are the arguments of a daemon of a resource whose
// objects are of the Go type T: every kwarg of DaemonKwargs, with Object
// decoded as T.
type TypedDaemonKwargs[T any] = kwargs.TypedDaemon[T]

// TypedTimerKwargs are the arguments of a timer of a resource whose objects
// are of the Go type T: every kwarg of TimerKwargs, with Object decoded as
// T.
type TypedTimerKwargs[T any] = kwargs.TypedTimer[T]

// Present matches any present value (Kopf's kopf.PRESENT).
func Present() Matcher { return filters.IsPresent() }

// Absent matches an absent value (Kopf's kopf.ABSENT).
func Absent() Matcher { return filters.IsAbsent() }

// Equal matches an exact value (JSON-equal: numbers by value).
func Equal(v any) Matcher { return filters.IsEqual(v) }

// Check returns m as the optional check of a Filter's Value, Old or New
// (nil: no check), as generated code writes value=, old= and new=:
//
//	Filter: kopf.Filter{Value: kopf.Check(kopf.Equal("value"))}
//
// It spares Go 1.26's new(expr), which the runtime's minimum Go lacks.
func Check(m Matcher) *Matcher { return &m }

// Callback matches what fn accepts; fn gets the value (nil if absent),
// whether it is present, and the handler's object arguments, by value as
// every callback and handler takes its kwargs.
func Callback(fn func(value any, present bool, kw ResourceKwargs) bool) Matcher {
	return filters.Func(func(value any, present bool, kw *ResourceKwargs) bool {
		return fn(value, present, *kw)
	})
}

// Subhandler registers a sub-handler of the changing handler running with
// ctx (Kopf's @kopf.subhandler / kopf.register): it runs after the parent
// returns, with its own progress under the id "<parent>/<id>", and the
// parent is finished only when all its sub-handlers are. Its Fn is made
// with the adapters (ChangingFunc, TypedChangingFunc, NoResult); most
// sub-handlers are registered with SubhandlerFunc or TypedSubhandlerFunc.
func Subhandler(ctx context.Context, h ChangingHandler) error { return registry.Subhandler(ctx, h) }

// RESTConfig returns the operator's client configuration from a handler's
// context, for handlers that need clients of their own (nil outside an
// operator). Do not modify it: copy it with rest.CopyConfig.
func RESTConfig(ctx context.Context) *rest.Config { return apiserver.RESTConfig(ctx) }

// Client returns the client of type C that the operator's handlers share,
// made by newFn from the operator's configuration (RESTConfig) on first
// use, and the same one on every later call while the operator runs:
//
//	pods, err := kopf.Client(ctx, kubernetes.NewForConfig)
//
// newFn is a client's constructor: kubernetes.NewForConfig,
// dynamic.NewForConfig, or the NewForConfig of a clientset that kopf-gen
// --clients generates. Clients are keyed by C alone; concurrent first
// calls make one client; an error of newFn is returned and not kept (the
// next call tries again). Outside an operator the error is ErrNoOperator.
// See docs/clients.md.
func Client[C any](ctx context.Context, newFn func(*rest.Config) (C, error)) (C, error) {
	return apiserver.Client(ctx, newFn)
}

// ErrNoOperator is Client's error outside an operator's handlers.
var ErrNoOperator = apiserver.ErrNoOperator
