package operator

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"

	"github.com/kopf-go/kopf/runtime/daemons"
	"github.com/kopf-go/kopf/runtime/logging"
	"github.com/kopf-go/kopf/runtime/peering"
	"github.com/kopf-go/kopf/runtime/queueing"
	"github.com/kopf-go/kopf/runtime/scope"
	"github.com/kopf-go/kopf/runtime/settings"
	"github.com/kopf-go/kopf/runtime/watching"
)

// applyPeeringOptions maps the command line's peering options into the
// settings before the startup handlers run, as Kopf maps run()'s
// arguments: -P/--peering names the peering and makes it mandatory,
// --standalone turns it off, a priority given (-p, --dev) is the
// priority. The startup handlers may change them afterwards.
func applyPeeringOptions(opts Options) {
	p := &opts.Settings.Peering
	if opts.PeeringName != "" {
		p.Name = opts.PeeringName
		p.Mandatory = true
	}
	if opts.Standalone {
		p.Standalone = true
	}
	if opts.Priority != 0 {
		p.Priority = opts.Priority
	}
}

// shardedStandalone turns peering off for sharded replicas (after the
// startup handlers, which may change the settings): they share the
// objects, where peering would elect one active replica (the Lease) or,
// at equal priorities without it, freeze them all (Kopf). A peering name
// given (-P) still names the sharding group (docs/sharding.md).
func shardedStandalone(opts *Options) {
	p := &opts.Settings.Peering
	if opts.Sharding == nil || p.Standalone {
		return
	}
	opts.Logger.Info("Sharding is on: the replicas share the objects, so peering is off (the standalone mode).")
	p.Standalone = true
}

// pauseGate holds the workers while the operator is paused (by peering:
// a peer of a higher priority, a stand-by replica, a missing mandatory
// peering object): a worker finishes the cycle it is in, and its next
// one starts only once the operator resumes. The watches stay open (the
// stand-by's caches are warm); each object's latest event waits in its
// stream (see queueing.Stream), so an object is processed once on resume,
// at its latest version. Daemons and timers are stopped on pause
// (daemons.Engine.Pause) and started again on resume.
type pauseGate struct {
	stop   <-chan struct{} // the operator is exiting: the held workers return
	logger *slog.Logger

	mu      sync.Mutex
	open    chan struct{} // closed while running
	paused  bool
	engine  *daemons.Engine
	toggles *peering.Toggles
}

func newPauseGate(stop <-chan struct{}, logger *slog.Logger) *pauseGate {
	g := &pauseGate{stop: stop, logger: logger, open: make(chan struct{})}
	close(g.open)
	return g
}

// set pauses or resumes (peering.Toggles.OnChange).
func (g *pauseGate) set(paused bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if paused == g.paused {
		return
	}
	g.paused = paused
	if paused {
		g.open = make(chan struct{})
		if g.engine != nil {
			g.engine.Pause()
		}
		return
	}
	if g.engine != nil {
		g.engine.Resume()
	}
	close(g.open)
}

// attach gives the gate the daemons' engine, paused at once if the
// operator is.
func (g *pauseGate) attach(e *daemons.Engine) {
	if g == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.engine = e
	if g.paused {
		e.Pause()
	}
}

func (g *pauseGate) gate() <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.open
}

// hold wraps a worker's processing so that it starts only while the
// operator is not paused.
func (g *pauseGate) hold(process queueing.Processor) queueing.Processor {
	if g == nil {
		return process
	}
	return func(ctx context.Context, ev watching.Event, s *queueing.Stream) {
		for first := true; ; first = false {
			g.mu.Lock()
			paused := g.paused
			g.mu.Unlock()
			if !paused {
				break
			}
			if first {
				logging.ForObject(g.logger, ev.Key).Debug("The operator is paused: the processing waits for the resume.")
			}
			select {
			case <-g.gate():
			case <-ctx.Done():
				return
			case <-g.stop:
				return
			}
		}
		process(ctx, ev, s)
	}
}

