package kwargs

// The reasons a reconcile handler runs for (Reconcile.Trigger), for logs.
// A trigger caused by another object names it: "owned <resource>
// <namespace/name>" or "watched <resource> <namespace/name>".
const (
	// TriggerObject: the object was listed or changed (a watch event).
	TriggerObject = "object"
	// TriggerResync: the handler's resync interval passed.
	TriggerResync = "resync"
	// TriggerRequeue: the handler asked for it (RequeueAfter).
	TriggerRequeue = "requeue"
	// TriggerRetry: the previous run failed; this one retries it.
	TriggerRetry = "retry"
	// TriggerOwned and TriggerWatched start the triggers of an owned child
	// or a watched object.
	TriggerOwned   = "owned"
	TriggerWatched = "watched"
)

// Reconcile are the arguments of a level-triggered handler (on.reconcile):
// the object as it is now, with no cause and no diff. Nothing of a
// reconcile handler's progress is stored on the object: Retry counts the
// failures in memory only, and restarts from 0 with the operator.
type Reconcile struct {
	Base
	// Param is the handler's param= option, as registered.
	Param any
	// Retry counts the failed attempts in a row before this one (0 after a
	// success).
	Retry int
	// Deleting is true when metadata.deletionTimestamp is set. Only
	// handlers registered with Finalize see deleted objects.
	Deleting bool
	// Trigger says why the handler runs, for logs: TriggerObject,
	// TriggerResync, TriggerRequeue, TriggerRetry, or "owned <resource>
	// <namespace/name>" / "watched <resource> <namespace/name>" for a
	// change of another object.
	Trigger string
}

// TypedReconcile are the arguments of a reconcile handler of a resource
// whose objects are of the Go type T: every kwarg of Reconcile, and the
// object decoded as T.
type TypedReconcile[T any] struct {
	Reconcile
	// Object is the body decoded as a T.
	Object *T
}

// ShareDecoded starts a cache of typed views of kw's body, shared by kw and
// by every copy made of it from now on (see Changing.ShareDecoded): the
// reactor calls it once per run, so that a handler and its when= callback
// decode the body once.
func (kw *Reconcile) ShareDecoded() {
	kw.decoded = &decodedCache{body: kw.Body}
}

// DecodeReconcile returns kw in the typed form for T: the body decoded as
// T, once per run if the kwargs share a cache; an error means that it does
// not decode as T.
func DecodeReconcile[T any](kw *Reconcile) (TypedReconcile[T], error) {
	src := kw.Body
	if c := kw.decoded; c != nil {
		src = c.body
	}
	out := TypedReconcile[T]{Reconcile: *kw}
	var err error
	out.Object, err = decode[T](kw.decoded, 0, src)
	return out, err
}
