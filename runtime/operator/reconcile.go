package operator

import (
	"context"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kopf-go/kopf/runtime/body"
	"github.com/kopf-go/kopf/runtime/execution"
	"github.com/kopf-go/kopf/runtime/registry"
	"github.com/kopf-go/kopf/runtime/resources"
	"github.com/kopf-go/kopf/runtime/watching"
)

// The watches of the resources that reconcile handlers own or watch
// (registry.ReconcileHandler's Owns and Watches; docs/reconcile.md): a
// side branch of a served resource's pipeline. An event of a child (any
// type, its status changes included) is mapped to the keys of the served
// resource's objects to reconcile, by the child's controller
// ownerReference or the Watch's Map, and each is handed to the served
// resource's reactor (Reactor.Trigger), which requeues the owner through
// the pipeline's admit like any other wakeup:
//
//	child watcher → namespace filter → map to owners → reactor.Trigger → admit → queue → … → reactor
//
// No handler runs on the children and nothing is written onto them; the
// children's bodies are not kept.

// reconcileRoute is what one owned or watched resource's events mean for
// one reconcile handler.
type reconcileRoute struct {
	id   string         // the handler's
	verb string         // "owned" or "watched": the trigger's first word
	fn   registry.MapFn // nil: the controller ownerReference
}

// reconcileRoutes groups the routes of the reconcile handlers of res by
// the selector of the resource they own or watch, in registration order.
func reconcileRoutes(reg *registry.Registry, res resources.Resource) ([]resources.Selector, map[resources.Selector][]reconcileRoute) {
	var order []resources.Selector
	routes := map[resources.Selector][]reconcileRoute{}
	add := func(sel resources.Selector, rt reconcileRoute) {
		if _, ok := routes[sel]; !ok {
			order = append(order, sel)
		}
		routes[sel] = append(routes[sel], rt)
	}
	for _, h := range reg.ReconcileHandlers(res) {
		for _, sel := range h.Owns {
			add(sel, reconcileRoute{id: h.ID, verb: "owned"})
		}
		for _, w := range h.Watches {
			add(w.Selector, reconcileRoute{id: h.ID, verb: "watched", fn: w.Map})
		}
	}
	return order, routes
}

// startReconcileWatches starts, in the background, the watches of the
// resources owned or watched by the reconcile handlers of the pipeline's
// resource, each once it is resolved (looked up again every
// RescanInterval until it is, as the served resources are).
func (o *operator) startReconcileWatches(ctx context.Context, p *pipeline) {
	order, routes := reconcileRoutes(o.reg, p.res)
	if len(order) == 0 {
		return
	}
	o.goWorker(func() {
		pending := order
		for len(pending) > 0 {
			pending = o.watchChildren(ctx, p, pending, routes)
			if len(pending) == 0 {
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(o.opts.RescanInterval):
			}
		}
	})
}

// watchChildren resolves the selectors and starts the watches of the
// resolved ones; it returns the others.
func (o *operator) watchChildren(ctx context.Context, p *pipeline, selectors []resources.Selector, routes map[resources.Selector][]reconcileRoute) []resources.Selector {
	all, err := resources.Discover(o.discovery)
	if err != nil {
		o.logger.Debug(fmt.Sprintf("The resources owned or watched by the reconcile handlers of %s cannot be discovered yet: %v", p.res, err))
		return selectors
	}
	var pending []resources.Selector
	for _, sel := range selectors {
		child, err := resources.Resolve(all, sel)
		if err != nil {
			o.logger.Warn(fmt.Sprintf("The resource %s, owned or watched by the reconcile handlers of %s, cannot be watched yet: %v", sel, p.res, err))
			pending = append(pending, sel)
			continue
		}
		o.startChildWatches(ctx, p, child, routes[sel])
	}
	return pending
}

