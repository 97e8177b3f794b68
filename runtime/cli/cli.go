// Package cli is the operator binary's command line, modelled on `kopf run`:
//
//	NAME run [-n NAMESPACE]... | -A  [--standalone] [--dev | -p PRIORITY] [-P PEERING]
//	         [-v|-d|-q] [--log-format full|plain|json] [--log-refkey KEY] [--[no-]log-prefix]
//	         [-L|--liveness URL] [--readiness URL]
//	NAME freeze -P PEERING -t LIFETIME [-p PRIORITY | --dev] [-i ID] [-n NAMESPACE]... | -A
//	NAME resume -P PEERING [-i ID] [-n NAMESPACE]... | -A
//	NAME --version
//
// NAME is the binary's name (or Options.Name). The flags are Kopf's, with
// their shorthands, defaults and environment variables (KOPF_RUN_*, see
// runEnv); docs/cli.md lists them.
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
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/rest"

	"github.com/kopf-go/kopf/runtime/activities"
	"github.com/kopf-go/kopf/runtime/kwargs"
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
	// Name is the operator's name in its command line's help and
	// --version; "": the binary's name (os.Args[0]'s base name).
	Name string
	// Settings are the operator's settings; nil: settings.Default().
	Settings *settings.Settings
	// Namespaces and AllNamespaces say what to serve (see
	// operator.Options). Under the command line they are the defaults
	// used when neither -n nor -A is given.
	Namespaces    []string
	AllNamespaces bool
	// Standalone disables peering (--standalone, which also sets it).
	Standalone bool
	// Priority and PeeringName are the operator's priority among its peers
	// and its peering object's name (Kopf's priority= and peering_name=;
	// see operator.Options). Under the command line, -p/--dev and
	// -P/--peering take precedence.
	Priority    int
	PeeringName string
	// Config is the cluster's client configuration. Nil: the credentials
	// are found as the command line finds them (LoadConfig), and loaded
	// again on a 401 Unauthorized. Set: cfg is used as it is, with no
	// re-login. Under the command line, --kubeconfig takes precedence.
	// With login handlers, they produce the credentials, and these are
	// what activities.LoginViaClient returns in them.
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
	// Memo is the operator's memo (see operator.Options.Memo).
	Memo kwargs.Memo
	// Prober is operator.Options' (the probe handlers' runner, for a
	// health endpoint and for package kopftest's Probe).
	Prober func(operator.ProbeFunc)
	// LivenessEndpoint and ReadinessEndpoint are the URLs of the health
	// endpoints (see operator.Options); "" for none. Under the command
	// line, -L/--liveness and --readiness take precedence.
	LivenessEndpoint  string
	ReadinessEndpoint string
	// MetricsAddress is where the Prometheus metrics are served (see
	// operator.Options.MetricsAddress); "" or "0": nowhere. Under the
	// command line, --metrics-bind-address takes precedence.
	MetricsAddress string
	// Sharding, if set, splits the objects among the operator's replicas
	// (see operator.Options.Sharding). Under the command line, --shards
	// turns it on too and sets the number of buckets.
	Sharding *operator.Sharding
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
	// Without a configuration, the operator loads the credentials (at
	// start, unless login handlers do, and again on a 401).
	cfg, login := opts.Config, operator.LoginFunc(nil)
	if cfg == nil {
		login = func(context.Context) (*rest.Config, error) { return LoadConfig("") }
	}
	return operator.Run(ctx, cfg, reg, operator.Options{
		Namespaces:     opts.Namespaces,
		AllNamespaces:  opts.AllNamespaces,
		Standalone:     opts.Standalone,
		Priority:       opts.Priority,
		PeeringName:    opts.PeeringName,
		Settings:       opts.Settings,
		Logger:         logger,
		Login:          login,
		Ready:          opts.Ready,
		Observe:        opts.Observe,
		RescanInterval: opts.RescanInterval,
		Memo:           opts.Memo,
		Prober:         opts.Prober,

		LivenessEndpoint:  opts.LivenessEndpoint,
		ReadinessEndpoint: opts.ReadinessEndpoint,
		MetricsAddress:    opts.MetricsAddress,
		Sharding:          opts.Sharding,
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
	name := opts.Name
	if name == "" {
		name = filepath.Base(os.Args[0])
	}
	root := &cobra.Command{
		Use:           name,
		Short:         name + ": a Kubernetes operator built with kopf-go.",
		Version:       operator.Version,
		SilenceUsage:  true,
		SilenceErrors: false,
	}
	// As Kopf's "kopf, version 1.44.6": the operator, and the runtime's version.
	root.SetVersionTemplate("{{.Name}}, kopf-go version {{.Version}}\n")
	// Kopf's --version has no shorthand (cobra's default would be -v).
	root.Flags().Bool("version", false, "Show the version and exit.")
	root.AddCommand(newRunCommand(register, logOut, opts), newFreezeCommand(logOut), newResumeCommand(logOut))
	root.AddCommand(&cobra.Command{
		Use:   "version",
		Short: "Print the kopf-go runtime version.",
		Run:   func(cmd *cobra.Command, _ []string) { fmt.Fprintln(cmd.OutOrStdout(), operator.Version) },
	})
	return root
}

func newRunCommand(register RegisterFunc, logOut io.Writer, opts Options) *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run the operator until interrupted.",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			op, err := f.operatorOptions(cmd.Flags(), opts, logOut)
			if err != nil {
				return err
			}
			logger := op.Logger
			if f.debug {
				if err := klogDebug(); err != nil {
					return err
				}
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
			cfg := opts.Config
			// On a 401, the credentials are loaded again the same way: a
			// kubeconfig's token may have been renewed since.
			login := func(context.Context) (*rest.Config, error) { return LoadConfig(f.kubeconfig) }
			if cfg == nil || f.kubeconfig != "" {
				cfg = nil // loaded by the operator at start, unless login handlers do
			} else {
				login = nil // the program's own configuration, as it is
			}
			if cmd.Flags().Changed("metrics-bind-address") {
				op.MetricsAddress = f.metricsAddress // "" or "0" turns off what the program set
			}
			sigs := make(chan os.Signal, 2)
			signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
			defer signal.Stop(sigs)
			ctx, forced, stop := watchSignals(cmd.Context(), sigs, logger)
			defer stop()
			op.Login = login
			done := make(chan error, 1)
			go func() { done <- operator.Run(ctx, cfg, reg, op) }()
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
	addRunFlags(cmd.Flags(), &f)
	return cmd
}

// LoadConfig finds the cluster's credentials: an explicit kubeconfig path,
// then $KUBECONFIG and ~/.kube/config, then the in-cluster service account
// (activities.LoadConfig).
func LoadConfig(kubeconfig string) (*rest.Config, error) { return activities.LoadConfig(kubeconfig) }

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
