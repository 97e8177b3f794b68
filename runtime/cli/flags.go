package cli

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	"github.com/kopf-go/kopf/runtime/logging"
	"github.com/kopf-go/kopf/runtime/operator"
	"github.com/kopf-go/kopf/runtime/sharding"
)

// devPriority is the priority of --dev, as Kopf's.
const devPriority = 666

// debugKlogVerbosity and debugLevel are klog's verbosity and the log's
// level under --debug: client-go's own debug lines, up to each request's
// method, URL, status and duration (klog's V(6), which client-go's
// contextual logging sends at slog's level -6), not the request's headers
// and bodies (V(7) and up).
const (
	debugKlogVerbosity = "6"
	debugLevel         = slog.LevelDebug - 2
)

// runFlags are the run command's flags: most are bound to the operator's
// options (opts), with the values set in code as their defaults; the rest
// say how to log, which kubeconfig to load, and --dev.
type runFlags struct {
	opts       Options
	dev        bool
	verbose    bool
	debug      bool
	quiet      bool
	logFormat  string
	logRefKey  string
	logPrefix  *bool // nil: the format's default
	kubeconfig string
	settings   []string // --setting group.name=value, in order
	shardMode  string   // --shard-mode; "": the code's, else filter
	clusters   clusterFlags
}

// addRunFlags registers the run command's flags: `kopf run`'s, with its
// names, shorthands and defaults, one a line.
func addRunFlags(fl *pflag.FlagSet, f *runFlags) {
	o := &f.opts
	fl.StringSliceVarP(&o.Namespaces, "namespace", "n", o.Namespaces, "serve only this namespace: a name, a glob (\"dev-*\") or a negation (\"!kube-*\"); repeatable, comma-separated")
	fl.BoolVarP(&o.AllNamespaces, "all-namespaces", "A", o.AllNamespaces, "serve all namespaces and the cluster-scoped resources")
	fl.BoolVar(&o.Standalone, "standalone", o.Standalone, "do not coordinate with other operators (peering)")
	fl.BoolVar(&f.dev, "dev", false, "run with the priority 666 (--priority 666), for development next to a deployed operator")
	fl.IntVarP(&o.Priority, "priority", "p", o.Priority, "the operator's priority among its peers")
	fl.StringVarP(&o.PeeringName, "peering", "P", o.PeeringName, "the peering object's name; makes the peering mandatory (default: \"default\", if it exists)")
	fl.BoolVarP(&f.verbose, "verbose", "v", false, "log the operator's debug messages")
	fl.BoolVarP(&f.debug, "debug", "d", false, "log the debug messages, client-go's own too (klog -v=6)")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "log only warnings and errors")
	fl.StringVar(&f.logFormat, "log-format", string(logging.Full), "log format: full, plain or json")
	fl.StringVar(&f.logRefKey, "log-refkey", "", "the JSON field of the object a record is about (default \""+logging.DefaultRefKey+"\")")
	fl.Var(&prefixFlag{p: &f.logPrefix, value: true}, "log-prefix", "start the messages about an object with \"[namespace/name] \" (default: in the full and plain formats)")
	fl.Lookup("log-prefix").NoOptDefVal = "true"
	fl.Var(&prefixFlag{p: &f.logPrefix, value: false}, "no-log-prefix", "do not prefix the messages about an object (default: in the json format)")
	fl.Lookup("no-log-prefix").NoOptDefVal = "true"
	fl.StringVar(&f.kubeconfig, "kubeconfig", "", "path to a kubeconfig (default: $KUBECONFIG, ~/.kube/config, in-cluster)")
	fl.StringVarP(&o.LivenessEndpoint, "liveness", "L", o.LivenessEndpoint, "serve the liveness probe at this URL, e.g. http://0.0.0.0:8080/healthz")
	fl.StringVar(&o.MetricsAddress, "metrics-bind-address", o.MetricsAddress, `serve Prometheus metrics at /metrics on this address, e.g. ":8080" ("" or "0": off)`)
	fl.Var(&secureFlag{p: &o.MetricsPlain}, "metrics-secure", "serve the metrics over HTTPS to the clients that the API server authenticates and authorizes (get /metrics); false: plain HTTP, to anyone (docs/security.md)")
	fl.Lookup("metrics-secure").NoOptDefVal = "true"
	fl.StringVar(&o.MetricsCertPath, "metrics-cert-path", o.MetricsCertPath, "the directory of the metrics' HTTPS certificate and key (default: a self-signed certificate made at start)")
	fl.StringVar(&o.MetricsCertName, "metrics-cert-name", cmp.Or(o.MetricsCertName, "tls.crt"), "the certificate's file in --metrics-cert-path")
	fl.StringVar(&o.MetricsCertKey, "metrics-cert-key", cmp.Or(o.MetricsCertKey, "tls.key"), "the key's file in --metrics-cert-path")
	fl.StringVar(&o.ReadinessEndpoint, "readiness", o.ReadinessEndpoint, "serve the readiness probe at this URL, e.g. http://0.0.0.0:8080/readyz")
	fl.Var(&shardsFlag{p: &o.Sharding}, "shards", "split the objects among the replicas that run with the same --shards, in this many buckets (alone: 64; docs/sharding.md)")
	fl.Lookup("shards").NoOptDefVal = "64"
	fl.StringVar(&f.shardMode, "shard-mode", "", "how each sharded replica receives its buckets' objects: filter (every object watched, filtered here), label (a bucket label, one watch over the buckets held) or server (KEP-5866's shardSelector, a watch per bucket); default: filter (docs/sharding.md)")
	addClusterFlags(fl, &f.clusters)
	fl.StringArrayVar(&f.settings, "setting", nil, "set one of the operator's settings, in Kopf's names: group.name=value, e.g. execution.default_backoff=1.5 (seconds); repeatable; over the settings set in code, under those of on.startup handlers")
}