// startChildWatches starts a watcher of child per namespace of the
// operator's scope, feeding reconcileChild.
func (o *operator) startChildWatches(ctx context.Context, p *pipeline, child resources.Resource, routes []reconcileRoute) {
	client := o.clients.dynamic.Resource(schema.GroupVersionResource{Group: child.Group, Version: child.Version, Resource: child.Plural})
	namespaces, inScope := o.watchedNamespaces(child)
	timeout := o.opts.Settings.Watching.InactivityTimeout
	for _, ns := range namespaces {
		where := child.String() + " (for the reconcile handlers of " + p.res.String() + ")"
		if ns != "" {
			where += " in " + ns
		}
		w := &watching.Watcher{
			REST:              o.clients.rest,
			Path:              child.Path(ns),
			Client:            client,
			Namespace:         ns,
			Name:              where,
			InactivityTimeout: timeout,
			Logger:            o.opts.Logger,
			AwaitServer:       func(ctx context.Context) bool { return o.health.Await(ctx, time.Minute) },
			Callback: func(ev watching.Event) {
				if inScope == nil || inScope(body.Body(ev.Object).Meta().Namespace()) {
					p.reconcileChild(ctx, child, routes, ev)
				}
			},
		}
		if o.monitor != nil {
			o.monitor.AddWatch(where, w.Status)
		}
		o.goWorker(func() { w.Run(ctx) })
	}
}

// reconcileChild maps an event of an owned or watched object to the
// objects of the pipeline's resource to reconcile, and triggers their
// handlers, with the trigger "<owned|watched> <resource> <key>".
func (p *pipeline) reconcileChild(ctx context.Context, child resources.Resource, routes []reconcileRoute, ev watching.Event) {
	b := body.Body(ev.Object)
	for _, rt := range routes {
		why := rt.verb + " " + child.String() + " " + ev.Key
		for _, key := range p.ownerKeys(ctx, rt, b) {
			p.reactor.Trigger(key, rt.id, why)
		}
	}
}

// ownerKeys returns the keys of the objects of the pipeline's resource
// that an event's object b maps to through the route: its Map (a panic is
// logged and maps to nothing), or else its controller ownerReference if
// that names the pipeline's resource (its group and kind, any version).
func (p *pipeline) ownerKeys(ctx context.Context, rt reconcileRoute, b body.Body) []string {
	if rt.fn == nil {
		return controllerOwner(p.res, b)
	}
	names, err := execution.Guard(func() ([]types.NamespacedName, error) { return rt.fn(ctx, b.DeepCopy()), nil })
	if err != nil {
		p.reactor.Logger.Error(fmt.Sprintf("The map of the reconcile handler '%s' has failed on %s: %v", rt.id, b.Ref(), err))
		return nil
	}
	keys := make([]string, 0, len(names))
	for _, n := range names {
		keys = append(keys, objectKey(p.res, n.Namespace, n.Name))
	}
	return keys
}

// controllerOwner returns the key of the owner of b named by b's
// controller ownerReference if it is an object of res, else nothing.
func controllerOwner(res resources.Resource, b body.Body) []string {
	refs, _ := b.Meta()["ownerReferences"].([]any)
	for _, item := range refs {
		ref, _ := item.(map[string]any)
		if controller, _ := ref["controller"].(bool); !controller {
			continue
		}
		apiVersion, _ := ref["apiVersion"].(string)
		kind, _ := ref["kind"].(string)
		name, _ := ref["name"].(string)
		group, _, _ := strings.Cut(apiVersion, "/")
		if !strings.Contains(apiVersion, "/") {
			group = "" // the core group: "v1"
		}
		if kind == res.Kind && group == res.Group && name != "" {
			return []string{objectKey(res, b.Meta().Namespace(), name)}
		}
		return nil // one controller at most
	}
	return nil
}

// objectKey is the queue's key of an object of res: "namespace/name", or
// "name" for a cluster-scoped resource.
func objectKey(res resources.Resource, namespace, name string) string {
	if !res.Namespaced {
		return name
	}
	return namespace + "/" + name
}
