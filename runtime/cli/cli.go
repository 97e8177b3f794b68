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

	"github.com/spf13/cobra"
	"k8s.io/client-go/rest"

	"github.com/kopf-go/kopf/runtime/activities"
	"github.com/kopf-go/kopf/runtime/logging"
	"github.com/kopf-go/kopf/runtime/operator"
	"github.com/kopf-go/kopf/runtime/registry"
)

// RegisterFunc fills a registry: the generated Register of an operator.
type RegisterFunc func(*registry.Registry) error

// Options are the operator's options (operator.Options, the one
// declaration of every run option): what a program sets in code, and what
// the run command's flags bind to. Under the command line (MainWith), the
// options set in code are the defaults of the flags that say the same, so
// a flag given takes precedence: -n/-A over Namespaces and AllNamespaces,
// --standalone, -p/--dev, -P, -L/--liveness, --readiness,
// --metrics-bind-address and --shards over theirs; --kubeconfig over
// Config; a Logger set in code over --log-format, -v, -d and -q. The
// zero Options are the defaults.
type Options = operator.Options

// Run runs the operator with the handlers that register adds, without a
// command line and without touching any process-wide state (signals,
// klog), until ctx is done: cancelling ctx is the operator's stop (Kopf's
// stop_flag), after which Run returns once its workers are done or have
// been given up on (settings.Queueing.ExitTimeout). It returns nil on a
// clean stop and an error only if the operator cannot start (the handlers
// do not register, no credentials, a namespace pattern is invalid).
// Without a Config, the operator loads the credentials (at start, unless
// login handlers do, and again on a 401).
func Run(ctx context.Context, register RegisterFunc, opts Options) error {
	reg, err := newRegistry(register)
	if err != nil {
		return err
	}
	return operator.Run(ctx, reg, opts)
}

// newRegistry is the registry that register fills.
func newRegistry(register RegisterFunc) (*registry.Registry, error) {
	reg := registry.New()
	if register != nil {
		if err := register(reg); err != nil {
			return nil, fmt.Errorf("registering the handlers: %w", err)
		}
	}
	return reg, nil
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
		Version:       operator.Version(),
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
		Run:   func(cmd *cobra.Command, _ []string) { fmt.Fprintln(cmd.OutOrStdout(), operator.Version()) },
	})
	return root
}

func newRunCommand(register RegisterFunc, logOut io.Writer, opts Options) *cobra.Command {
	f := runFlags{opts: opts}
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run the operator until interrupted.",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := f.complete(cmd.Flags(), logOut); err != nil {
				return err
			}
			if f.debug {
				if err := klogDebug(); err != nil {
					return err
				}
			}
			// klog is process-wide; this command is the process's only
			// logger, so client-go's own lines come out in its format too.
			logging.RouteKlog(f.opts.Logger)
			reg, err := newRegistry(register)
			if err != nil {
				return err
			}
			sigs := make(chan os.Signal, 2)
			signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
			defer signal.Stop(sigs)
			ctx, forced, stop := watchSignals(cmd.Context(), sigs, f.opts.Logger)
			defer stop()
			done := make(chan error, 1)
			go func() { done <- operator.Run(ctx, reg, f.opts) }()
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
