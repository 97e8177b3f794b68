package cli

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/pflag"
	"k8s.io/klog/v2"

	"github.com/kopf-go/kopf/runtime/logging"
	"github.com/kopf-go/kopf/runtime/operator"
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

// runFlags are the values of the run command's flags.
type runFlags struct {
	namespaces    []string
	allNamespaces bool
	standalone    bool
	dev           bool
	priority      int
	peering       string
	verbose       bool
	debug         bool
	quiet         bool
	logFormat     string
	logRefKey     string
	logPrefix     *bool // nil: the format's default
	kubeconfig    string
	liveness      string
	readiness     string
	// metricsAddress is --metrics-bind-address.
	metricsAddress string
	// shards is --shards: the number of buckets (0: no sharding).
	shards int
}

// addRunFlags registers the run command's flags: `kopf run`'s, with its
// names, shorthands and defaults, one a line.
func addRunFlags(fl *pflag.FlagSet, f *runFlags) {
	fl.StringSliceVarP(&f.namespaces, "namespace", "n", nil, "serve only this namespace: a name, a glob (\"dev-*\") or a negation (\"!kube-*\"); repeatable, comma-separated")
	fl.BoolVarP(&f.allNamespaces, "all-namespaces", "A", false, "serve all namespaces and the cluster-scoped resources")
	fl.BoolVar(&f.standalone, "standalone", false, "do not coordinate with other operators (peering)")
	fl.BoolVar(&f.dev, "dev", false, "run with the priority 666 (--priority 666), for development next to a deployed operator")
	fl.IntVarP(&f.priority, "priority", "p", 0, "the operator's priority among its peers")
	fl.StringVarP(&f.peering, "peering", "P", "", "the peering object's name; makes the peering mandatory (default: \"default\", if it exists)")
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
	fl.StringVarP(&f.liveness, "liveness", "L", "", "serve the liveness probe at this URL, e.g. http://0.0.0.0:8080/healthz")
	fl.StringVar(&f.metricsAddress, "metrics-bind-address", "", `serve Prometheus metrics at /metrics on this address, e.g. ":8080" ("" or "0": off)`)
	fl.StringVar(&f.readiness, "readiness", "", "serve the readiness probe at this URL, e.g. http://0.0.0.0:8080/readyz")
	fl.IntVar(&f.shards, "shards", 0, "split the objects among the replicas that run with the same --shards, in this many buckets (alone: 64; docs/sharding.md)")
	fl.Lookup("shards").NoOptDefVal = "64"
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
	case "stringSlice":
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

// operatorOptions applies the environment to the flags that the command
// line does not give (see runEnv), checks them, and returns the operator's
// options that they and opts say, all but Login: the flags take precedence
// over opts, and opts.Logger over the logging flags.
func (f *runFlags) operatorOptions(fl *pflag.FlagSet, opts Options, logOut io.Writer) (operator.Options, error) {
	if err := applyEnv(fl, runEnv(), os.LookupEnv); err != nil {
		return operator.Options{}, err
	}
	if ns, ok := legacyNamespace(); ok {
		f.namespaces = append(f.namespaces, ns)
	}
	if len(f.namespaces) > 0 && f.allNamespaces {
		return operator.Options{}, errors.New("either --namespace or --all-namespaces can be used, not both")
	}
	logger := opts.Logger
	if logger == nil {
		var err error
		if logger, err = f.newLogger(logOut); err != nil {
			return operator.Options{}, err
		}
	} else if _, err := f.loggerOptions(); err != nil {
		return operator.Options{}, err // a bad --log-format is an error still
	}
	namespaces, all := f.namespaces, f.allNamespaces
	if len(namespaces) == 0 && !all {
		namespaces, all = opts.Namespaces, opts.AllNamespaces
	}
	priority, given := f.priorityGiven(fl)
	if !given {
		priority = opts.Priority
	}
	peering := f.peering
	if peering == "" {
		peering = opts.PeeringName
	}
	return operator.Options{
		Namespaces:     namespaces,
		AllNamespaces:  all,
		Standalone:     f.standalone || opts.Standalone,
		Priority:       priority,
		PeeringName:    peering,
		Settings:       opts.Settings,
		Logger:         logger,
		Ready:          opts.Ready,
		Observe:        opts.Observe,
		RescanInterval: opts.RescanInterval,
		Memo:           opts.Memo,
		Prober:         opts.Prober,

		LivenessEndpoint:  cmp.Or(f.liveness, opts.LivenessEndpoint),
		ReadinessEndpoint: cmp.Or(f.readiness, opts.ReadinessEndpoint),
		MetricsAddress:    opts.MetricsAddress, // --metrics-bind-address: in the run command, even if ""
		Sharding:          f.sharding(opts.Sharding),
	}, nil
}

// sharding is the sharding that --shards and the code's options say:
// --shards sets the number of buckets (and turns sharding on).
func (f *runFlags) sharding(code *operator.Sharding) *operator.Sharding {
	if f.shards <= 0 {
		return code
	}
	s := operator.Sharding{}
	if code != nil {
		s = *code
	}
	s.Buckets = f.shards
	return &s
}

// priorityGiven is the priority that the flags say, if they say one: --dev's
// 666, else --priority's (or $KOPF_RUN_PRIORITY's).
func (f *runFlags) priorityGiven(fl *pflag.FlagSet) (int, bool) {
	if f.dev {
		return devPriority, true
	}
	return f.priority, fl.Changed("priority")
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

// newLogger makes the command line's logger.
func (f *runFlags) newLogger(w io.Writer) (*slog.Logger, error) {
	opts, err := f.loggerOptions()
	if err != nil {
		return nil, err
	}
	return logging.NewWith(w, opts), nil
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
