package operator

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/rest"

	"github.com/kopf-go/kopf/runtime/activities"
	"github.com/kopf-go/kopf/runtime/clusters"
	"github.com/kopf-go/kopf/runtime/kwargs"
	"github.com/kopf-go/kopf/runtime/reactor"
	"github.com/kopf-go/kopf/runtime/settings"
)

// Options say what the operator serves and how: every run option, declared
// once. The command line (package cli) binds its flags to these fields,
// with the values set in code as the flags' defaults, so that a flag given
// takes precedence; the facade's kopf.With* options set them. The zero
// Options are the defaults. Run does not change them: the operator's state
// is its own.
type Options struct {
	// Name is the operator's name in its command line's help and
	// --version (package cli; kopf.WithName); "": the binary's name. The
	// operator itself does not use it.
	Name string
	// Config is the cluster's client configuration, used as it is. Nil:
	// Login loads it (by default as kubectl finds it: $KUBECONFIG,
	// ~/.kube/config, the in-cluster service account; the command line's
	// --kubeconfig names the file). With login handlers in the registry,
	// they produce the credentials instead, and Config (or Login) is what
	// activities.LoginViaClient returns in them.
	Config *rest.Config
	// Login, if set, loads the credentials again from their source (the
	// kubeconfig file, the service account's token): the operator calls it
	// at start when Config is nil, and when the API server answers 401
	// Unauthorized: if the bearer token has changed, the refused request is
	// sent again and every later one with the new token (see relogin); so
	// do the clients that handlers make from RESTConfig. Nil with a Config:
	// its credentials are used until the operator exits (client-go still
	// re-reads Config.BearerTokenFile every minute). Nil without a Config:
	// activities.LoadConfig(""). With login handlers in the registry, they
	// replace it (at start and on 401).
	Login LoginFunc
	// Namespaces to serve: names, globs, "!negations", comma-separated
	// lists (see package scope). Empty with AllNamespaces false means the
	// whole cluster too (as Kopf does, with a warning). On the command
	// line: -n and -A.
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
	// Settings are the operator's settings; nil: settings.Default(). The
	// operator writes the peering options into them at start (see
	// applyPeeringOptions), and the startup handlers may change them.
	Settings *settings.Settings
	// Logger receives the operator's logs; nil: slog.Default(). On the
	// command line, a Logger set in code replaces the one that
	// --log-format, -v, -d and -q describe.
	Logger *slog.Logger
	// RescanInterval is how often unresolved resources are looked up again.
	// While discovery fails, it is retried sooner: after 1, 2, 4...
	// seconds up to RescanInterval. Default 10 s.
	RescanInterval time.Duration
	// Ready, if set, is called once when the operator is ready: every
	// resource of the registry is resolved and watched, and the objects of
	// each watch's first listing have been handed to the workers (not
	// necessarily processed yet). It is called in a goroutine of its own; a
	// panic in it is logged. It is never called if the operator stops
	// first, nor while a resource cannot be resolved (e.g. its CRD is
	// missing) or a watch cannot list (e.g. RBAC forbids it). This is
	// later than Kopf's ready_flag, which is raised once the startup
	// activities are done, before the watching starts.
	Ready func()
	// Observe, if set, is told how every attempt of a handler ended, per
	// object (see reactor.Observation and Reactor.Observe): the hook of
	// package kopftest's outcome assertions; no facade option sets it.
	Observe func(reactor.Observation)
	// MetricsAddress, if set (host:port, ":8080"; "0" is unset too),
	// is where the operator serves its Prometheus metrics, at /metrics,
	// over HTTPS unless MetricsPlain (see package metrics;
	// --metrics-bind-address). The address must be free: Run fails at
	// start if it cannot listen on it.
	MetricsAddress string
	// MetricsPlain serves the metrics over plain HTTP to anyone who can
	// reach the address (--metrics-secure=false): for a local run, or a
	// network where that is acceptable. By default (false), they are
	// served over HTTPS to the clients that the API server authenticates
	// (a bearer token: TokenReview) and authorizes (get on the
	// non-resource URL /metrics: SubjectAccessReview), as kubebuilder's
	// scaffold serves them (see metrics.Guard and docs/security.md).
	MetricsPlain bool
	// MetricsCertPath, if set, is a directory with the HTTPS certificate
	// and key of the metrics, the files MetricsCertName and MetricsCertKey
	// in it ("": tls.crt and tls.key), read again when they change
	// (kubebuilder's --metrics-cert-path, --metrics-cert-name,
	// --metrics-cert-key); unset: a self-signed certificate made at start,
	// in memory.
	MetricsCertPath string
	MetricsCertName string
	MetricsCertKey  string
	// OnMetrics, if set, is called once at start with the registry of the
	// operator's metrics and the handler of their page (unguarded): to
	// register collectors of one's own on it (the page then has their
	// series too), or to serve the page oneself, e.g. on a server of one's
	// own, with MetricsAddress unset. With OnMetrics, the metrics are kept
	// even if MetricsAddress is unset.
	OnMetrics func(registry *prometheus.Registry, page http.Handler)
	// Memo is the operator's memo (Kopf's memo= of kopf.run() and
	// kopf.operator()): the activities get it itself, and each object's
	// handlers a shallow copy of it as the startup handlers left it, made
	// when the operator first sees the object (see reactor.Reactor.Memo
	// and objectsMemo). Nil: an empty memo.
	Memo kwargs.Memo
	// Prober, if set, is called once the startup handlers have succeeded,
	// before anything is watched, with the function that runs the probe
	// handlers (Kopf's on.probe): what a health endpoint serves (package
	// kopftest's Probe). The function may be called from any goroutine
	// until the operator stops.
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
	// operator that run with it (see Sharding and docs/sharding.md; the
	// command line's --shards sets its number of buckets).
	Sharding *Sharding
	// Clusters, if set, makes the operator a fleet operator (see package
	// clusters and docs/multicluster.md): every cluster that the provider
	// engages is served as Config alone would be, while Config (or Login)
	// stays the home cluster's. Nil: the one cluster of Config.
	//
	// In a fleet operator, the activities run once (startup and cleanup
	// around the serving of every cluster), the metrics and health
	// endpoints are the process's (each cluster's series labelled
	// cluster=<name>, its state listed under "clusters"), Ready is
	// called once the process-wide parts have started (the clusters'
	// readiness is theirs, in the endpoints), the handlers' kwargs carry
	// the cluster's name (Cluster), and admission webhooks are not
	// served.
	Clusters clusters.Provider
}

// withDefaults returns the options with the defaults of the fields left
// unset.
func (o Options) withDefaults() Options {
	if o.Settings == nil {
		o.Settings = settings.Default()
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Memo == nil {
		o.Memo = kwargs.Memo{}
	}
	if o.RescanInterval <= 0 {
		o.RescanInterval = 10 * time.Second
	}
	if o.Config == nil && o.Login == nil {
		o.Login = func(context.Context) (*rest.Config, error) { return activities.LoadConfig("") }
	}
	return o
}

// LoginFunc loads the operator's credentials again from their source (a
// kubeconfig file, a service account's token file), as Kopf's login
// handlers do. See Options.Login.
type LoginFunc func(ctx context.Context) (*rest.Config, error)

// UserAgent is the User-Agent of the operator's requests unless the
// rest.Config sets one: "kopf-go/<Version> (<binary name>)", so that the
// API server's audit log shows which operator wrote (Kopf's say
// "kopf/<version>").
func UserAgent() string {
	return fmt.Sprintf("kopf-go/%s (%s)", Version(), filepath.Base(os.Args[0]))
}
