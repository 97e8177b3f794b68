package sharding

import (
	"bytes"
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// Writer is a Patcher fenced: each patch of the resource's objects gets
// the fence's precondition (see Fence) and goes on to the Patcher it
// wraps. A precondition that cannot hold (the object is stamped by
// another replica) is a Conflict error, as the API server's own.
//
// The Writer learns the objects' stamped versions from the responses to
// its writes and from Observe (the watch's events, which its user passes
// on); it reads an object (by the Getter) when it knows no version of it
// stamped by this replica.
type Writer struct {
	fence    *Fence
	resource schema.GroupResource
	next     Patcher
	get      Getter
}

// Writer returns the fenced Patcher of a resource's objects: next sends
// the patches (with their preconditions), get reads an object whose
// stamped version is not known.
func (f *Fence) Writer(resource schema.GroupResource, next Patcher, get Getter) *Writer {
	return &Writer{fence: f, resource: resource, next: next, get: get}
}

// maxConflicts bounds the re-reads of a merge patch whose object others
// keep changing.
const maxConflicts = 4

// Patch sends a patch fenced: a JSON patch with a test of the stamp, a
// merge patch on a version known to bear the stamp (see Fence).
func (w *Writer) Patch(ctx context.Context, namespace, name string, pt types.PatchType, data []byte, sub ...string) (string, error) {
	if pt == types.JSONPatchType {
		body, err := w.fence.testStamp(data)
		if err != nil {
			return "", err
		}
		rv, err := w.next.Patch(ctx, namespace, name, pt, body, sub...)
		w.record(namespace, name, rv, data, err)
		return rv, err
	}
	if pt != types.MergePatchType {
		return "", fmt.Errorf("fencing a %s patch: only merge patches and JSON patches are fenced", pt)
	}
	for attempt := 0; ; attempt++ {
		base, err := w.base(ctx, namespace, name)
		if err != nil {
			return "", err
		}
		body, err := withResourceVersion(data, base)
		if err != nil {
			return "", err
		}
		rv, err := w.next.Patch(ctx, namespace, name, pt, body, sub...)
		if apierrors.IsConflict(err) && attempt < maxConflicts {
			w.Forget(namespace, name) // another writer was first: read it again
			continue
		}
		w.record(namespace, name, rv, data, err)
		return rv, err
	}
}

// base is the version a merge patch is sent on: the newest known to bear
// this replica's stamp, else the current one if it bears it (read); if it
// does not, the write is refused with a Conflict.
func (w *Writer) base(ctx context.Context, namespace, name string) (string, error) {
	key := w.key(objectKey(namespace, name))
	if rv, ok := w.fence.lookup(key); ok {
		return rv, nil
	}
	obj, err := w.get.Get(ctx, namespace, name)
	if err != nil {
		return "", fmt.Errorf("reading the object's owner before a fenced write: %w", err)
	}
	stamp := obj.GetAnnotations()[w.fence.Key()]
	w.fence.observe(key, obj.GetResourceVersion(), stamp)
	if stamp != w.fence.Identity {
		return "", apierrors.NewConflict(w.resource, name, fmt.Errorf("the object is not owned by this replica (%s) anymore: the write is fenced", w.fence.Identity))
	}
	return obj.GetResourceVersion(), nil
}

// record notes the version a successful write returns: it bears this
// replica's stamp (the precondition held), unless the patch itself
// touched the stamp's annotation (then nothing is assumed).
func (w *Writer) record(namespace, name, rv string, patch []byte, err error) {
	if err != nil || rv == "" {
		return
	}
	key := w.key(objectKey(namespace, name))
	if bytes.Contains(patch, []byte(w.fence.Key())) || bytes.Contains(patch, []byte(escapePointer(w.fence.Key()))) {
		w.fence.forget(key)
		return
	}
	w.fence.observe(key, rv, w.fence.Identity)
}

// Stamp takes the object over: it writes this replica's stamp (unfenced:
// it is what makes the object this replica's) and returns the stamped
// resourceVersion, which the Writer's next writes are based on.
func (w *Writer) Stamp(ctx context.Context, namespace, name string) (string, error) {
	rv, err := w.next.Patch(ctx, namespace, name, types.MergePatchType, w.fence.Stamp())
	if err != nil {
		return "", err
	}
	w.fence.observe(w.key(objectKey(namespace, name)), rv, w.fence.Identity)
	return rv, nil
}

// Observe records a version of an object with its stamp (the value of the
// annotation Fence.Key, "" if none), as the watch delivers it.
func (w *Writer) Observe(namespace, name, resourceVersion, stamp string) {
	w.fence.observe(w.key(objectKey(namespace, name)), resourceVersion, stamp)
}

// Forget drops what is known of an object: it is deleted, or no longer
// owned.
func (w *Writer) Forget(namespace, name string) {
	w.fence.forget(w.key(objectKey(namespace, name)))
}

// key is an object's key in the fence, unique across resources.
func (w *Writer) key(object string) string {
	return w.resource.String() + " " + object
}

func objectKey(namespace, name string) string {
	if namespace == "" {
		return name
	}
	return namespace + "/" + name
}