// runEnv lists the environment variables that `kopf run` reads, by flag:
// click's KOPF_RUN_<PARAMETER> (the prefix "KOPF", the command, the name of
// the option's Python parameter) and KOPF_RUN_PEERING. A variable applies
// when its flag is not given; an empty one is ignored. Several variables
// for one flag: the first one set applies. A slice flag's variable holds
// whitespace-separated values; a boolean flag's, one of Python click's
// booleans (1/0, true/false, t/f, yes/no, y/n, on/off, in any case).
func runEnv() []envVar {
	return []envVar{
		{"namespace", []string{"KOPF_RUN_NAMESPACES"}},
		{"all-namespaces", []string{"KOPF_RUN_CLUSTERWIDE"}},
		{"standalone", []string{"KOPF_RUN_STANDALONE"}},
		{"dev", []string{"KOPF_RUN_DEV"}},
		{"priority", []string{"KOPF_RUN_PRIORITY"}},
		{"peering", []string{"KOPF_RUN_PEERING", "KOPF_RUN_PEERING_NAME"}},
		{"verbose", []string{"KOPF_RUN_VERBOSE"}},
		{"debug", []string{"KOPF_RUN_DEBUG"}},
		{"quiet", []string{"KOPF_RUN_QUIET"}},
		{"log-format", []string{"KOPF_RUN_LOG_FORMAT"}},
		{"log-refkey", []string{"KOPF_RUN_LOG_REFKEY"}},
		{"log-prefix", []string{"KOPF_RUN_LOG_PREFIX"}},
		{"liveness", []string{"KOPF_RUN_LIVENESS_ENDPOINT"}},
		{"shards", []string{"KOPF_RUN_SHARDS"}},
		{"shard-mode", []string{"KOPF_RUN_SHARD_MODE"}}, // kopf-go's, as --shards
		{"setting", []string{"KOPF_RUN_SETTINGS"}},      // kopf-go's: Kopf's runner takes settings in code only
		// kopf-go's: a fleet operator's clusters.
		{"clusters-dir", []string{"KOPF_RUN_CLUSTERS_DIR"}},
		{"clusters-secrets", []string{"KOPF_RUN_CLUSTERS_SECRETS"}},
		{"clusters-shared", []string{"KOPF_RUN_CLUSTERS_SHARED"}},
	}
}

