package kopf

import (
	"context"
	"io"
	"log/slog"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/rest"

	"github.com/kopf-go/kopf/runtime/cli"
	"github.com/kopf-go/kopf/runtime/logging"
	"github.com/kopf-go/kopf/runtime/operator"
	"github.com/kopf-go/kopf/runtime/settings"
)

// Running an operator: from its command line (Main) or embedded into
// another program (Run), with options set in code.

// Option sets how an operator runs, for Main and Run: Kopf's keyword
// arguments of kopf.run() and kopf.operator() (settings=, namespaces=,
// clusterwide=, standalone=, ready_flag=), the Go way. Options apply in
// order; for each, the last one given wins, except WithSettings, whose
// functions all apply, in order.
type Option func(*operator.Options)

// WithSettings changes the operator's settings: fn gets Kopf's defaults
// (as changed by any earlier WithSettings) and changes what it needs, as a
// Kopf operator does to the settings object in its startup handler:
//
//	kopf.WithSettings(func(s *kopf.Settings) {
//		s.Posting.Enabled = false
//		s.Queueing.WorkerLimit = 16
//	})
//
// The operator reads the settings while it runs: change them in fn only,
// not afterwards. docs/settings.md lists every setting.
func WithSettings(fn func(s *Settings)) Option {
	return func(o *operator.Options) {
		if o.Settings == nil {
			o.Settings = settings.Default()
		}
		fn(o.Settings)
	}
}

// WithNamespaces serves the namespaces that match the patterns: names,
// globs ("dev-*"), negations ("!kube-*"), comma-separated lists (Kopf's
// namespaces=). Under Main, they are the default when neither -n nor -A is
// given.
func WithNamespaces(patterns ...string) Option {
	return func(o *operator.Options) {
		o.Namespaces, o.AllNamespaces = append([]string(nil), patterns...), false
	}
}

// WithAllNamespaces serves the whole cluster: every namespace and the
// cluster-scoped resources (Kopf's clusterwide=True). Under Main, it is the
// default when neither -n nor -A is given. Without it or WithNamespaces,
// the operator serves the whole cluster too, with a warning, as Kopf does.
func WithAllNamespaces() Option {
	return func(o *operator.Options) { o.Namespaces, o.AllNamespaces = nil, true }
}

// WithStandalone runs the operator without peering (Kopf's
// standalone=True; --standalone on the command line; docs/peering.md).
func WithStandalone() Option {
	return func(o *operator.Options) { o.Standalone = true }
}

// WithPriority sets the operator's priority among the operators that
// serve the same objects (Kopf's priority=; -p/--priority and --dev on the
// command line, which take precedence): it pauses while a peer of a
// higher priority runs (docs/peering.md).
func WithPriority(priority int) Option {
	return func(o *operator.Options) { o.Priority = priority }
}

// WithPeering names the peering object of the operators that serve the
// same objects (Kopf's peering_name=; -P/--peering on the command line,
// which takes precedence), and makes the peering mandatory: the operator
// stays paused while the object is missing (docs/peering.md).
func WithPeering(name string) Option {
	return func(o *operator.Options) { o.PeeringName = name }
}

// WithName names the operator in its command line's help and --version
// (Main only); the default is the binary's name.
func WithName(name string) Option {
	return func(o *operator.Options) { o.Name = name }
}

// WithConfig connects to the cluster with cfg, used as it is. Without it,
// the credentials are found as kubectl finds them ($KUBECONFIG,
// ~/.kube/config, then the in-cluster service account) and loaded again
// when the API server refuses them (401). Under Main, --kubeconfig takes
// precedence. With login handlers (//kopf:on.login), they produce the
// credentials instead, and cfg is what LoginViaClient returns in them
// (docs/activities.md).
func WithConfig(cfg *rest.Config) Option {
	return func(o *operator.Options) { o.Config = cfg }
}

// WithLogger sends the operator's logs to logger (NewLogger makes one in
// Kopf's formats). Under Run, the default is slog.Default(). Under Main,
// the logger replaces the one that --log-format, -v, -d and -q describe:
// those flags then have no effect.
func WithLogger(logger *slog.Logger) Option {
	return func(o *operator.Options) { o.Logger = logger }
}

// WithReady calls fn once, when the operator is ready: every resource of
// its handlers is resolved and watched, and the objects of each first
// listing have been handed to the workers (not necessarily processed yet).
// fn runs in a goroutine of its own; a panic in it is logged. It is never
// called if the operator stops first, nor while a resource of a handler
// cannot be found (its CRD is missing) or listed (RBAC forbids it).
//
// This is Kopf's ready_flag, raised later: Kopf raises it once the startup
// handlers are done, before the watching starts.
func WithReady(fn func()) Option {
	return func(o *operator.Options) { o.Ready = fn }
}

// WithMemo gives the operator a memo (Kopf's memo= of kopf.run() and
// kopf.operator()): the activities (startup, cleanup, login, probe
// handlers) get m itself as their Memo, and the handlers of each object a
// shallow copy of it as the startup handlers left it, made when the
// operator first sees the object: keys set in the copy are the object's
// own, while the values stored in m (a shared client, a cache, a counter
// behind a mutex) are shared by all.
// Without it, the memo starts empty. Values shared through it must be
// safe for concurrent use: the objects' workers run in parallel.
func WithMemo(m Memo) Option {
	return func(o *operator.Options) { o.Memo = m }
}

// WithLiveness serves the operator's liveness at url, e.g.
// "http://0.0.0.0:8080/healthz" (Kopf's liveness_endpoint=; -L/--liveness
// on the command line, which takes precedence). A GET answers 200 and the
// probes' results in JSON, or 500 and the problems when a watch has been
// down or the API server unreachable for longer than
// Settings.Watching.InactivityTimeout; see docs/health.md.
func WithLiveness(url string) Option {
	return func(o *operator.Options) { o.LivenessEndpoint = url }
}

