// Package reactor processes the events of one resource: for every object it
// detects the cause (Kopf's GONE, FREE, DELETE, CREATE, RESUME, NOOP,
// UPDATE), manages the finalizer, runs the matching handlers with their
// persisted progress, and writes their results, the progress and the new
// diff-base back to the object in as few patches as possible.
//
// The Reactor is driven by queueing: Process is called for one object at a
// time, never concurrently for the same object, concurrently for different
// objects. It keeps per-object memory (memo, resume bookkeeping) for as long
// as the object exists.
//
// User code: every call into it (handlers, sub-handlers, on.event
// handlers, when= and filter callbacks, the encoding of results) goes
// through execution.Guard, so a panic is that call's error: a handler's
// panic is its failure (retried as any error), a filter's panic makes its
// handler not match (logged once per object, handler and cause). User code
// gets a deep copy of the object and of the change (Old, New, Diff), made
// once per cycle and only when it is to run; the cause, the essence and
// the diff-base are computed from the reactor's own data, which user code
// never sees (see userdata.go). What escapes Process anyway is recovered
// by the queueing worker.
//
// Writes per cycle: a single merge patch to the object, or two when the
// resource's status is a subresource (status first, then the rest, so that
// an interrupted pair re-runs handlers rather than losing their results);
// finalizer changes are a separate JSON patch guarded by the object's
// resourceVersion, as Kopf does.
package reactor
