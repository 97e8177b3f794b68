package operator

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/kopf-go/kopf/runtime/apiserver"
	"github.com/kopf-go/kopf/runtime/body"
	"github.com/kopf-go/kopf/runtime/execution"
	"github.com/kopf-go/kopf/runtime/indexing"
	"github.com/kopf-go/kopf/runtime/metrics"
	"github.com/kopf-go/kopf/runtime/queueing"
	"github.com/kopf-go/kopf/runtime/reactor"
	"github.com/kopf-go/kopf/runtime/resources"
	"github.com/kopf-go/kopf/runtime/sharding"
	"github.com/kopf-go/kopf/runtime/sharding/shardstage"
	"github.com/kopf-go/kopf/runtime/watching"
)

// pipeline is the path of one served resource's events, from its
// watchers to its reactor (docs/ARCHITECTURE.md, "One event"):
//
//	watcher → namespace filter → indexer → shard filter → queue
//	        → [pause gate → shard lane → index gate → reactor]
//
// The stages up to the queue run in the watch's goroutine (admit): the
// indexer updates the indices before any worker gets the event, so the
// start never waits for a worker. The stages in brackets run in the
// object's worker (process): a worker waits at the pause gate while
// peering pauses the operator, before the shard's lane tracks its cycle;
// then at the index gate until the indices are filled. Sharding is two
// hooks: its filter admits only this replica's objects into the queue
// (and forwards to the queue's Put), its lane skips the objects no longer
// owned and stamps the owned ones (see package shardstage). The watchers
// carry the resource's label and field selectors, if any (selectors.go),
// and the reactor then tells an object that left them from a deleted one
// (reactor.Reactor.Selects). In sharding's label and server modes, a
// resource is watched by bucket instead: its lane runs one watch over the
// buckets held (the label mode) or one per bucket held (the server mode)
// (shardwatch.go), feeding admit.
//
// A resource with reconcile handlers that own or watch other resources
// has a side branch (reconcile.go): their watchers map each event to the
// owners' keys and hand them to the reactor (Reactor.Trigger), which
// requeues the owners through admit as wakeups:
//
//	child watcher → namespace filter → owners' keys → reactor.Trigger → admit → …
type pipeline struct {
	res     resources.Resource
	client  dynamic.NamespaceableResourceInterface
	reactor *reactor.Reactor

	// The watch side.
	namespaces []string             // the watches' namespaces; "": one cluster-wide watch
	selectors  watchSelectors       // the watches' label and field selectors (selectors.go)
	inScope    func(ns string) bool // nil: every namespace a watch sees is served
	indexer    *indexing.Indexer    // nil: the resource has no indices
	queued     bool                 // false: a resource with indices only stops at the indexer
	put        func(watching.Event) // the queue's Put, or the shard filter that forwards to it
	queue      *queueing.Queue      // the objects' workers, which call process
	metrics    *metrics.Resource    // nil: no metrics

	// Sharding (nil without): the lane, and whether the resource is
	// watched by bucket (shardwatch.go) rather than whole.
	shard     *shardstage.Lane
	byBucket  sharding.Mode // "": watched whole (the filter mode)
	bucketsMW map[string]*metrics.Watch
}