// WithReadiness serves the operator's readiness at url, e.g.
// "http://0.0.0.0:8080/readyz" (--readiness on the command line, which
// takes precedence): 200 once the operator is ready (as for WithReady)
// and while it is live, else 503 and why; see docs/health.md.
func WithReadiness(url string) Option {
	return func(o *operator.Options) { o.ReadinessEndpoint = url }
}

// WithMetrics serves the operator's Prometheus metrics at /metrics on
// addr (host:port, e.g. ":8443"; "" or "0": off, the default). Under Main,
// --metrics-bind-address takes precedence. The operator does not start if
// it cannot listen on addr (e.g. the port is in use). They are served
// over HTTPS, with a self-signed certificate (or WithMetricsCert's), to
// the clients that the API server authenticates and authorizes: a bearer
// token that a TokenReview accepts, of a user that a SubjectAccessReview
// allows to get the non-resource URL /metrics; others get 401 or 403
// (unless WithPlainMetrics). See docs/metrics.md for the series and
// docs/security.md for the protection.
func WithMetrics(addr string) Option {
	return func(o *operator.Options) { o.MetricsAddress = addr }
}

// WithPlainMetrics serves the metrics (WithMetrics) over plain HTTP to
// anyone who can reach their address, as --metrics-secure=false does: for
// a local run, or a network where that is acceptable.
func WithPlainMetrics() Option {
	return func(o *operator.Options) { o.MetricsPlain = true }
}

// WithMetricsCert serves the metrics (WithMetrics) over HTTPS with the
// certificate and key in dir (tls.crt and tls.key), read again when they
// change, instead of a self-signed certificate: --metrics-cert-path.
func WithMetricsCert(dir string) Option {
	return func(o *operator.Options) { o.MetricsCertPath = dir }
}

// WithMetricsHandler calls fn once at start with the registry of the
// operator's metrics and the handler of their page (unguarded): to add
// collectors of one's own to the registry (the page then has their series
// too), or to serve the page oneself, on a server and behind a protection
// of one's own (with WithMetrics unset). The metrics are kept with it even
// without WithMetrics.
func WithMetricsHandler(fn func(registry *prometheus.Registry, page http.Handler)) Option {
	return func(o *operator.Options) { o.OnMetrics = fn }
}

// Main runs an operator's command line (`run`, `version`) with the handlers
// that register adds, and returns the process exit code:
//
//	func main() { os.Exit(kopf.Main(Register)) }
//
// With options, set in code what the command line does not say, e.g. the
// settings:
//
//	func main() {
//		os.Exit(kopf.Main(Register, kopf.WithSettings(func(s *kopf.Settings) {
//			s.Posting.Enabled = false
//		})))
//	}
//
// The command line's flags take precedence over the options where both say
// something (see each option). Main stops the operator on SIGINT or
// SIGTERM and returns 0; it returns 1 if the operator cannot start, or if
// a second signal cuts the stop short.
func Main(register func(*Registry) error, opts ...Option) int {
	return cli.MainWith(register, collect(opts))
}

// Run runs the operator with the handlers that register adds inside
// another program, until ctx is done, as Kopf's kopf.operator() does; see
// docs/embedding.md and the example.
//
// Cancelling ctx is the operator's stop (Kopf's stop_flag): the watches
// end, the handlers in progress get settings.Queueing.ExitTimeout to
// finish and are then cancelled, and Run returns. It returns nil on such a
// stop, and an error only if the operator cannot start: the handlers do
// not register, no credentials are found, a namespace pattern is invalid.
// While the API server cannot be reached, Run keeps trying and logs why.
//
// Unlike Main, Run changes nothing process-wide: it handles no signals,
// and client-go's own log lines that are not about the operator's watches
// go wherever the program sends klog's (see RouteKlog). Several operators
// may run in one process, each with its own registry and settings.
func Run(ctx context.Context, register func(*Registry) error, opts ...Option) error {
	return cli.Run(ctx, register, collect(opts))
}

func collect(opts []Option) operator.Options {
	var o operator.Options
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	return o
}

// Logging in Kopf's formats, for WithLogger.

// LogFormat is one of Kopf's log formats (--log-format).
type LogFormat = logging.Format

// The log formats: Kopf's "full" ([time] logger [LEVEL] message), "plain"
// (the message only) and "json" (one object a line).
const (
	LogFull  = logging.Full
	LogPlain = logging.Plain
	LogJSON  = logging.JSON
)

// NewLogger returns a logger that writes to w in one of Kopf's formats,
// from level up (slog.LevelDebug is Kopf's --verbose), as the command line
// makes it. It is safe for concurrent use.
func NewLogger(w io.Writer, format LogFormat, level slog.Level) *slog.Logger {
	return logging.New(w, format, level)
}

// LogOptions say how a logger of NewLoggerWith writes: the format, the
// level, and Kopf's --log-prefix and --log-refkey (Kopf's
// kopf.configure()).
type LogOptions = logging.Options

// NewLoggerWith returns a logger that writes to w as opts say, as the
// command line makes it from its flags. It is safe for concurrent use.
func NewLoggerWith(w io.Writer, opts LogOptions) *slog.Logger {
	return logging.NewWith(w, opts)
}

// RouteKlog sends klog's output (client-go's own log lines) to logger, in
// its format. klog is process-wide: Main does this; a program that embeds
// an operator with Run decides for itself.
func RouteKlog(logger *slog.Logger) { logging.RouteKlog(logger) }
