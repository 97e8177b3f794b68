package operator

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"

	"github.com/kopf-go/kopf/runtime/body"
	"github.com/kopf-go/kopf/runtime/metrics"
	"github.com/kopf-go/kopf/runtime/sharding"
	"github.com/kopf-go/kopf/runtime/watching"
)

// Sharded watches (docs/sharding.md, "Modes"): in the label and server
// modes, a served resource is watched by bucket. In the label mode, its
// lane runs one watch per namespace over the buckets held, with the label
// selector "key in (b1,b2,...)", replaced by one over the new set when
// buckets are gained (Gain awaits its first listing, as the objects of the
// buckets gained) or lost (shardstage's package doc). In the server mode,
// it starts one watch per namespace for each bucket this replica gains,
// with KEP-5866's shardSelector of the bucket's hash range, and stops it
// when the bucket is lost (Lose, after which no event of it comes, and no
// deletion is faked). The watches carry the resource's own selectors
// (selectors.go) too. Lane.Admit still drops what is not this replica's
// (the safety net in every mode).
//
// A resource stays watched whole (the filter mode) when:
//   - it has indices: an index holds every object of the resource, which
//     no replica would see if each watched only its own buckets;
//   - in the server mode, the API server does not honour shardSelector
//     (the list's metadata.shardInfo is missing: no KEP-5866, or its
//     feature gate off): a warning says so.
//
// In the label mode, every replica also watches the resource's objects
// without the label ("!key"), whose bucket it labels if it holds it
// (shardstage's labeller): these watches, always on, are the resource's
// watches for the readiness. Where the operator serves managed webhooks,
// the resource is added to the admission stamp (bucketStamp), which
// labels its new objects at creation, before any watch sees them. The bucket watches count in the health
// (Monitor) while they run.

// shardedWatches decides how the pipeline's resource is watched: by
// bucket in the mode returned, or whole ("").
func (o *operator) shardedWatches(ctx context.Context, p *pipeline) sharding.Mode {
	mode := o.shards.cfg.Mode
	if mode != sharding.ModeLabel && mode != sharding.ModeServer || len(p.namespaces) == 0 {
		return ""
	}
	if p.indexer != nil || !p.queued {
		o.opts.Logger.Info(fmt.Sprintf("Sharding: %s has indices, which need every object: it is watched whole and filtered here, not by bucket.", p.res))
		return ""
	}
	if mode == sharding.ModeServer {
		ok, err := o.serverShards(ctx, p)
		if !ok {
			why := "the API server does not honour shardSelector (KEP-5866's ShardedListAndWatch)"
			if err != nil {
				why = fmt.Sprintf("the API server's support of shardSelector could not be detected: %v", err)
			}
			o.opts.Logger.Warn(fmt.Sprintf("Sharding: %s; %s is watched whole and filtered here (the filter mode).", why, p.res))
			return ""
		}
	}
	if mode == sharding.ModeLabel && p.reactor.Selects == nil {
		// An object whose bucket label is removed or changed leaves its
		// bucket's watch as if deleted: the reactor reads it again.
		p.reactor.Selects = func(body.Body) bool { return true }
	}
	if mode == sharding.ModeLabel && o.shards.stamp != nil {
		o.shards.stamp.Add(p.res) // its new objects labelled at creation
	}
	p.bucketsMW = map[string]*metrics.Watch{}
	return mode
}

