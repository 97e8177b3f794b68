package cli

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/kopf-go/kopf/runtime/logging"
	"github.com/kopf-go/kopf/runtime/peering"
)

// peeringFlags are the flags of the freeze and resume commands (Kopf's
// `kopf freeze` and `kopf resume`).
type peeringFlags struct {
	namespaces    []string
	allNamespaces bool
	id            string
	dev           bool
	peering       string
	priority      int
	lifetime      int
	message       string
	kubeconfig    string
	verbose       bool
	debug         bool
	quiet         bool
}

func (f *peeringFlags) add(fl *pflag.FlagSet, freeze bool) {
	fl.StringSliceVarP(&f.namespaces, "namespace", "n", nil, "the namespace of the KopfPeering; repeatable, comma-separated (none: the ClusterKopfPeering)")
	fl.BoolVarP(&f.allNamespaces, "all-namespaces", "A", false, "the ClusterKopfPeering (the default without -n)")
	fl.StringVarP(&f.id, "id", "i", "", "the identity of the record (default: user@host)")
	fl.StringVarP(&f.peering, "peering", "P", "", "the peering object's name (required)")
	if freeze {
		fl.BoolVar(&f.dev, "dev", false, "the priority 666 (--priority 666)")
		fl.IntVarP(&f.priority, "priority", "p", 100, "the priority of the freeze: operators of lower priorities pause")
		fl.IntVarP(&f.lifetime, "lifetime", "t", 0, "for how many seconds the freeze lasts (required)")
		fl.StringVarP(&f.message, "message", "m", "", "a message (accepted as Kopf's, not stored)")
	}
	fl.StringVar(&f.kubeconfig, "kubeconfig", "", "path to a kubeconfig (default: $KUBECONFIG, ~/.kube/config, in-cluster)")
	fl.BoolVarP(&f.verbose, "verbose", "v", false, "log the debug messages")
	fl.BoolVarP(&f.debug, "debug", "d", false, "log the debug messages")
	fl.BoolVarP(&f.quiet, "quiet", "q", false, "log only warnings and errors")
}

// env is click's KOPF_<COMMAND>_<PARAMETER> for each flag.
func (f *peeringFlags) env(command string, freeze bool) []envVar {
	p := "KOPF_" + command + "_"
	vars := []envVar{
		{"namespace", []string{p + "NAMESPACES"}},
		{"all-namespaces", []string{p + "CLUSTERWIDE"}},
		{"id", []string{p + "ID"}},
		{"peering", []string{p + "PEERING", p + "PEERING_NAME"}},
		{"verbose", []string{p + "VERBOSE"}},
		{"debug", []string{p + "DEBUG"}},
		{"quiet", []string{p + "QUIET"}},
	}
	if freeze {
		vars = append(vars, envVar{"dev", []string{p + "DEV"}}, envVar{"priority", []string{p + "PRIORITY"}},
			envVar{"lifetime", []string{p + "LIFETIME"}}, envVar{"message", []string{p + "MESSAGE"}})
	}
	return vars
}

func (f *peeringFlags) logger(w io.Writer) *slog.Logger {
	level := slog.LevelInfo
	switch {
	case f.debug || f.verbose:
		level = slog.LevelDebug
	case f.quiet:
		level = slog.LevelWarn
	}
	return logging.NewWith(w, logging.Options{Format: logging.Full, Level: level})
}

// command is the record that the flags say: freeze's priority (--dev:
// 666) and lifetime, or resume's lifetime 0 (the record is removed).
func (f *peeringFlags) command(cmd *cobra.Command, name string, freeze bool, logOut io.Writer) (peering.Command, error) {
	if err := applyEnv(cmd.Flags(), f.env(name, freeze), os.LookupEnv); err != nil {
		return peering.Command{}, err
	}
	if f.peering == "" {
		return peering.Command{}, errors.New(`missing option "-P" / "--peering"`)
	}
	if len(f.namespaces) > 0 && f.allNamespaces {
		return peering.Command{}, errors.New("either --namespace or --all-namespaces can be used, not both")
	}
	c := peering.Command{Name: f.peering, Namespaces: f.namespaces, Identity: peering.Identity(f.id), Logger: f.logger(logOut)}
	if c.Identity == "" {
		c.Identity = peering.DetectOwnID(true)
	}
	if freeze {
		if !cmd.Flags().Changed("lifetime") {
			return peering.Command{}, errors.New(`missing option "-t" / "--lifetime"`)
		}
		c.Priority = f.priority
		if f.dev {
			c.Priority = devPriority
		}
		c.Lifetime = time.Duration(f.lifetime) * time.Second
	}
	return c, nil
}

// newFreezeCommand is Kopf's `kopf freeze`: "Pause the resource handling
// in the operator(s)" of lower priorities, for the lifetime given.
func newFreezeCommand(logOut io.Writer) *cobra.Command {
	var f peeringFlags
	cmd := &cobra.Command{
		Use:   "freeze",
		Short: "Pause the resource handling in the operator(s).",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := f.command(cmd, "FREEZE", true, logOut)
			if err != nil {
				return err
			}
			return runPeeringCommand(cmd, c, f.kubeconfig)
		},
	}
	f.add(cmd.Flags(), true)
	return cmd
}

// newResumeCommand is Kopf's `kopf resume`: "Resume the resource handling
// in the operator(s)": the freeze's record is removed.
func newResumeCommand(logOut io.Writer) *cobra.Command {
	var f peeringFlags
	cmd := &cobra.Command{
		Use:   "resume",
		Short: "Resume the resource handling in the operator(s).",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := f.command(cmd, "RESUME", false, logOut)
			if err != nil {
				return err
			}
			return runPeeringCommand(cmd, c, f.kubeconfig)
		},
	}
	f.add(cmd.Flags(), false)
	return cmd
}

func runPeeringCommand(cmd *cobra.Command, c peering.Command, kubeconfig string) error {
	cfg, err := LoadConfig(kubeconfig)
	if err != nil {
		return fmt.Errorf("loading the credentials: %w", err)
	}
	return c.Run(cmd.Context(), cfg)
}