// legacyNamespaceEnv is Kopf's legacy variable of the single-namespace
// mode: its namespace is added to those of -n or KOPF_RUN_NAMESPACES.
const legacyNamespaceEnv = "KOPF_RUN_NAMESPACE"

type envVar struct {
	flag  string
	names []string
}

// applyEnv sets the flags that the command line does not give from their
// environment variables (see runEnv).
func applyEnv(fl *pflag.FlagSet, vars []envVar, lookup func(string) (string, bool)) error {
	for _, v := range vars {
		f := fl.Lookup(v.flag)
		if f == nil || f.Changed {
			continue
		}
		for _, name := range v.names {
			value, _ := lookup(name)
			if value == "" {
				continue
			}
			if err := setFromEnv(fl, f, value); err != nil {
				return fmt.Errorf("invalid value %q of $%s: %w", value, name, err)
			}
			break
		}
	}
	return nil
}

func setFromEnv(fl *pflag.FlagSet, f *pflag.Flag, value string) error {
	switch f.Value.Type() {
	case "bool":
		b, err := parseClickBool(value)
		if err != nil {
			return err
		}
		return fl.Set(f.Name, strconv.FormatBool(b))
	case "stringSlice", "stringArray":
		for _, item := range strings.Fields(value) {
			if err := fl.Set(f.Name, item); err != nil {
				return err
			}
		}
		return nil
	}
	return fl.Set(f.Name, value)
}

// parseClickBool parses a boolean as Python's click does.
func parseClickBool(s string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "1", "true", "t", "yes", "y", "on":
		return true, nil
	case "0", "false", "f", "no", "n", "off":
		return false, nil
	}
	return false, errors.New("not a boolean: expected 1/0, true/false, yes/no or on/off")
}

// prefixFlag is one of --log-prefix and --no-log-prefix: both set the same
// tri-state, the last one given wins, as with click's --x/--no-x pairs.
type prefixFlag struct {
	p     **bool
	value bool // what the flag means when true: --log-prefix true, --no-log-prefix false
}

func (f *prefixFlag) Set(s string) error {
	b, err := strconv.ParseBool(s)
	if err != nil {
		return err
	}
	v := b == f.value
	*f.p = &v
	return nil
}

func (f *prefixFlag) String() string {
	if f.p == nil || *f.p == nil {
		return ""
	}
	return strconv.FormatBool(**f.p == f.value)
}

func (f *prefixFlag) Type() string { return "bool" }

// secureFlag is --metrics-secure: true (its default) unless the options
// say MetricsPlain.
type secureFlag struct{ p *bool }

func (f *secureFlag) Set(s string) error {
	b, err := strconv.ParseBool(s)
	if err != nil {
		return err
	}
	*f.p = !b
	return nil
}

func (f *secureFlag) String() string {
	if f.p == nil {
		return "true"
	}
	return strconv.FormatBool(!*f.p)
}

func (f *secureFlag) Type() string { return "bool" }