// newPipeline builds the pipeline of res, top to bottom, and starts its
// watches; it stops when ctx (the workers') is done, its workers once
// drained (see queueing.Queue.Drain).
func (o *operator) newPipeline(ctx context.Context, res resources.Resource) *pipeline {
	client := o.clients.dynamic.Resource(schema.GroupVersionResource{Group: res.Group, Version: res.Version, Resource: res.Plural})
	r := &reactor.Reactor{Resource: res, Cluster: o.cluster, Client: client, REST: o.clients.rest, Registry: o.reg, Settings: o.opts.Settings,
		Logger: o.opts.Logger, Observe: o.opts.Observe, Memo: o.objectsMemo, Daemons: o.daemons,
		Patcher: reactor.ClientPatcher{Resource: res, Client: client, REST: o.clients.rest}}
	p := &pipeline{res: res, client: client, reactor: r}
	p.namespaces, p.inScope = o.watchedNamespaces(res)
	if sel, err := selectorsOf(o.reg, res, o.opts.Settings.Watching); err != nil {
		o.opts.Logger.Error(fmt.Sprintf("%v; %s is not watched.", err, res))
		p.namespaces = nil
	} else if p.selectors = sel; sel.any() {
		r.Selects = sel.selects // an object that leaves the selectors is not deleted
	}
	if handlers := o.reg.IndexHandlers(res); len(handlers) > 0 {
		p.indexer = &indexing.Indexer{Resource: res, Cluster: o.cluster, Handlers: handlers, Logger: o.opts.Logger, Backoff: o.opts.Settings.Execution.DefaultBackoff}
	}
	p.queued = p.indexer == nil || o.reg.HasHandlers(res)

	var shard *shardstage.Lane // the shard filter and lane; nil without sharding
	if o.shards != nil {
		shard = o.shards.stage.Lane(res, client, o.scope, r.Patcher)
		r.Patcher = shard.Writer() // the reactor's writes are fenced
		p.shard = shard
		p.byBucket = o.shardedWatches(ctx, p)
	}
	// The worker side, from the outermost stage to the reactor.
	process := stages(r.Process, o.paused.hold, shardLane(shard), o.indexed.hold)

	// Workers outlive the watchers: on stop, each finishes the cycle it is
	// in (so that its results are written) for up to the exit timeout, and
	// only then is its context cancelled (see queueing.Queue.Drain).
	workCtx, cancelWork := context.WithCancel(context.WithoutCancel(ctx))
	p.queue = queueing.New(workCtx, o.queueOptions(), process)
	p.put = shardFilter(shard, p.queue)
	unwatch := o.releaser.Watch(p.queue.Active)
	p.metrics = o.instrumentResource(res, r, p.queue)
	r.Requeue = func(ev watching.Event) { p.admit(ctx, ev) }

	o.startWatches(ctx, p)
	o.startReconcileWatches(ctx, p) // owned and watched resources
	o.goWorker(func() {
		<-ctx.Done()
		p.queue.Drain(cancelWork, o.opts.Settings.Queueing.ExitTimeout, res.String(), o.opts.Logger)
		unwatch()
	})
	return p
}

// admit is the watch side of the pipeline, in the watch's goroutine: an
// event of a namespace not served is dropped (from a cluster-wide watch of
// namespace patterns); the indexer updates the indices; then the event
// goes to the queue, through the shard filter with sharding.
func (p *pipeline) admit(ctx context.Context, ev watching.Event) {
	if p.inScope != nil && !p.inScope(body.Body(ev.Object).Meta().Namespace()) {
		return
	}
	if p.indexer != nil {
		p.indexer.Handle(ctx, ev)
	}
	if p.queued {
		p.put(ev)
	}
}

// stages returns the processing through the stages, the first outermost,
// then last; a nil stage is left out.
func stages(last queueing.Processor, outer ...func(queueing.Processor) queueing.Processor) queueing.Processor {
	process := last
	for i := len(outer) - 1; i >= 0; i-- {
		if outer[i] != nil {
			process = outer[i](process)
		}
	}
	return process
}

// shardLane is the worker side's hook of sharding (Lane.Process); nil
// without sharding.
func shardLane(shard *shardstage.Lane) func(queueing.Processor) queueing.Processor {
	if shard == nil {
		return nil
	}
	return shard.Process
}

// shardFilter is the watch side's hook of sharding: Lane.Admit, which puts
// this replica's objects into the queue; without sharding, the queue's Put.
func shardFilter(shard *shardstage.Lane, queue *queueing.Queue) func(watching.Event) {
	if shard == nil {
		return queue.Put
	}
	return shard.Admit(queue.Put)
}

