package shardstage

import (
	"context"
	"fmt"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/workqueue"

	"github.com/kopf-go/kopf/runtime/body"
	"github.com/kopf-go/kopf/runtime/sharding"
	"github.com/kopf-go/kopf/runtime/watching"
)

// labellerWorkers is how many labels a lane's labeller writes at once.
const labellerWorkers = 2

// labeller writes the bucket label (sharding.LabelKey) onto the lane's
// objects that lack it or carry a wrong value (the label mode). Every
// replica watches the objects without the label (Lane.Unlabelled) and
// labels those of the buckets it holds; the others' it remembers, and
// labels them if it gains their bucket. An object whose label has a wrong
// value is labelled anew by the replica whose bucket watch sees it under
// that value (Lane.admit).
//
// The label is a merge patch of metadata.labels alone, without a
// resourceVersion precondition: its value is a function of the object's
// namespace and name (sharding.BucketLabel, which the operator's mutating
// webhook uses at creation too), so that every writer writes
// the same, and no concurrent change can make it wrong. A failed write is
// retried with client-go's rate limiter (5 ms doubling to 1000 s per
// object); an object gone (404) is done.
type labeller struct {
	l     *Lane
	key   string                                       // the label's key
	queue workqueue.TypedRateLimitingInterface[string] // the keys of the objects to label
	// pending are the objects seen without the label, by key: their
	// buckets (under s.mu).
	pending map[string]int
}

func newLabeller(l *Lane) *labeller {
	return &labeller{
		l: l, key: sharding.LabelKey(len(l.s.owned)), pending: map[string]int{},
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
			workqueue.TypedRateLimitingQueueConfig[string]{Name: ""}),
	}
}

// Unlabelled is the callback of the lane's watches of the objects without
// the bucket label (the label selector "!key", on every replica): the
// objects of the buckets held are labelled, the others remembered until
// their bucket is gained or they are labelled (their Deleted event: they
// left the selector).
func (l *Lane) Unlabelled(ev watching.Event) {
	if l.labels == nil || !l.matches(body.Body(ev.Object).Meta().Namespace()) {
		return
	}
	b := sharding.KeyBucket(ev.Key, len(l.s.owned))
	l.s.mu.Lock()
	if ev.Type == watching.Deleted {
		delete(l.labels.pending, ev.Key)
		l.s.mu.Unlock()
		return
	}
	l.labels.pending[ev.Key] = b
	owned := l.s.owned[b]
	l.s.mu.Unlock()
	if owned {
		l.labels.queue.Add(ev.Key)
	}
}

// LabelKey is the key of the lane's bucket label ("" unless in the label
// mode).
func (l *Lane) LabelKey() string {
	if l.s.cfg.Mode != sharding.ModeLabel {
		return ""
	}
	return sharding.LabelKey(len(l.s.owned))
}

// check queues an admitted object for labelling anew if its label is not
// its bucket b. Called under s.mu.
func (lb *labeller) check(ev watching.Event, b int) {
	v, ok := body.Body(ev.Object).Meta().Labels()[lb.key]
	if ok && v != strconv.Itoa(b) {
		lb.queue.Add(ev.Key)
	}
}

// gained queues the objects seen unlabelled in the buckets gained.
func (lb *labeller) gained(buckets []int) {
	set := map[int]bool{}
	for _, b := range buckets {
		set[b] = true
	}
	lb.l.s.mu.Lock()
	var keys []string
	for key, b := range lb.pending {
		if set[b] {
			keys = append(keys, key)
		}
	}
	lb.l.s.mu.Unlock()
	for _, key := range keys {
		lb.queue.Add(key)
	}
}

// run labels the queued objects until ctx is done.
func (lb *labeller) run(ctx context.Context) {
	go func() {
		<-ctx.Done()
		lb.queue.ShutDown()
	}()
	for range labellerWorkers {
		go func() {
			for {
				key, shutdown := lb.queue.Get()
				if shutdown {
					return
				}
				if err := lb.label(ctx, key); err != nil && ctx.Err() == nil {
					lb.l.s.cfg.Logger.Warn(fmt.Sprintf("Sharding: %s could not be labelled with its bucket; retrying: %v", key, err))
					lb.queue.AddRateLimited(key)
				} else {
					lb.queue.Forget(key)
				}
				lb.queue.Done(key)
			}
		}()
	}
}

// label writes the object's bucket label.
func (lb *labeller) label(ctx context.Context, key string) error {
	ns, name := splitKey(key)
	k, v := sharding.BucketLabel(ns, name, len(lb.l.s.owned))
	patch := fmt.Appendf(nil, `{"metadata":{"labels":{%q:%q}}}`, k, v)
	ri := dynamic.ResourceInterface(lb.l.client)
	if ns != "" {
		ri = lb.l.client.Namespace(ns)
	}
	_, err := ri.Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("labelling %s: %w", key, err)
	}
	lb.l.s.cfg.Logger.Debug(fmt.Sprintf("Sharding: labelled %s with its bucket: %s=%s.", key, k, v))
	return nil
}
