// Package operator runs the whole operator: it resolves the registry's
// resources through discovery, and for each one (in each watched namespace)
// runs a watcher feeding per-object workers of a reactor, until the context
// is cancelled.
package operator

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/connrotation"

	"github.com/kopf-go/kopf/runtime/body"
	"github.com/kopf-go/kopf/runtime/daemons"
	"github.com/kopf-go/kopf/runtime/execution"
	"github.com/kopf-go/kopf/runtime/indexing"
	"github.com/kopf-go/kopf/runtime/kwargs"
	"github.com/kopf-go/kopf/runtime/metrics"
	"github.com/kopf-go/kopf/runtime/posting"
	"github.com/kopf-go/kopf/runtime/queueing"
	"github.com/kopf-go/kopf/runtime/reactor"
	"github.com/kopf-go/kopf/runtime/registry"
	"github.com/kopf-go/kopf/runtime/resources"
	"github.com/kopf-go/kopf/runtime/scope"
	"github.com/kopf-go/kopf/runtime/settings"
	"github.com/kopf-go/kopf/runtime/sharding/shardstage"
	"github.com/kopf-go/kopf/runtime/watching"
)

// Version is the runtime's version, logged at start.
const Version = "0.1.0-dev"

// Options say what the operator serves and how.
type Options struct {
	// Namespaces to serve: names, globs, "!negations", comma-separated
	// lists (see package scope). Empty with AllNamespaces false means the
	// whole cluster too (as Kopf does, with a warning).
	Namespaces    []string
	AllNamespaces bool
	// Standalone disables peering (--standalone; settings.Peering.Standalone).
	Standalone bool
	// Priority is the operator's priority among the operators that serve
	// the same objects, and PeeringName the name of their peering object,
	// which makes the peering mandatory (Kopf's priority= and
	// peering_name=, -p/--dev and -P on the command line); 0 and "" leave
	// settings.Peering as it is. See docs/peering.md.
	Priority    int
	PeeringName string
	Settings    *settings.Settings
	Logger      *slog.Logger
	// RescanInterval is how often unresolved resources are looked up again.
	// While discovery fails, it is retried sooner: after 1, 2, 4...
	// seconds up to RescanInterval.
	RescanInterval time.Duration
	// Login, if set, loads the credentials again from their source (the
	// kubeconfig file, the service account's token): the operator calls it
	// when the API server answers 401 Unauthorized, and if the bearer token
	// has changed, sends the refused request again and every later one
	// with the new token (see relogin); so do the clients that handlers
	// make from RESTConfig. The command line (package cli)
	// sets it. Nil: the credentials of cfg are used until the operator
	// exits (client-go still re-reads cfg.BearerTokenFile every minute).
	// Run calls it at start too when cfg is nil. With login handlers in
	// the registry, they replace it (at start and on 401), and it (or cfg)
	// is what activities.LoginViaClient returns in them (see credentials).
	Login LoginFunc
	// Ready, if set, is called once when the operator is ready: every
	// resource of the registry is resolved and watched, and the objects of
	// each watch's first listing have been handed to the workers (not
	// necessarily processed yet). It is called in a goroutine of its own; a
	// panic in it is logged. It is never called if the operator stops
	// first, nor while a resource cannot be resolved (e.g. its CRD is
	// missing) or a watch cannot list (e.g. RBAC forbids it). This is later than Kopf's ready_flag, which is raised once
	// the startup activities are done, before the watching starts.
	Ready func()
	// Observe, if set, is told how every attempt of a handler ended, per
	// object (see reactor.Observation and Reactor.Observe): the hook of
	// package kopftest's outcome assertions.
	Observe func(reactor.Observation)
	// MetricsAddress, if set (host:port, ":8080"; "0" is unset too),
	// is where the operator serves its Prometheus metrics, at /metrics
	// (see package metrics). The address must be free: Run fails at
	// start if it cannot listen on it.
	MetricsAddress string
	// Memo is the operator's memo (Kopf's memo= of kopf.run() and
	// kopf.operator()): the activities get it itself, and each object's
	// handlers a shallow copy of it as the startup handlers left it, made
	// when the operator first sees the object (see reactor.Reactor.Memo
	// and objectsMemo). Nil: an empty memo.
	Memo kwargs.Memo
	// Prober, if set, is called once the startup handlers have succeeded,
	// before anything is watched, with the function that runs the probe
	// handlers (Kopf's on.probe): what a health endpoint serves. The
	// function may be called from any goroutine until the operator stops.
	Prober func(ProbeFunc)
	// LivenessEndpoint and ReadinessEndpoint, if set, are the URLs where
	// the operator serves its liveness and readiness (e.g.
	// http://0.0.0.0:8080/healthz, Kopf's --liveness; see package health
	// and docs/health.md): both fail while a watch has been down, or the
	// API server unreachable, for longer than
	// settings.Watching.InactivityTimeout; readiness also until the
	// operator is ready (as for Ready). Run fails at start if they cannot
	// be served. The liveness endpoint serves the results of the probe
	// handlers (Kopf's on.probe), by id.
	LivenessEndpoint  string
	ReadinessEndpoint string
	// Sharding, if set, splits the objects among the replicas of the
	// operator that run with it (see Sharding and docs/sharding.md).
	Sharding *Sharding

	dropConnections func()                     // closes every connection to the API server
	releaser        *memoryReleaser            // nil: the memory is left to the Go runtime
	objectsMemo     kwargs.Memo                // what each object's memo is a copy of (see objectsMemo)
	server          string                     // the API server's address, for the log
	health          *apiHealth                 // whether the API server answers
	ready           *readiness                 // calls Ready
	daemons         *daemons.Engine            // runs the daemons and timers
	monitor         *watchMonitor              // nil: no health endpoints
	probe           *atomic.Pointer[ProbeFunc] // the probe handlers' runner, once the clients are made
	metrics         *metrics.Metrics           // nil: no metrics (see MetricsAddress)
	indexed         *indexGate                 // holds the handlers until the indices are filled; nil without indices
	paused          *pauseGate                 // holds the handlers while peering pauses the operator; nil standalone
	shards          *shards                    // this replica's share of the objects; nil without sharding
}

