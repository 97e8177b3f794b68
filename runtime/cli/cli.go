// Package cli is the operator binary's command line, modelled on `kopf run`:
//
//	operator run [-n NAMESPACE]... | -A  [--standalone] [-v|-d|-q] [--log-format full|plain|json]
//
// Credentials are found the way every Kubernetes tool finds them: the
// --kubeconfig flag, $KUBECONFIG, ~/.kube/config, then the in-cluster
// service account.
//
// A program sets in code what the command line cannot (the settings, a
// readiness callback) with Options, through MainWith; Run runs the same
// operator without a command line, for embedding it into another program.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kopf-go/kopf/runtime/logging"
	"github.com/kopf-go/kopf/runtime/operator"
	"github.com/kopf-go/kopf/runtime/reactor"
	"github.com/kopf-go/kopf/runtime/registry"
	"github.com/kopf-go/kopf/runtime/settings"
)

// RegisterFunc fills a registry: the generated Register of an operator.
type RegisterFunc func(*registry.Registry) error

// Options are what a program sets in code for its operator: kopf.Main's
// and kopf.Run's options end up here. The zero Options are the defaults.
// Under the command line (MainWith), its flags take precedence where both
// say something, as each field says.
type Options struct {
	// Settings are the operator's settings; nil: settings.Default().
	Settings *settings.Settings
	// Namespaces and AllNamespaces say what to serve (see
	// operator.Options). Under the command line they are the defaults
	// used when neither -n nor -A is given.
	Namespaces    []string
	AllNamespaces bool
	// Standalone disables peering (--standalone, which also sets it).
	Standalone bool
	// Config is the cluster's client configuration. Nil: the credentials
	// are found as the command line finds them (LoadConfig), and loaded
	// again on a 401 Unauthorized. Set: cfg is used as it is, with no
	// re-login. Under the command line, --kubeconfig takes precedence.
	Config *rest.Config
	// Logger receives the operator's logs. Nil: under the command line,
	// the logger that --log-format, -v, -d and -q describe; under Run,
	// slog.Default(). Under the command line, a set Logger makes those
	// flags ineffective.
	Logger *slog.Logger
	// Ready, if set, is called once the operator is ready (see
	// operator.Options.Ready).
	Ready func()
	// Observe and RescanInterval are operator.Options' (for package
	// kopftest: the handlers' outcomes, and CRDs created while a test's
	// operator runs found sooner); no facade option sets them.
	Observe        func(reactor.Observation)
	RescanInterval time.Duration
	// MetricsAddress is where the Prometheus metrics are served (see
	// operator.Options.MetricsAddress); "" or "0": nowhere. Under the
	// command line, --metrics-bind-address takes precedence.
	MetricsAddress string
}

// Run runs the operator with the handlers that register adds, without a
// command line and without touching any process-wide state (signals,
// klog), until ctx is done: cancelling ctx is the operator's stop (Kopf's
// stop_flag), after which Run returns once its workers are done or have
// been given up on (settings.Queueing.ExitTimeout). It returns nil on a
// clean stop and an error only if the operator cannot start (the handlers
// do not register, no credentials, a namespace pattern is invalid).
func Run(ctx context.Context, register RegisterFunc, opts Options) error {
	logger := opts.Logger
	if logger == nil {
		logger = slog.Default()
	}
	reg := registry.New()
	if register != nil {
		if err := register(reg); err != nil {
			return fmt.Errorf("registering the handlers: %w", err)
		}
	}
	cfg, login := opts.Config, operator.LoginFunc(nil)
	if cfg == nil {
		var err error
		if cfg, err = LoadConfig(""); err != nil {
			return err
		}
		login = func(context.Context) (*rest.Config, error) { return LoadConfig("") }
	}
	return operator.Run(ctx, cfg, reg, operator.Options{
		Namespaces:     opts.Namespaces,
		AllNamespaces:  opts.AllNamespaces,
		Standalone:     opts.Standalone,
		Settings:       opts.Settings,
		Logger:         logger,
		Login:          login,
		Ready:          opts.Ready,
		Observe:        opts.Observe,
		RescanInterval: opts.RescanInterval,
		MetricsAddress: opts.MetricsAddress,
	})
}

