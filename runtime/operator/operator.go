// Package operator runs the whole operator: it resolves the registry's
// resources through discovery, and for each one (in each watched namespace)
// runs a watcher feeding per-object workers of a reactor, until the context
// is cancelled.
//
// It is the operator's composition root, in the manner of
// controller-runtime's manager: Run builds an operator of named parts
// (parts lists them, in the order they start and why), starts them in
// that order, serves the resources (one pipeline per resource: see
// pipeline), and stops the parts in the reverse order.
//
// A fleet operator (Options.Clusters, see fleet.go) runs the same parts
// split in two: the process-wide ones once, and the per-cluster ones for
// each cluster that the provider engages, as a single-cluster operator
// runs them all once.
package operator

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"

	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"

	"github.com/kopf-go/kopf/internal/buildinfo"
	"github.com/kopf-go/kopf/runtime/apiserver"
	"github.com/kopf-go/kopf/runtime/daemons"
	"github.com/kopf-go/kopf/runtime/kwargs"
	"github.com/kopf-go/kopf/runtime/leases"
	"github.com/kopf-go/kopf/runtime/metrics"
	"github.com/kopf-go/kopf/runtime/queueing"
	"github.com/kopf-go/kopf/runtime/registry"
	"github.com/kopf-go/kopf/runtime/scope"
)

// DevVersion is the version of the runtime under development: what Version
// reports when the binary was built from a checkout of kopf-go.
const DevVersion = "0.1.0-dev"

// Version is the runtime's version, logged at start and reported by the
// operator's --version, without the leading v (as Kopf's "1.44.6"): the
// version of github.com/kopf-go/kopf that the operator's go.mod requires
// (0.1.0 for v0.1.0), or DevVersion if it replaces the module with a
// checkout.
func Version() string {
	if v := buildinfo.ModuleVersion("github.com/kopf-go/kopf"); v != "" {
		return strings.TrimPrefix(v, "v")
	}
	return DevVersion
}

// Run serves the registry's handlers until ctx is done. It returns nil on a
// clean stop and an error only if the operator cannot start (no
// credentials, a login or startup handler failed) or if a cleanup handler
// failed.
//
// Its activities (see activities.go): the login handlers (or Options.Login
// when Options.Config is nil) produce the credentials first; then the
// startup handlers run, before the settings are read and anything is
// watched; the cleanup handlers run once everything has stopped.
//
// The API server is not needed at start: while it cannot be reached, Run
// logs why (see apiserver.Health) and keeps trying. The requests carry the
// User-Agent of the configuration, or UserAgent() if it has none. Warnings
// that the API server sends in responses (e.g. about deprecated APIs or
// pruned fields) are logged at WARNING, each text once, unless the
// configuration has a warning handler.
//
// Run changes no process-wide state: client-go's log lines about the
// watches go to Options.Logger through client-go's contextual logging, but
// the rest of klog's output goes wherever the process routes klog (see
// logging.RouteKlog, which the command line of package cli calls).
func Run(ctx context.Context, reg *registry.Registry, opts Options) error {
	o, err := newOperator(reg, opts)
	if err != nil {
		return err
	}
	return o.run(ctx)
}

// operator is one run of the operator: what its parts make and share. Each
// field is set by the part that makes it (see parts) and read by the parts
// that start after it; nil where the part is off.
type operator struct {
	opts   Options // the options with their defaults; Logger also posts (see startPoster)
	logger *slog.Logger
	reg    *registry.Registry
	scope  scope.Scope
	// cluster names the cluster of a fleet that this operator serves
	// (with its per-cluster parts, see fleet.go): "" in a single-cluster
	// operator and in a fleet's process-wide part.
	cluster string
	fleet   *fleet // the clusters served; nil in a single-cluster operator and in a fleet's cluster
	// identity names this replica in every Lease and peering record it
	// writes (HA, sharding, admission): one per run, Kopf's detect_own_id
	// unless settings.Peering.Identity says otherwise.
	identity string

	loaded           *rest.Config                 // login: the credentials
	defaultNamespace string                       // login: the login handlers' DefaultNamespace, of Events about cluster-scoped objects
	relogin          *apiserver.Relogin           // login: loads the credentials again (on 401, at expiration) for all the clients; nil: never
	objectsMemo      kwargs.Memo                  // activities: what each object's memo copies (see objectsMemo)
	metrics          *metrics.Metrics             // metrics; nil: no metrics (see MetricsAddress)
	cfg              *rest.Config                 // connection: the operator's own requests
	handlersCfg      *rest.Config                 // connection: the handlers' clients (RESTConfig)
	server           string                       // connection: the API server's address, for the log
	dropConnections  func()                       // connection: closes every connection to the API server
	health           *apiserver.Health            // connection: whether the API server answers
	shards           *shards                      // connection: this replica's share of the objects; nil without sharding
	ready            *readiness                   // health: calls Ready
	monitor          *watchMonitor                // health endpoints: the endpoints' view of the watches; nil without endpoints
	probe            atomic.Pointer[ProbeFunc]    // probes: the probe handlers' runner
	releaser         *queueing.MemoryReleaser     // memory; nil: the memory is left to the Go runtime
	clients          clients                      // clients
	discovery        discovery.DiscoveryInterface // clients
	paused           *pauseGate                   // peering: holds the workers while paused; nil standalone
	workers          sync.WaitGroup               // workers: every goroutine stopped with the workers
	daemons          *daemons.Engine              // daemons: runs the daemons and timers
	indexed          *indexGate                   // daemons: holds the handlers until the indices are filled; nil without indices
}

