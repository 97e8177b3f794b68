// Package cli is the operator binary's command line, modelled on `kopf run`:
//
//	operator run [-n NAMESPACE]... | -A  [--standalone] [-v|-d|-q] [--log-format full|plain|json]
//
// Credentials are found the way every Kubernetes tool finds them: the
// --kubeconfig flag, $KUBECONFIG, ~/.kube/config, then the in-cluster
// service account.
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

	"github.com/spf13/cobra"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/kopf-go/kopf/runtime/logging"
	"github.com/kopf-go/kopf/runtime/operator"
	"github.com/kopf-go/kopf/runtime/registry"
)

// RegisterFunc fills a registry: the generated Register of an operator.
type RegisterFunc func(*registry.Registry) error

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
func Main(register RegisterFunc) int {
	cmd := NewCommand(register, os.Stderr)
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
	root := &cobra.Command{
		Use:           "operator",
		Short:         "A Kubernetes operator built with kopf-go.",
		SilenceUsage:  true,
		SilenceErrors: false,
	}
	root.AddCommand(newRunCommand(register, logOut))
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
}

func newRunCommand(register RegisterFunc, logOut io.Writer) *cobra.Command {
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
			logger := logging.New(logOut, format, level)
			// klog is process-wide; this command is the process's only
			// logger, so client-go's own lines come out in its format too.
			logging.RouteKlog(logger)
			reg := registry.New()
			if err := register(reg); err != nil {
				return fmt.Errorf("registering the handlers: %w", err)
			}
			cfg, err := LoadConfig(f.kubeconfig)
			if err != nil {
				return err
			}
			sigs := make(chan os.Signal, 2)
			signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
			defer signal.Stop(sigs)
			ctx, forced, stop := watchSignals(cmd.Context(), sigs, logger)
			defer stop()
			done := make(chan error, 1)
			go func() {
				done <- operator.Run(ctx, cfg, reg, operator.Options{
					Namespaces:    f.namespaces,
					AllNamespaces: f.allNamespaces,
					Standalone:    f.standalone,
					Logger:        logger,
					// On a 401, the credentials are loaded again the same
					// way: a kubeconfig's token may have been renewed since.
					Login: func(context.Context) (*rest.Config, error) { return LoadConfig(f.kubeconfig) },
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
// stops gracefully, within settings.Queueing.ExitTimeout and a second); a
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
