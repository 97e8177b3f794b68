package operator

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	"k8s.io/client-go/discovery"

	"github.com/kopf-go/kopf/runtime/daemons"
	"github.com/kopf-go/kopf/runtime/logging"
	"github.com/kopf-go/kopf/runtime/peering"
	"github.com/kopf-go/kopf/runtime/queueing"
	"github.com/kopf-go/kopf/runtime/scope"
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
//
// A replica that stands down because it could not renew the HA Lease
// (peering.Member.OnLeaseLost) does not let its cycles finish: abandon
// cancels their contexts, so that nothing they would write is sent once
// another replica may hold the Lease (a handler that ignores its context
// runs on, but its outcome is not stored).
type pauseGate struct {
	stop   <-chan struct{} // the operator is exiting: the held workers return
	logger *slog.Logger

	mu      sync.Mutex
	open    chan struct{} // closed while running
	paused  bool
	engine  *daemons.Engine
	toggles *peering.Toggles
	cycles  map[*context.CancelFunc]bool // the cycles in progress
}

func newPauseGate(stop <-chan struct{}, logger *slog.Logger) *pauseGate {
	g := &pauseGate{stop: stop, logger: logger, open: make(chan struct{}), cycles: map[*context.CancelFunc]bool{}}
	close(g.open)
	return g
}

// abandon cancels the cycles in progress (peering.Member.OnLeaseLost).
func (g *pauseGate) abandon() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.cycles) > 0 {
		g.logger.Warn(fmt.Sprintf("Abandoning %d handling cycles in progress: the Lease is lost.", len(g.cycles)))
	}
	for cancel := range g.cycles {
		(*cancel)()
	}
}

// track registers a cycle in progress until its done is called; false if
// the operator is paused (the cycle must wait).
func (g *pauseGate) track(ctx context.Context) (_ context.Context, done func(), ok bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.paused {
		return ctx, nil, false
	}
	ctx, cancel := context.WithCancel(ctx)
	g.cycles[&cancel] = true
	return ctx, func() {
		g.mu.Lock()
		delete(g.cycles, &cancel)
		g.mu.Unlock()
		cancel()
	}, true
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
// operator is not paused, and tracks it until it ends (see abandon).
func (g *pauseGate) hold(process queueing.Processor) queueing.Processor {
	if g == nil {
		return process
	}
	return func(ctx context.Context, ev watching.Event, s *queueing.Stream) {
		for first := true; ; first = false {
			cctx, done, ok := g.track(ctx)
			if ok {
				defer done()
				process(cctx, ev, s)
				return
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
	}
}

// startPeering joins the operator's peering objects (see
// peering.Member), unless the peering is standalone. It returns the pause
// gate of the workers (nil standalone), paused until the peering is
// resolved, and what stops the peering, to be called once the workers are
// done (the Lease is released then, and the operator's records removed).
func startPeering(ctx context.Context, dc discovery.DiscoveryInterface, cl clients, opts Options, sc scope.Scope, identity string) (*pauseGate, func()) {
	if opts.Settings.Peering.Standalone {
		return nil, func() {}
	}
	gate := newPauseGate(ctx.Done(), opts.Logger)
	m := &peering.Member{
		Settings:    opts.Settings.Peering,
		Clusterwide: len(opts.Namespaces) == 0 || opts.AllNamespaces,
		Scope:       sc,
		Discovery:   dc,
		Client:      cl.dynamic,
		Leases:      cl.coordination,
		Identity:    peering.Identity(identity),
		RetryCap:    opts.RescanInterval,
		Logger:      opts.Logger,
		OnPause:     gate.set,
		OnLeaseLost: gate.abandon,
	}
	return gate, m.Start(ctx)
}