func newOperator(reg *registry.Registry, opts Options) (*operator, error) {
	opts = opts.withDefaults()
	logger := opts.Logger
	logger.Debug(fmt.Sprintf("Starting Kopf-go %s.", Version()))
	if len(opts.Namespaces) == 0 && !opts.AllNamespaces {
		logger.Warn("No namespaces are specified with -n or -A (kopf.WithNamespaces or kopf.WithAllNamespaces in code): serving the whole cluster. Use -A/--all-namespaces explicitly.")
	}
	sc, err := scope.Parse(opts.Namespaces)
	if err != nil {
		return nil, err
	}
	identity := opts.Settings.Peering.Identity
	if identity == "" {
		identity = leases.DetectOwnID(false)
	}
	o := &operator{opts: opts, logger: logger, reg: reg, scope: sc, identity: identity}
	if opts.Clusters != nil {
		o.fleet = newFleet(o)
	}
	return o, nil
}

// part is one named part of the operator. start brings it up with the
// context of the parts before it, and returns the context of the parts
// after it (the same, or with values added) and what stops it (nil:
// nothing to stop); an error fails the operator's start.
type part struct {
	name  string
	start func(ctx context.Context) (context.Context, stopFunc, error)
	in    partScope // where a fleet operator runs it
}

// partScope says where a fleet operator runs a part: once for the
// process, for each cluster, or both (login: the home cluster's, and each
// cluster's Config). A single-cluster operator runs every part once.
type partScope int

const (
	process partScope = 1 << iota
	perCluster
	both = process | perCluster
)

// stopFunc stops a part; only the cleanup handlers' failure is an error.
type stopFunc func() error

// parts are the operator's parts in the order they start; they stop in the
// reverse order. Why this order:
//
//   - login: everything else needs the credentials;
//   - activities: the startup handlers run before anything reads the
//     settings (they may change them); their stop runs the cleanup
//     handlers, so after everything else has stopped;
//   - metrics before the connection, whose transports it counts (every
//     request sent, retries included);
//   - connection: the transports of the operator's and the handlers'
//     requests (sharding's fence is not one: the shard stage's lanes
//     fence the reactor's writes); its stop ends the API server's
//     probing (apiserver.Health), which the health endpoints report;
//   - health endpoints, then the memory releaser, then the clients
//     (discovery) that every later part uses;
//   - poster: it stops after every worker has exited, so that their
//     events are posted; later parts get it in their context;
//   - admission and probes: served with the clients and the poster;
//   - peering: its pause gate exists, paused until the peering is resolved
//     in the background, before any worker starts; it stops after the
//     workers (its Lease released, its records removed, once no worker
//     runs: see startPeering);
//   - workers: the context of the daemons, the sharding coordinator and
//     every resource's pipeline; its stop cancels them all at once and
//     waits for them (the workers finish their cycles while the daemons
//     stop, see queueing.Queue.Drain);
//   - daemons (and the index gate), sharding (the coordinator of its
//     Leases; the stage its pipelines' lanes share): in the workers'
//     context.
//
// After the last part, Run serves the resources (serveResources) until
// its context is done. A fleet operator runs the process-wide parts, then
// serves its clusters (serveFleet), each with the per-cluster parts and
// serveResources; every part keeps its place in the order.
func (o *operator) parts() []part {
	return []part{
		{"login", o.login, both},
		{"activities", o.startActivities, process},
		{"metrics", o.startMetrics, process},
		{"connection", o.connect, perCluster},
		{"health endpoints", o.startHealth, process},
		{"memory releaser", o.startReleaser, process},
		{"clients", o.makeClients, perCluster},
		{"poster", o.startPoster, perCluster},
		{"admission", o.startAdmission, process},
		{"probes", o.startProbes, process},
		{"peering", o.startPeering, perCluster},
		{"workers", o.startWorkers, perCluster},
		{"daemons", o.startDaemons, perCluster},
		{"sharding", o.startSharding, perCluster},
	}
}

// partsIn are the parts that run in scope, in their order.
func (o *operator) partsIn(scope partScope) []part {
	var in []part
	for _, p := range o.parts() {
		if p.in&scope != 0 {
			in = append(in, p)
		}
	}
	return in
}

// errStopped is a part's start cut short by the operator's stop: Run
// returns nil.
var errStopped = errors.New("the operator is stopped while starting")

// run starts the parts in order, serves the resources until ctx is done,
// and stops the started parts in the reverse order.
func (o *operator) run(ctx context.Context) error {
	if o.fleet != nil {
		return runParts(ctx, o.partsIn(process), o.serveFleet)
	}
	return runParts(ctx, o.parts(), o.serveResources)
}

// runParts starts the parts in order, then calls serve with the context
// of the last one, and stops the started parts in the reverse order. Its
// error is the start's or serve's, or else the first stop's (the cleanup
// handlers').
func runParts(ctx context.Context, parts []part, serve func(context.Context) error) (err error) {
	var stops []stopFunc
	defer func() {
		for i := len(stops) - 1; i >= 0; i-- {
			if serr := stops[i](); serr != nil && err == nil {
				err = serr
			}
		}
	}()
	for _, p := range parts {
		next, stop, err := p.start(ctx)
		if errors.Is(err, errStopped) {
			return nil
		}
		if err != nil {
			return err
		}
		if stop != nil {
			stops = append(stops, stop)
		}
		ctx = next
	}
	return serve(ctx)
}

// noError is a stop that cannot fail.
func noError(stop func()) stopFunc {
	return func() error { stop(); return nil }
}

// goWorker runs fn in a goroutine that the workers' stop waits for.
func (o *operator) goWorker(fn func()) {
	o.workers.Add(1)
	go func() {
		defer o.workers.Done()
		fn()
	}()
}
