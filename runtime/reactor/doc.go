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
// Writes per cycle: a single merge patch to the object, or two when the
// resource's status is a subresource (status first, then the rest, so that
// an interrupted pair re-runs handlers rather than losing their results);
// finalizer changes are a separate JSON patch guarded by the object's
// resourceVersion, as Kopf does.
package reactor