// startPeering joins the operator's peering objects (see package peering
// and docs/peering.md), unless the peering is standalone: a keep-alive and
// an observer per peering object (one ClusterKopfPeering, or a KopfPeering
// per served namespace; in kopf.dev and in zalando.org where both are
// served), and the Lease election of the active replica. It returns the
// pause gate of the workers (nil standalone) and what stops the peering,
// to be called once the workers are done (the Lease is released then, and
// the operator's records removed).
//
// The operator is paused from the start until the peering is resolved
// (the resources discovered, the objects read; retried while the API
// server fails), so that no replica handles anything before it knows
// whether it may. A peering object missing at start: with a mandatory
// peering (-P), the operator stays paused until it appears (as Kopf 1.x);
// with the default one, it runs standalone (Kopf's log line) and joins
// the peering if the object appears later.
func startPeering(ctx context.Context, dc discovery.DiscoveryInterface, cl clients, opts Options, sc scope.Scope) (*pauseGate, func()) {
	s := opts.Settings.Peering
	logger := opts.Logger
	if s.Standalone {
		return nil, func() {}
	}
	toggles := &peering.Toggles{}
	gate := newPauseGate(ctx.Done(), logger)
	toggles.OnChange = gate.set
	starting := toggles.Make("peering is starting", true)

	pctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer starting.Drop() // after the toggles that replace it are made
		joinPeering(pctx, &wg, dc, cl, opts, sc, toggles)
	}()
	return gate, func() {
		cancel()
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			logger.Warn("The peering did not stop in time; exiting anyway.")
		}
	}
}

// joinPeering resolves the peering and starts its goroutines in wg.
func joinPeering(ctx context.Context, wg *sync.WaitGroup, dc discovery.DiscoveryInterface, cl clients, opts Options, sc scope.Scope, toggles *peering.Toggles) {
	s := opts.Settings.Peering
	logger := opts.Logger
	clusterwide := len(opts.Namespaces) == 0 || opts.AllNamespaces
	if s.Clusterwide != nil {
		clusterwide = *s.Clusterwide
	}
	identity := peering.Identity(s.Identity)
	if identity == "" {
		identity = peering.DetectOwnID(false)
	}
	retry := wait.Backoff{Duration: time.Second, Factor: 2, Jitter: 0.1, Steps: math.MaxInt32, Cap: opts.RescanInterval}
	var gvrs []schema.GroupVersionResource
	var namespaces []string
	var objects []peering.Object
	found := false
	for {
		var err error
		gvrs, namespaces, objects, found, err = resolvePeering(ctx, dc, cl, s, clusterwide, sc, logger)
		if err == nil {
			break
		}
		delay := retry.Step()
		logger.Debug(fmt.Sprintf("The peering cannot be resolved: %v; retrying in %s seconds.", err, seconds(delay)))
		select {
		case <-ctx.Done():
			return
		case <-time.After(delay):
		}
	}
	if len(gvrs) == 0 {
		if s.Mandatory {
			logger.Warn(fmt.Sprintf("The peering resources %s are not served (their CRDs are missing), but the peering %q is mandatory: the operator is paused.", peering.Describe(peering.Selectors(clusterwide)), s.Name))
			toggles.Make("peering CRD is missing", true)
		} else {
			logger.Info("Default peering object not found, falling back to the standalone mode.")
		}
		return
	}
	if len(objects) == 0 {
		if s.Mandatory {
			logger.Warn(fmt.Sprintf("The peering %q cannot be read, but it is mandatory: the operator is paused.", s.Name))
			toggles.Make("peering is forbidden", true)
		}
		return
	}
	logger.Debug(fmt.Sprintf("Peering as %s in '%s' with the priority %d.", identity, s.Name, s.Priority))
	if !found {
		if s.Mandatory {
			logger.Warn(fmt.Sprintf("The peering %q is not found, but it is mandatory: the operator is paused until it appears.", s.Name))
		} else {
			logger.Info("Default peering object not found, falling back to the standalone mode.")
		}
	}

	var leaseOnce sync.Once
	startLease := func() {}
	if s.Lease {
		fallback := ""
		if len(namespaces) > 0 {
			fallback = namespaces[0]
		}
		e := &peering.Elector{
			Client:    cl.dynamic.Resource(peering.Leases),
			Namespace: peering.LeaseNamespace(s.LeaseNamespace, fallback),
			Name:      peering.LeaseName(s.LeaseName, s.Name, s.Priority),
			Identity:  identity,
			Duration:  s.LeaseDuration,
			Renew:     s.RenewDeadline,
			Retry:     s.RetryPeriod,
			Logger:    logger,
		}
		startLease = func() {
			leaseOnce.Do(func() {
				e.Standby = toggles.Make("lease "+e.Namespace+"/"+e.Name, true)
				wg.Add(1)
				go func() {
					defer wg.Done()
					e.Run(ctx)
				}()
			})
		}
		if found {
			startLease()
		}
	}
	// Paused until the peers are known: the first judgement of any of the
	// objects (Kopf preactivates its toggle when the peering is mandatory).
	// A mandatory peering missing in one group but present in another
	// pauses nothing.
	unseen := toggles.Make("peering "+s.Name+" is not observed yet", found || s.Mandatory)
	for _, o := range objects {
		var joined sync.Once
		seen := func() {
			startLease()
			if !o.Exists {
				// Created after the start: the record is written now, not
				// at the next keep-alive.
				joined.Do(func() {
					if _, err := o.Touch(ctx, identity, s.Priority, s.Lifetime, s.Stealth); err != nil {
						logger.Warn(fmt.Sprintf("The keep-alive in '%s' has failed: %v", s.Name, err))
					}
				})
			}
		}
		ob := &peering.Observer{
			Object:    o,
			Identity:  identity,
			Priority:  s.Priority,
			Conflicts: toggles.Make(s.Name+"@"+o.Namespace, false),
			Lease:     s.Lease,
			Seen:      seen,
			Processed: func() { unseen.Set(false) },
		}
		wg.Add(2)
		go func() {
			defer wg.Done()
			ob.Run(ctx)
		}()
		go func() {
			defer wg.Done()
			o.Keepalive(ctx, identity, s.Priority, s.Lifetime, s.Stealth)
		}()
	}
}