// Main runs the command line with os.Args and returns the exit code, for
// os.Exit:
//
//   - 0 when the operator stops on SIGINT or SIGTERM, even if some handlers
//     ignored the cancellation and were left running (they are logged; see
//     settings.Queueing.ExitTimeout);
//   - 1 when it cannot start, and when a second SIGINT or SIGTERM arrives
//     while it stops: Main then returns at once, without waiting for
//     anything, as Kubernetes' own binaries and controller-runtime do
//     ("second signal: exit directly" with code 1).
func Main(register RegisterFunc) int { return MainWith(register, Options{}) }

// MainWith is Main with options set in code; the command line's flags take
// precedence where both say something (see Options).
func MainWith(register RegisterFunc, opts Options) int {
	cmd := NewCommandWith(register, os.Stderr, opts)
	cmd.SetArgs(os.Args[1:])
	if err := cmd.Execute(); err != nil {
		return 1
	}
	return 0
}

// errForcedExit is returned by the run command when a second signal cuts
// the operator's stop short.
var errForcedExit = errors.New("the operator is stopped by a repeated signal")

// NewCommand returns the root command with its `run` subcommand. Logs go
// to logOut.
func NewCommand(register RegisterFunc, logOut io.Writer) *cobra.Command {
	return NewCommandWith(register, logOut, Options{})
}

// NewCommandWith is NewCommand with options set in code (see Options).
func NewCommandWith(register RegisterFunc, logOut io.Writer, opts Options) *cobra.Command {
	root := &cobra.Command{
		Use:           "operator",
		Short:         "A Kubernetes operator built with kopf-go.",
		SilenceUsage:  true,
		SilenceErrors: false,
	}
	root.AddCommand(newRunCommand(register, logOut, opts))
	root.AddCommand(&cobra.Command{
		Use:   "version",
		Short: "Print the kopf-go runtime version.",
		Run:   func(cmd *cobra.Command, _ []string) { fmt.Fprintln(cmd.OutOrStdout(), operator.Version) },
	})
	return root
}

type runFlags struct {
	namespaces    []string
	allNamespaces bool
	standalone    bool
	verbose       bool
	debug         bool
	quiet         bool
	logFormat     string
	kubeconfig    string
	// metricsAddress is --metrics-bind-address.
	metricsAddress string
}

