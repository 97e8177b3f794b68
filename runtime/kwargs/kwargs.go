// Package kwargs defines what the reactor gives to handlers: one struct per
// kind of handler, holding every keyword argument Kopf gives that kind.
//
// Generated code copies the fields a handler needs into its own typed kwargs
// struct; code written by hand may use these structs directly.
package kwargs

import (
	"log/slog"
	"time"

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

// Resource are the arguments of every handler that serves one object.
type Resource struct {
	Resource    resources.Resource
	Body        body.Body
	Spec        body.Spec
	Meta        body.Meta
	Status      body.Status
	UID         string
	Name        string
	Namespace   string
	Labels      map[string]string
	Annotations map[string]string
	// Patch collects the changes the handler wants made to the object;
	// they are applied after the handler returns, with the reactor's own.
	Patch  patches.Patch
	Logger *slog.Logger
	Memo   Memo
}

// Changing are the arguments of create, update, delete, resume and field
// handlers.
type Changing struct {
	Resource
	// Param is the handler's param= option, as registered.
	Param any
	// Retry counts the previous attempts of this handler for this cause.
	Retry int
	// Started is when the handler was first attempted for this cause.
	Started time.Time
	// Runtime is how long the handler has been attempted so far.
	Runtime time.Duration
	Reason  causes.Reason
	Old     any
	New     any
	Diff    diffs.Diff
}

// Event are the arguments of event-watching handlers (on.event).
type Event struct {
	Resource
	Param any
	// Type is the watch event's type: "ADDED", "MODIFIED", "DELETED", or ""
	// for objects seen in a listing (Kopf's None).
	Type string
	// Event is the raw event: {"type": Type or nil, "object": Body}.
	Event map[string]any
}

// FromBody fills the object-derived fields from a body. Body, Spec, Meta
// and Status are the body's own maps (Labels and Annotations are copies):
// give user code a body of its own (body.Body.DeepCopy), as the reactor
// does, so that what user code changes in it is never seen elsewhere.
func FromBody(res resources.Resource, b body.Body, p patches.Patch, logger *slog.Logger, memo Memo) Resource {
	meta := b.Meta()
	return Resource{
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