// serverShards says whether the API server honours shardSelector for the
// resource: a listing of one object with the selector of bucket 0, whose
// metadata.shardInfo.selector echoes it only if the server applied it
// (the criterion of watching.Status's Sharded for a watch's listings).
func (o *operator) serverShards(ctx context.Context, p *pipeline) (bool, error) {
	sel := sharding.ShardSelector([]int{0}, o.shards.cfg.Buckets)
	raw, err := o.clients.rest.Get().AbsPath(p.res.Path(p.namespaces[0])).
		Param("limit", "1").Param("shardSelector", sel).DoRaw(ctx)
	if err != nil {
		return false, fmt.Errorf("listing %s with a shardSelector: %w", p.res, err)
	}
	var list struct {
		Metadata struct {
			ShardInfo struct {
				Selector string `json:"selector"`
			} `json:"shardInfo"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(raw, &list); err != nil {
		return false, fmt.Errorf("decoding the listing of %s: %w", p.res, err)
	}
	return list.Metadata.ShardInfo.Selector == sel, nil
}

// startBucketWatches gives the lane its bucket watches and, in the label
// mode, starts the labeller's watches of the unlabelled objects.
func (o *operator) startBucketWatches(ctx context.Context, p *pipeline) {
	for _, ns := range p.namespaces {
		if p.metrics != nil {
			p.bucketsMW[ns] = p.metrics.Watch(ns)
		}
	}
	p.shard.WatchBuckets(ctx, func(ctx context.Context, buckets []int, listed func()) {
		o.runBucketWatches(ctx, p, buckets, listed)
	})
	if p.byBucket != sharding.ModeLabel {
		return
	}
	key := p.shard.LabelKey()
	sel := p.selectors.withLabel(key, selection.DoesNotExist)
	for _, ns := range p.namespaces {
		w := o.watcher(ctx, p, ns, " (unlabelled)", sel, p.shard.Unlabelled)
		o.opts.Logger.Info(fmt.Sprintf("Sharding: watching %s with the label selector '%s', to label the objects without their bucket label.", w.Name, sel))
		w.OnListed = o.ready.watch()
		if o.monitor != nil {
			o.monitor.AddWatch(w.Name, w.Status)
		}
		o.goWorker(func() { w.Run(ctx) })
	}
}

// runBucketWatches runs the watches of a set of buckets (one per
// namespace) until ctx is done; listed is called once all have listed.
func (o *operator) runBucketWatches(ctx context.Context, p *pipeline, buckets []int, listed func()) {
	values := make([]string, len(buckets))
	for i, b := range buckets {
		values[i] = strconv.Itoa(b)
	}
	what := " buckets " + strings.Join(values, ",")
	if len(buckets) == 1 {
		what = " bucket " + values[0]
	}
	labelSelector, shardSelector := p.selectors.labelSelector(), ""
	if p.byBucket == sharding.ModeLabel {
		labelSelector = p.selectors.withLabel(p.shard.LabelKey(), selection.In, values...)
	} else {
		shardSelector = sharding.ShardSelector(buckets, o.shards.cfg.Buckets)
	}
	var wg sync.WaitGroup
	var pending atomic.Int32 // the watches that have not listed yet
	pending.Store(int32(len(p.namespaces)))
	for _, ns := range p.namespaces {
		w := o.watcher(ctx, p, ns, what, labelSelector, func(ev watching.Event) { p.admit(ctx, ev) })
		w.ShardSelector = shardSelector
		w.Lists = true        // as many passes over the resource as buckets: no watch-list (see Watcher.Lists)
		w.OnListed = func() { // once per watch
			o.opts.Logger.Debug(fmt.Sprintf("Sharding: %s has listed its objects.", w.Name))
			if pending.Add(-1) == 0 {
				listed()
			}
		}
		o.opts.Logger.Debug(fmt.Sprintf("Sharding: watching %s with the label selector '%s' and the shard selector '%s'.", w.Name, labelSelector, shardSelector))
		instrumentWatchAs(p.bucketsMW[ns], w)
		remove := func() {}
		if o.monitor != nil {
			remove = o.monitor.AddWatch(w.Name, w.Status)
		}
		wg.Go(func() {
			defer remove()
			w.Run(ctx)
		})
	}
	wg.Wait()
}

// withLabel is the pipeline's label selector with one more requirement
// (the bucket label's), in the syntax of metav1.ListOptions.
func (ws watchSelectors) withLabel(key string, op selection.Operator, values ...string) string {
	sel := labels.NewSelector()
	if ws.labels != nil {
		sel = ws.labels
	}
	r, err := labels.NewRequirement(key, op, values)
	if err != nil {
		return sel.String() // a key of LabelKey and a bucket number are valid
	}
	return sel.Add(*r).String()
}
