package reactor

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/dynamic"

	"github.com/kopf-go/kopf/runtime/body"
	"github.com/kopf-go/kopf/runtime/kwargs"
	"github.com/kopf-go/kopf/runtime/queueing"
	"github.com/kopf-go/kopf/runtime/watching"
)

// A watch with a label or field selector (Reactor.Selects) reports an
// object that stops being selected as Deleted, although it still exists.
// The reactor tells the two apart by reading the object again
// (docs/filters.md, "When an object leaves the selector"):
//
//   - gone (404): the event is the deletion it says, processed as usual;
//   - being deleted: the deletion is processed with the latest body, as
//     any deletion (the delete handlers whose filters match run);
//   - selected again (a label removed and restored meanwhile): processed
//     with the latest body, as a change;
//   - not selected: it left the selectors (leave): no handler runs.

// reread replaces a Deleted event of a selecting watch with the object as
// it is now, if it exists: a Wakeup event with its latest body (on.event
// handlers never see it: the watch reported no such change). It returns
// the event unchanged when the object is gone, and an error when the
// object could not be read.
func (r *Reactor) reread(ctx context.Context, ev watching.Event) (watching.Event, error) {
	if ev.Type != watching.Deleted || r.Selects == nil {
		return ev, nil
	}
	b, found, err := r.readNow(ctx, ev.Object.Meta())
	if err != nil {
		return ev, fmt.Errorf("reading %s again after the watch reported it deleted: %w", ev.Key, err)
	}
	if !found {
		return ev, nil // gone: deleted indeed
	}
	return watching.Event{Type: watching.Modified, Key: ev.Key, Object: b, Wakeup: true}, nil
}

// readNow reads the object as it is now in the API server (a quorum read,
// newer than any version the watch has brought), less its managedFields;
// found is false if it does not exist.
func (r *Reactor) readNow(ctx context.Context, meta body.Meta) (b body.Body, found bool, err error) {
	var client dynamic.ResourceInterface = r.Client
	if ns := meta.Namespace(); ns != "" {
		client = r.Client.Namespace(ns)
	}
	// A listing of the one name rather than a GET: the operator's role
	// grants list and watch, not get (generator/manifests).
	list, err := client.List(ctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", meta.Name()).String()})
	if err != nil {
		return nil, false, err
	}
	for _, u := range list.Items {
		if u.GetName() != meta.Name() { // not filtered by a server that ignores the selector
			continue
		}
		if m, ok := u.Object["metadata"].(map[string]any); ok {
			delete(m, "managedFields")
		}
		return body.Body(u.Object), true, nil
	}
	return nil, false, nil
}

// left reports whether the object exists, is not being deleted, and the
// watch's selectors do not select it.
func (r *Reactor) left(ev watching.Event) bool {
	return r.Selects != nil && ev.Type != watching.Deleted &&
		ev.Object.Meta().DeletionTimestamp() == "" && !r.Selects(ev.Object)
}

// leave handles an object that the watch's selectors no longer select: as
// for a filter mismatch, its daemons and timers stop
// (kwargs.StopFiltersMismatch); once they are all done, Kopf's finalizer
// is removed (no handler sees the object any more, so none needs it), and
// the reactor forgets the object. No handler runs: it is not deleted. Its
// persisted state (progress, diff-base) stays: if it enters the selectors
// again, it comes as a new object whose cause is detected from that state.
func (r *Reactor) leave(ctx context.Context, ev watching.Event, s *queueing.Stream, mem *memory, logger *slog.Logger) {
	if mem.daemons != nil {
		mem.daemons.Update(ev.Object, false) // a wake-up brings this body back here
		if !mem.daemons.Stop(kwargs.StopFiltersMismatch) {
			logger.Debug(fmt.Sprintf("Waiting for the daemons and timers to exit before releasing the object: %v.", mem.daemons.Running()))
			return // woken when they are done (wake)
		}
	}
	finalizer := r.Settings.Persistence.Finalizer
	if slices.Contains(ev.Object.Meta().Finalizers(), finalizer) {
		logger.Debug("Removing the finalizer, as there are no handlers requiring it.")
		rv, err := r.removeFinalizer(ctx, ev.Object, finalizer)
		if err != nil || rv == "" {
			// A conflict, or a failure: no event of the object will come,
			// so read it again after a while and decide anew.
			if err != nil {
				logger.Error(fmt.Sprintf("Releasing the object that left the selectors has failed: %v", err))
			}
			s.Requeue(watching.Event{Type: watching.Deleted, Key: ev.Key, Object: ev.Object}, r.rereadDelay())
			return
		}
	}
	logger.Debug("The object has left the watch's selectors: it is forgotten (not deleted).")
	s.Expect("") // no patch of ours comes back through the watch any more
	r.forget(ev.Key)
}

// rereadDelay is how long to wait before reading an object again after a
// failed attempt: the first of settings.Queueing.ErrorDelays.
func (r *Reactor) rereadDelay() time.Duration {
	if d := r.Settings.Queueing.ErrorDelays; len(d) > 0 {
		return d[0]
	}
	return time.Second
}