// resolvePeering finds the peering resources served, the namespaces of
// the peering objects, and which objects may be read (a Forbidden one is
// left out with a warning: the role lacks the rules of peering) and
// exist. Any other failure is an error, to retry.
func resolvePeering(ctx context.Context, dc discovery.DiscoveryInterface, cl clients, s settings.Peering, clusterwide bool, sc scope.Scope, logger *slog.Logger) (gvrs []schema.GroupVersionResource, namespaces []string, objects []peering.Object, found bool, err error) {
	gvrs, err = peering.Resolve(dc, clusterwide)
	if err != nil || len(gvrs) == 0 {
		return gvrs, nil, nil, false, err
	}
	namespaces = []string{""}
	if !clusterwide {
		if namespaces, err = peeringNamespaces(ctx, cl, sc); apierrors.IsForbidden(err) {
			logger.Warn(fmt.Sprintf("The peering is left out: %v", err))
			return gvrs, nil, nil, false, nil
		} else if err != nil {
			return nil, nil, nil, false, err
		}
	}
	for _, gvr := range gvrs {
		for _, ns := range namespaces {
			o := peering.Object{Client: cl.dynamic.Resource(gvr), Namespace: ns, Name: s.Name, Logger: logger}
			ok, err := o.Get(ctx)
			if apierrors.IsForbidden(err) {
				logger.Warn(fmt.Sprintf("The peering %q %s cannot be read, it is left out: %v", s.Name, where(ns), err))
				continue
			}
			if err != nil {
				return nil, nil, nil, false, fmt.Errorf("reading the peering %q %s: %w", s.Name, where(ns), err)
			}
			found = found || ok
			o.Exists = ok
			objects = append(objects, o)
		}
	}
	return gvrs, namespaces, objects, found, nil
}

func where(ns string) string {
	if ns == "" {
		return "cluster-wide"
	}
	return fmt.Sprintf("in '%s'", ns)
}

// peeringNamespaces are the namespaces of the KopfPeerings: the served
// ones given by name, or, for patterns, those that match at start.
func peeringNamespaces(ctx context.Context, cl clients, sc scope.Scope) ([]string, error) {
	if names, ok := sc.ExactNamespaces(); ok {
		return names, nil
	}
	list, err := cl.dynamic.Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing the namespaces of the peering: %w", err)
	}
	var names []string
	for _, ns := range list.Items {
		if sc.Matches(ns.GetName()) {
			names = append(names, ns.GetName())
		}
	}
	return names, nil
}