// complete applies the environment to the flags that the command line
// does not give (see runEnv), checks them, and completes the options
// that they are bound to with what the other flags say: -n and -A replace
// each other's values set in code, --dev is the priority 666, the logging
// flags make the Logger (unless code set one), --kubeconfig loads the
// credentials (on a 401 too: a kubeconfig's token may have been renewed).
func (f *runFlags) complete(fl *pflag.FlagSet, logOut io.Writer) error {
	if err := applyEnv(fl, runEnv(), os.LookupEnv); err != nil {
		return err
	}
	if ns, ok := legacyNamespace(); ok {
		_ = fl.Set("namespace", ns) // added to -n's, or replacing the code's
	}
	o := &f.opts
	nsGiven, allGiven := fl.Changed("namespace") && len(o.Namespaces) > 0, fl.Changed("all-namespaces") && o.AllNamespaces
	switch {
	case nsGiven && allGiven:
		return errors.New("either --namespace or --all-namespaces can be used, not both")
	case nsGiven:
		o.AllNamespaces = false
	case allGiven:
		o.Namespaces = nil
	}
	if f.dev {
		o.Priority = devPriority
	}
	// A flag given empty (-P, -L, --readiness) says nothing: the value set
	// in code (the flag's default) stays; so does the code's standalone
	// under --standalone=false.
	o.PeeringName = cmp.Or(o.PeeringName, fl.Lookup("peering").DefValue)
	o.LivenessEndpoint = cmp.Or(o.LivenessEndpoint, fl.Lookup("liveness").DefValue)
	o.ReadinessEndpoint = cmp.Or(o.ReadinessEndpoint, fl.Lookup("readiness").DefValue)
	o.Standalone = o.Standalone || fl.Lookup("standalone").DefValue == "true"
	if err := f.applyShardMode(); err != nil {
		return err
	}
	s, err := setSettings(o.Settings, f.settings)
	if err != nil {
		return err
	}
	o.Settings = s
	lo, err := f.loggerOptions() // a bad --log-format is an error even with a Logger
	if err != nil {
		return err
	}
	if o.Logger == nil {
		o.Logger = logging.NewWith(logOut, lo)
	}
	if o.Config == nil || f.kubeconfig != "" {
		kubeconfig := f.kubeconfig
		o.Config = nil // loaded by the operator at start, unless login handlers do
		o.Login = func(context.Context) (*rest.Config, error) { return LoadConfig(kubeconfig) }
	}
	return f.clusters.complete(o)
}

// shardsFlag is --shards: the number of buckets, which turns sharding on
// (over a copy of the Sharding set in code, if any).
type shardsFlag struct{ p **operator.Sharding }

func (f *shardsFlag) Set(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil {
		return err
	}
	if n <= 0 {
		return nil
	}
	sh := operator.Sharding{}
	if *f.p != nil {
		sh = **f.p
	}
	sh.Buckets = n
	*f.p = &sh
	return nil
}

func (f *shardsFlag) String() string {
	if f.p == nil || *f.p == nil {
		return "0"
	}
	return strconv.Itoa((*f.p).Buckets)
}

func (f *shardsFlag) Type() string { return "int" }

// applyShardMode sets --shard-mode onto the sharding (over a copy of the
// Sharding set in code); without sharding (no --shards, none in code), it
// says nothing.
func (f *runFlags) applyShardMode() error {
	if f.shardMode == "" {
		return nil
	}
	mode, err := sharding.ParseMode(f.shardMode)
	if err != nil {
		return fmt.Errorf("--shard-mode: %w", err)
	}
	if f.opts.Sharding == nil {
		return nil
	}
	sh := *f.opts.Sharding
	sh.Mode = mode
	f.opts.Sharding = &sh
	return nil
}

// loggerOptions are the logging options that the flags say, as Kopf's
// configure(): -v or -d is DEBUG, else -q is WARNING, else INFO; -d also
// lets client-go's own debug lines through (see klogDebug).
func (f *runFlags) loggerOptions() (logging.Options, error) {
	format, err := logging.ParseFormat(f.logFormat)
	if err != nil {
		return logging.Options{}, err
	}
	level := slog.LevelInfo
	switch {
	case f.debug:
		level = debugLevel
	case f.verbose:
		level = slog.LevelDebug
	case f.quiet:
		level = slog.LevelWarn
	}
	return logging.Options{Format: format, Level: level, Prefix: f.logPrefix, RefKey: f.logRefKey}, nil
}

// klogDebug raises klog's verbosity (process-wide) so that client-go logs
// its requests: the equivalent of Kopf's --debug, which lets the low-level
// libraries' debug messages through.
func klogDebug() error {
	var fs flag.FlagSet
	klog.InitFlags(&fs)
	return fs.Set("v", debugKlogVerbosity)
}

// legacyNamespace returns $KOPF_RUN_NAMESPACE's namespace, if set.
func legacyNamespace() (string, bool) {
	ns := os.Getenv(legacyNamespaceEnv)
	return ns, ns != ""
}