func newRunCommand(register RegisterFunc, logOut io.Writer, opts Options) *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run the operator until interrupted.",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if len(f.namespaces) > 0 && f.allNamespaces {
				return errors.New("-n/--namespace and -A/--all-namespaces are mutually exclusive")
			}
			format, err := logging.ParseFormat(f.logFormat)
			if err != nil {
				return err
			}
			level := slog.LevelInfo
			switch {
			case f.verbose || f.debug:
				level = slog.LevelDebug
			case f.quiet:
				level = slog.LevelWarn
			}
			logger := opts.Logger
			if logger == nil {
				logger = logging.New(logOut, format, level)
			}
			// klog is process-wide; this command is the process's only
			// logger, so client-go's own lines come out in its format too.
			logging.RouteKlog(logger)
			reg := registry.New()
			if register != nil {
				if err := register(reg); err != nil {
					return fmt.Errorf("registering the handlers: %w", err)
				}
			}
			namespaces, all := f.namespaces, f.allNamespaces
			if len(namespaces) == 0 && !all {
				namespaces, all = opts.Namespaces, opts.AllNamespaces
			}
			cfg := opts.Config
			// On a 401, the credentials are loaded again the same way: a
			// kubeconfig's token may have been renewed since.
			login := func(context.Context) (*rest.Config, error) { return LoadConfig(f.kubeconfig) }
			if cfg == nil || f.kubeconfig != "" {
				var err error
				if cfg, err = LoadConfig(f.kubeconfig); err != nil {
					return err
				}
			} else {
				login = nil // the program's own configuration, as it is
			}
			metricsAddress := opts.MetricsAddress
			if cmd.Flags().Changed("metrics-bind-address") {
				metricsAddress = f.metricsAddress
			}
			sigs := make(chan os.Signal, 2)
			signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
			defer signal.Stop(sigs)
			ctx, forced, stop := watchSignals(cmd.Context(), sigs, logger)
			defer stop()
			done := make(chan error, 1)
			go func() {
				done <- operator.Run(ctx, cfg, reg, operator.Options{
					Namespaces:     namespaces,
					AllNamespaces:  all,
					Standalone:     f.standalone || opts.Standalone,
					Settings:       opts.Settings,
					Logger:         logger,
					Login:          login,
					Ready:          opts.Ready,
					Observe:        opts.Observe,
					RescanInterval: opts.RescanInterval,
					MetricsAddress: metricsAddress,
				})
			}()
			select {
			case err := <-done:
				return err
			case <-forced:
				// Logged already; the operator is left to the process's exit.
				cmd.SilenceErrors = true
				return errForcedExit
			}
		},
	}
	fl := cmd.Flags()
	fl.StringSliceVarP(&f.namespaces, "namespace", "n", nil, "serve only this namespace (repeatable, comma-separated)")
	fl.BoolVarP(&f.allNamespaces, "all-namespaces", "A", false, "serve all namespaces and cluster-scoped resources")
	fl.BoolVar(&f.standalone, "standalone", false, "do not coordinate with other operators (peering)")
	fl.BoolVarP(&f.verbose, "verbose", "v", false, "log the reactor's debug messages")
	fl.BoolVarP(&f.debug, "debug", "d", false, "log everything, as --verbose")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "log only warnings and errors")
	fl.StringVar(&f.logFormat, "log-format", "full", "log format: full, plain or json")
	fl.StringVar(&f.kubeconfig, "kubeconfig", "", "path to a kubeconfig (default: $KUBECONFIG, ~/.kube/config, in-cluster)")
	fl.StringVar(&f.metricsAddress, "metrics-bind-address", "", `serve Prometheus metrics at /metrics on this address, e.g. ":8080" ("" or "0": off)`)
	return cmd
}

// LoadConfig finds the cluster's credentials: an explicit kubeconfig path,
// then $KUBECONFIG and ~/.kube/config, then the in-cluster service account.
func LoadConfig(kubeconfig string) (*rest.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if kubeconfig != "" {
		rules.ExplicitPath = kubeconfig
	}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err == nil {
		return cfg, nil
	}
	if kubeconfig == "" && clientcmd.IsEmptyConfig(err) {
		if inCluster, icErr := rest.InClusterConfig(); icErr == nil {
			return inCluster, nil
		}
	}
	return nil, fmt.Errorf("loading the cluster's credentials: %w", err)
}

// watchSignals turns the operator's stop signals, as received on sigs,
// into its stop: the first SIGINT or SIGTERM cancels ctx (the operator
// stops gracefully, within settings.Queueing.ExitTimeout and a second, or
// settings.Background.ExitTimeout for its daemons and timers); a
// second one closes forced (the caller exits at once). Each is logged, the
// first in Kopf's words. stop releases the watcher and cancels ctx.
func watchSignals(parent context.Context, sigs <-chan os.Signal, logger *slog.Logger) (ctx context.Context, forced <-chan struct{}, stop func()) {
	if parent == nil {
		parent = context.Background()
	}
	ctx, cancel := context.WithCancel(parent)
	force := make(chan struct{})
	quit := make(chan struct{})
	go func() {
		select {
		case sig := <-sigs:
			logger.Info(fmt.Sprintf("Signal %s is received. Operator is stopping.", signalName(sig)))
			cancel()
		case <-quit:
			return
		}
		select {
		case sig := <-sigs:
			logger.Warn(fmt.Sprintf("Signal %s is received again. Operator is exiting immediately, without waiting for the handlers.", signalName(sig)))
			close(force)
		case <-quit:
		}
	}()
	var once sync.Once
	return ctx, force, func() { once.Do(func() { close(quit); cancel() }) }
}

// signalName is the signal's name as Kopf logs it (Python's signal.Signals
// names): SIGINT, SIGTERM.
func signalName(sig os.Signal) string {
	switch sig {
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	}
	return sig.String()
}