// watchedNamespaces are the namespaces to watch res in, and the filter of
// the events' namespaces. Namespaced resources are watched per namespace
// when the patterns are plain names, else cluster-wide and filtered.
func (o *operator) watchedNamespaces(res resources.Resource) (namespaces []string, inScope func(string) bool) {
	namespaces, exact := o.scope.ExactNamespaces()
	if res.Namespaced && exact {
		return namespaces, nil
	}
	if res.Namespaced && !o.scope.Clusterwide() {
		inScope = o.scope.Matches
	}
	return []string{""}, inScope
}

// queueOptions are the options of every pipeline's queue.
func (o *operator) queueOptions() queueing.Options {
	q := queueing.Options{IdleTimeout: o.opts.Settings.Queueing.IdleTimeout, WorkerLimit: o.opts.Settings.Queueing.WorkerLimit, Logger: o.opts.Logger}
	if o.releaser != nil {
		q.OnIdle = o.releaser.Idle
	}
	return q
}

// startWatches starts a watcher of the pipeline's resource per namespace,
// feeding admit; each says to the readiness (and the index gate, for an
// indexed resource) when it has listed. A resource watched by bucket
// (shardwatch.go) gets its bucket watches from its lane instead, and in
// the label mode the labeller's watches here.
func (o *operator) startWatches(ctx context.Context, p *pipeline) {
	if p.byBucket != "" {
		o.startBucketWatches(ctx, p)
		return
	}
	for _, ns := range p.namespaces {
		w := o.watcher(ctx, p, ns, "", p.selectors.labelSelector(), func(ev watching.Event) { p.admit(ctx, ev) })
		if p.selectors.any() {
			o.opts.Logger.Info(p.selectors.describe(w.Name))
		}
		w.OnListed = o.listed(p)
		if o.monitor != nil {
			o.monitor.AddWatch(w.Name, w.Status)
		}
		instrumentWatch(p.metrics, ns, w)
		o.goWorker(func() { w.Run(ctx) })
	}
}

// watcher makes a watcher of the pipeline's resource in the namespace ns
// ("": cluster-wide), named after them and what (e.g. " bucket 5"), with
// the label selector and the field selector of the pipeline, reporting to
// the operator's health, its events to callback.
func (o *operator) watcher(ctx context.Context, p *pipeline, ns, what, labelSelector string, callback watching.Callback) *watching.Watcher {
	timeout := o.opts.Settings.Watching.InactivityTimeout
	where := p.res.String() + what
	if ns != "" {
		where += " in " + ns
	}
	report := apiserver.NewWatchReporter(where, o.server, o.opts.Logger, timeout)
	return &watching.Watcher{
		REST:              o.clients.rest,
		Path:              p.res.Path(ns),
		Client:            p.client,
		Namespace:         ns,
		LabelSelector:     labelSelector,
		FieldSelector:     p.selectors.fieldSelector(),
		Callback:          callback,
		Name:              where,
		InactivityTimeout: timeout,
		Logger:            o.opts.Logger,
		OnError:           report.Failed,
		OnWatching:        report.Watching,
		AwaitServer:       func(ctx context.Context) bool { return o.health.Await(ctx, time.Minute) },
		OnStall: func() {
			o.opts.Logger.Warn(fmt.Sprintf("The watch stream of %s has been silent for %s seconds; re-establishing it.", where, execution.Seconds(timeout)))
			o.dropConnections()
		},
	}
}

// listed registers a watch of the pipeline with the readiness and, for an
// indexed resource, the index gate, and returns what the watch calls once
// it has listed.
func (o *operator) listed(p *pipeline) func() {
	ready := o.ready.watch()
	if p.indexer == nil || o.indexed == nil {
		return ready
	}
	indexed := o.indexed.watch()
	return func() {
		indexed()
		ready()
	}
}