// Run serves the registry's handlers until ctx is done. It returns nil on a
// clean stop and an error only if the operator cannot start (no
// credentials, a login or startup handler failed) or if a cleanup handler
// failed.
//
// Its activities (see activities.go): the login handlers (or Options.Login
// when cfg is nil) produce the credentials first; then the startup
// handlers run, before the settings are read and anything is watched;
// the cleanup handlers run once everything has stopped.
//
// The API server is not needed at start: while it cannot be reached, Run
// logs why (see apiHealth) and keeps trying. The requests carry the
// User-Agent of cfg, or UserAgent() if it has none. Warnings that the API
// server sends in responses (e.g. about deprecated APIs or pruned fields)
// are logged at WARNING, each text once, unless cfg has a warning handler.
//
// Run changes no process-wide state: client-go's log lines about the
// watches go to Options.Logger through client-go's contextual logging, but
// the rest of klog's output goes wherever the process routes klog (see
// logging.RouteKlog, which the command line of package cli calls).
func Run(ctx context.Context, cfg *rest.Config, reg *registry.Registry, opts Options) (err error) {
	if opts.Settings == nil {
		opts.Settings = settings.Default()
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Memo == nil {
		opts.Memo = kwargs.Memo{}
	}
	if opts.RescanInterval <= 0 {
		opts.RescanInterval = 10 * time.Second
	}
	logger := opts.Logger
	logger.Debug(fmt.Sprintf("Starting Kopf-go %s.", Version))
	if len(opts.Namespaces) == 0 && !opts.AllNamespaces {
		logger.Warn("No namespaces are specified with -n or -A (kopf.WithNamespaces or kopf.WithAllNamespaces in code): serving the whole cluster. Use -A/--all-namespaces explicitly.")
	}
	sc, err := scope.Parse(opts.Namespaces)
	if err != nil {
		return err
	}
	// The login handlers (or the built-in login) first, then the startup
	// handlers, which may still change the settings: they are read only
	// afterwards. The cleanup handlers run last, once everything else has
	// stopped (this defer runs after the others).
	if cfg, err = credentials(ctx, cfg, reg, &opts); err != nil {
		return err
	}
	actx := activityContext(ctx, cfg, opts)
	applyPeeringOptions(opts)
	if ok, err := startup(actx, reg, opts); !ok {
		return err
	}
	defer func() {
		if cerr := cleanup(actx, reg, opts); cerr != nil && err == nil {
			err = cerr
		}
	}()
	opts.objectsMemo = objectsMemo(opts.Memo)
	// A silent watch stream is most often a dead connection, which every
	// other request shares (HTTP/2 multiplexes them all over one): a new
	// watch would wait on it until client-go's HTTP/2 health check gives up
	// (~45 s). So re-establishing a silent watch drops the connections.
	handlersCfg := rest.CopyConfig(cfg)
	cfg = rest.CopyConfig(cfg)
	if !MetricsDisabled(opts.MetricsAddress) {
		opts.metrics = metrics.New()
		stop, err := serveMetrics(opts.MetricsAddress, opts.metrics, logger)
		if err != nil {
			return err
		}
		defer stop()
		// Innermost: every request sent counts, the retries included.
		cfg.Wrap(opts.metrics.WrapTransport)
		handlersCfg.Wrap(opts.metrics.WrapTransport)
	}
	if cfg.UserAgent == "" {
		cfg.UserAgent = UserAgent()
		handlersCfg.UserAgent = cfg.UserAgent
	}
	if cfg.WarningHandler == nil && cfg.WarningHandlerWithContext == nil {
		cfg.WarningHandlerWithContext = &serverWarnings{logger: logger, seen: map[string]bool{}}
	}
	if opts.Sharding != nil {
		opts.shards = newShards(cfg, opts)
	}
	opts.server = strings.TrimSuffix(cfg.Host, "/")
	dial := cfg.Dial
	if dial == nil {
		dial = (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	}
	conns := connrotation.NewDialer(dial)
	cfg.Dial = conns.DialContext
	opts.dropConnections = conns.CloseAll
	if cfg.QPS == 0 && cfg.RateLimiter == nil {
		// client-go's default of 5 requests/s would throttle the reactor to
		// a few objects per second. Like Kopf, no client-side limit: the API
		// server's priority and fairness protects it.
		cfg.QPS = -1
		handlersCfg.QPS = -1
	}
	if n := opts.Settings.Networking.MaxInFlight; n > 0 {
		cfg.Wrap(limitInFlight(n))
		// The handlers' clients have a limit of their own: their requests
		// never hold up the operator's patches.
		handlersCfg.Wrap(limitInFlight(n))
	}
	if opts.Login != nil {
		// The handlers' own clients (RESTConfig) renew the token too.
		relogin := newRelogin(opts.Login, logger)
		cfg.Wrap(relogin.wrap)
		handlersCfg.Wrap(relogin.wrap)
	}
	health := newAPIHealth(opts.server, logger, opts.Settings.Watching.InactivityTimeout)
	defer health.stop()
	opts.health = health
	cfg.Wrap(health.wrap) // outermost: it sees each request's final outcome
	opts.ready = newReadiness(opts.Ready, logger)
	opts.probe = new(atomic.Pointer[ProbeFunc])
	stopHealth, err := serveHealth(ctx, &opts)
	if err != nil {
		return err
	}
	defer stopHealth()
	if d := opts.Settings.Queueing.ReleaseMemoryAfter; d > 0 {
		opts.releaser = newMemoryReleaser(d)
		defer opts.releaser.stop()
	}
	cl, err := newClients(cfg)
	if err != nil {
		return err
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return fmt.Errorf("creating the discovery client: %w", err)
	}
	health.setProbes(func() {
		probeCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		_ = dc.RESTClient().Get().AbsPath("/version").Do(probeCtx).Error()
	}, func() bool {
		probeCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		return serverReady(probeCtx, dc) || ctx.Err() != nil
	})

	poster, err := posting.NewForConfig(cfg, opts.Settings.Posting, posting.Options{Level: opts.Settings.Posting.Level, Logger: logger})
	if err != nil {
		return err
	}
	defer func() { // last: after every worker has exited
		stopCtx, stop := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer stop()
		if err := poster.Stop(stopCtx); err != nil {
			logger.Warn(fmt.Sprintf("Not all events were posted before exiting: %v", err))
		}
	}()
	if opts.Settings.Posting.Loggers {
		opts.Logger = slog.New(posting.NewLogHandler(opts.Logger.Handler(), poster))
	}
	ctx = posting.WithPoster(ctx, poster)
	ctx = withRESTConfig(ctx, handlersCfg)
	ctx = withClients(ctx)
	stopAdmission, err := serveAdmission(ctx, cfg, reg, opts, dc)
	if err != nil {
		return err
	}
	defer stopAdmission()
	probe := prober(ctx, reg, opts)
	opts.probe.Store(&probe)
	if opts.Prober != nil {
		opts.Prober(probe)
	}

	shardedStandalone(&opts)
	defer startPeering(ctx, dc, cl, &opts, sc)() // stopped after the workers: see peering.go
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() {
		// Cancel first, then wait: Run may return an error while resources
		// are served, and their watchers and workers stop only when told.
		cancel()
		wg.Wait()
	}()
	// Daemons and timers are told to stop as soon as the operator exits,
	// at the same time as the workers finish their cycles (see drain), and
	// waited for within settings.Background.ExitTimeout.
	opts.daemons = daemons.NewEngine(ctx, opts.Settings, logger)
	instrumentDaemons(opts.metrics, opts.daemons)
	opts.paused.attach(opts.daemons)
	wg.Add(1)
	go func() {
		defer wg.Done()
		<-ctx.Done()
		opts.daemons.Shutdown()
	}()
	if reg.HasIndices() {
		opts.indexed = newIndexGate()
	}
	if opts.shards != nil {
		opts.shards.stage.Daemons = opts.daemons
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := opts.shards.run(ctx); err != nil {
				logger.Error(fmt.Sprintf("Sharding cannot start: %v", err))
			}
		}()
	}
	pending := reg.Selectors()
	served := map[string]bool{}
	// While discovery fails, it is retried with backoff, and its failures
	// reported with backoff too; the "Unresolved resources" hint is given
	// only when discovery succeeded and the resources are not there.
	retry := wait.Backoff{Duration: time.Second, Factor: 2, Jitter: 0.1, Steps: math.MaxInt32, Cap: opts.RescanInterval}
	discoveryLog := logBackoff{maxSilence: opts.Settings.Watching.InactivityTimeout}
rescan:
	for len(pending) > 0 {
		var delay time.Duration
		pending, err = serve(ctx, &wg, dc, cl, reg, opts, sc, served, pending)
		var derr *discoveryError
		if opts.indexed != nil && !errors.As(err, &derr) {
			opts.indexed.seal() // the watches of the indexed resources found are started
		}
		switch {
		case errors.As(err, &derr):
			delay = retry.Step()
			var status apierrors.APIStatus
			if errors.As(err, &status) && !apierrors.IsUnauthorized(err) && discoveryLog.due(time.Now()) {
				logger.Warn(fmt.Sprintf("The resources of the API server %s cannot be discovered: %v; retrying in %s seconds.", opts.server, derr.err, seconds(delay)))
			} else { // unreachable: apiHealth says so
				logger.Debug(fmt.Sprintf("The resources of the API server %s cannot be discovered: %v; retrying in %s seconds.", opts.server, derr.err, seconds(delay)))
			}
		case err != nil:
			return err
		case len(pending) == 0:
			break rescan
		case !serverReady(ctx, dc):
			// A starting API server serves discovery before it has
			// loaded the CRDs: their absence means nothing yet.
			delay = retry.Step()
			logger.Debug(fmt.Sprintf("The API server %s is not ready; resolving the resources again in %s seconds.", opts.server, seconds(delay)))
		default:
			retry = wait.Backoff{Duration: time.Second, Factor: 2, Jitter: 0.1, Steps: math.MaxInt32, Cap: opts.RescanInterval}
			discoveryLog.recovered()
			delay = opts.RescanInterval
			names := make([]string, len(pending))
			for i, s := range pending {
				names[i] = s.String()
			}
			logger.Warn("Unresolved resources cannot be served (try creating their CRDs): " + strings.Join(names, ", "))
		}
		select {
		case <-ctx.Done():
			break rescan
		case <-time.After(delay):
		}
	}
	if len(pending) == 0 {
		opts.ready.allResolved()
	}
	<-ctx.Done()
	return nil
}

// serverReady tells whether the API server says it is ready (GET
// /readyz), or cannot say it (the operator may not read /readyz).
func serverReady(ctx context.Context, dc discovery.DiscoveryInterface) bool {
	var code int
	err := dc.RESTClient().Get().AbsPath("/readyz").Do(ctx).StatusCode(&code).Error()
	return err == nil || code == http.StatusUnauthorized || code == http.StatusForbidden || code == http.StatusNotFound
}

// discoveryError is a failure to list the API server's resources: nothing
// can be said yet about whether the selected resources exist.
type discoveryError struct{ err error }

func (e *discoveryError) Error() string { return e.err.Error() }
func (e *discoveryError) Unwrap() error { return e.err }

// serverWarnings logs the warnings that the API server sends in responses
// ("The API server warns: <text>"), each distinct text once: the same
// warning (e.g. about a field that a CRD's schema prunes) may come with
// every patch.
type serverWarnings struct {
	logger *slog.Logger
	mu     sync.Mutex
	seen   map[string]bool
}

// maxWarnings bounds the texts remembered; past it, they are forgotten.
const maxWarnings = 256

func (w *serverWarnings) HandleWarningHeaderWithContext(_ context.Context, code int, _ string, text string) {
	if code != 299 || text == "" {
		return
	}
	w.mu.Lock()
	if len(w.seen) >= maxWarnings {
		clear(w.seen)
	}
	seen := w.seen[text]
	w.seen[text] = true
	w.mu.Unlock()
	if !seen {
		w.logger.Warn("The API server warns: " + text)
	}
}

// serve resolves the selectors and starts serving the resolved ones. It
// returns the selectors that are not resolvable yet: all of them, with a
// *discoveryError, if the API server's resources cannot be discovered.
// Each resource is served once, however many selectors name it: its
// reactor runs the handlers of every selector that matches it.
func serve(ctx context.Context, wg *sync.WaitGroup, dc discovery.DiscoveryInterface, cl clients, reg *registry.Registry, opts Options, sc scope.Scope, served map[string]bool, selectors []resources.Selector) ([]resources.Selector, error) {
	all, err := resources.Discover(dc)
	if err != nil {
		return selectors, &discoveryError{err}
	}
	var pending []resources.Selector
	for _, sel := range selectors {
		if sel.IsEverything() {
			// Resources that appear later (new CRDs) are not picked up
			// until the operator restarts.
			for _, res := range resources.ResolveAll(all, sel) {
				if !served[res.String()] {
					served[res.String()] = true
					serveResource(ctx, wg, cl, reg, opts, sc, res)
				}
			}
			continue
		}
		res, err := resources.Resolve(all, sel)
		if errors.Is(err, resources.ErrNotFound) {
			pending = append(pending, sel)
			continue
		}
		if err != nil {
			return nil, err
		}
		if !served[res.String()] {
			served[res.String()] = true
			serveResource(ctx, wg, cl, reg, opts, sc, res)
		}
	}
	return pending, nil
}

func serveResource(ctx context.Context, wg *sync.WaitGroup, cl clients, reg *registry.Registry, opts Options, sc scope.Scope, res resources.Resource) {
	client := cl.dynamic.Resource(schema.GroupVersionResource{Group: res.Group, Version: res.Version, Resource: res.Plural})
	r := &reactor.Reactor{Resource: res, Client: client, REST: cl.rest, Registry: reg, Settings: opts.Settings, Logger: opts.Logger, Observe: opts.Observe, Memo: opts.objectsMemo}
	// Workers outlive the watchers: on stop, each finishes the cycle it is
	// in (so that its results are written) for up to the exit timeout, and
	// only then is its context cancelled (see drain).
	workCtx, cancelWork := context.WithCancel(context.WithoutCancel(ctx))
	qopts := queueing.Options{IdleTimeout: opts.Settings.Queueing.IdleTimeout, WorkerLimit: opts.Settings.Queueing.WorkerLimit, Logger: opts.Logger}
	if opts.releaser != nil {
		qopts.OnIdle = opts.releaser.idle
	}
	process := opts.indexed.hold(r.Process)
	var shard *shardstage.Lane
	if opts.shards != nil {
		shard = opts.shards.stage.Lane(res, client, sc, reactor.ClientPatcher{Resource: res, Client: client, REST: cl.rest})
		r.Patcher = shard.Writer() // the reactor's writes are fenced
		process = shard.Process(process)
	}
	mux := queueing.NewMultiplexer(workCtx, qopts, opts.paused.hold(process))
	put := mux.Put
	if shard != nil {
		put = shard.Admit(mux.Put)
	}
	mr := opts.instrumentResource(res, r, mux)
	r.Daemons = opts.daemons
	opts.releaser.watch(mux.Workers)
	// Namespaced resources are watched per namespace when the patterns are
	// plain names, else cluster-wide and filtered here.
	namespaces, exact := sc.ExactNamespaces()
	// The indices are updated in the watch, before the object's worker
	// gets the event (see indexing.Indexer); a resource with indices only
	// needs no workers.
	indexer := &indexing.Indexer{Resource: res, Handlers: reg.IndexHandlers(res), Logger: opts.Logger, Backoff: opts.Settings.Execution.DefaultBackoff}
	switch handled, admit := reg.HasHandlers(res), put; {
	case len(indexer.Handlers) > 0 && handled:
		put = func(ev watching.Event) {
			indexer.Handle(ctx, ev)
			admit(ev)
		}
	case len(indexer.Handlers) > 0:
		put = func(ev watching.Event) { indexer.Handle(ctx, ev) }
	}
	if !res.Namespaced || !exact {
		namespaces = []string{""}
		if res.Namespaced && !sc.Clusterwide() {
			deliver := put
			put = func(ev watching.Event) {
				if sc.Matches(body.Body(ev.Object).Meta().Namespace()) {
					deliver(ev)
				}
			}
		}
	}
	r.Requeue = put
	timeout := opts.Settings.Watching.InactivityTimeout
	for _, ns := range namespaces {
		where := res.String()
		if ns != "" {
			where += " in " + ns
		}
		report := newWatchReporter(where, opts.server, opts.Logger, timeout)
		listed := opts.ready.watch()
		if len(indexer.Handlers) > 0 && opts.indexed != nil {
			ready, indexed := listed, opts.indexed.watch()
			listed = func() {
				indexed()
				ready()
			}
		}
		w := &watching.Watcher{
			REST:              cl.rest,
			Path:              res.Path(ns),
			Client:            client,
			Namespace:         ns,
			Callback:          put,
			Name:              where,
			InactivityTimeout: timeout,
			Logger:            opts.Logger,
			OnError:           report.failed,
			OnWatching:        report.watching,
			OnListed:          listed,
			AwaitServer:       func(ctx context.Context) bool { return opts.health.await(ctx, time.Minute) },
			OnStall: func() {
				opts.Logger.Warn(fmt.Sprintf("The watch stream of %s has been silent for %s seconds; re-establishing it.", where, execution.Seconds(timeout)))
				opts.dropConnections()
			},
		}
		if opts.monitor != nil {
			opts.monitor.AddWatch(where, w.Status)
		}
		instrumentWatch(mr, ns, w)
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.Run(ctx)
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		<-ctx.Done()
		drain(mux, cancelWork, opts.Settings.Queueing.ExitTimeout, res.String(), opts.Logger)
	}()
}
