package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	"github.com/spf13/cobra"

	"github.com/kopf-go/kopf/generator"
	"github.com/kopf-go/kopf/generator/port"
	"github.com/kopf-go/kopf/generator/scaffold"
)

func newPortCmd() *cobra.Command {
	var (
		o            port.Options
		force        bool
		skipGenerate bool
	)
	cmd := &cobra.Command{
		Use:   "port [--out DIR] [--module PATH] [--crd FILE...] FILE.py...",
		Short: "Port a Kopf operator (Python) to a kopf-go operator repository",
		Long: `port reads a Kopf operator's Python files (parsed by python3's own ast module:
--python names the interpreter, Python 3.8 or newer) and its CRDs' YAML files,
and writes a kopf-go operator repository in the layout of kopf-gen init into
--out (default: the current directory): every Kopf decorator becomes its
//kopf: marker with the same resource, id and options (stacked decorators in
Kopf's order), filters' callbacks become Go functions with their Python source
beside them, the CRDs become typed API types in api/<version>, module-level
state becomes the memo (internal/handlers/memo.go), and the handlers' bodies
are translated where the idioms are known (results, patch, logger and print,
f-strings with pyfmt, Kopf's errors and events, spec.get, memo, if, for,
assignments); every other statement is kept as a Python comment under
// TODO(port):, so that the repository builds and verifies as written. It then
runs go mod tidy and the generation, as init does, and prints the statements
translated and left, per handler.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Files = args
			if o.Scaffold.Dir == "" {
				o.Scaffold.Dir = "."
			}
			if o.Scaffold.Module == "" {
				abs, err := filepath.Abs(o.Scaffold.Dir)
				if err != nil {
					return err
				}
				o.Scaffold.Module = "example.com/" + filepath.Base(abs)
			}
			return runPort(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), o, force, !skipGenerate)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Scaffold.Dir, "out", "", "the `directory` of the new repository (default: the current directory)")
	f.StringVar(&o.Scaffold.Module, "module", "", "the module `path` of the operator (default: example.com/<the directory's name>)")
	f.StringSliceVar(&o.CRDs, "crd", nil, "a YAML `file` of the operator's CRDs (repeat or separate with commas)")
	f.StringVar(&o.Python, "python", "python3", "the Python `interpreter` (3.8 or newer) that parses the files")
	f.StringVar(&o.Scaffold.Namespace, "namespace", "", "the `namespace` of the Deployment (default \"default\")")
	f.StringVar(&o.Scaffold.KopfVersion, "kopf-version", "", "the `version` of github.com/kopf-go/kopf to require (default: kopf-gen's own)")
	f.StringVar(&o.Scaffold.KopfReplace, "kopf-replace", "", "replace github.com/kopf-go/kopf with the checkout in `PATH` (as kopf-gen init's)")
	f.BoolVar(&force, "force", false, "overwrite existing files that differ")
	f.BoolVar(&skipGenerate, "skip-generate", false, "only write the files: run neither go mod tidy nor the generation")
	return cmd
}

// runPort ports, writes the files, tidies and generates, and prints the
// figures.
func runPort(ctx context.Context, out, errOut io.Writer, o port.Options, force, gen bool) error {
	res, err := port.Port(ctx, o)
	if err != nil {
		return err
	}
	dir := o.Scaffold.Dir
	names := make([]string, 0, len(res.Files))
	for n := range res.Files {
		names = append(names, n)
	}
	sort.Strings(names)
	var conflicts []string
	for _, n := range names {
		target := filepath.Join(dir, filepath.FromSlash(n))
		have, err := os.ReadFile(target)
		status := "created"
		switch {
		case err == nil && bytes.Equal(have, res.Files[n]):
			fmt.Fprintf(out, "%-11s %s\n", "unchanged", n)
			continue
		case err == nil && !force:
			conflicts = append(conflicts, n)
			fmt.Fprintf(out, "%-11s %s\n", "conflict", n)
			continue
		case err == nil:
			status = "overwritten"
		}
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(target, res.Files[n], 0o644); err != nil {
			return err
		}
		fmt.Fprintf(out, "%-11s %s\n", status, n)
	}
	if len(conflicts) > 0 {
		return errConflicts{files: conflicts}
	}
	if gen {
		if err := tidy(ctx, out, dir); err != nil {
			return err
		}
		files, err := generateFiles(ctx, errOut, scaffold.GenerateOptions(dir))
		if err != nil {
			return err
		}
		if _, err := generator.Write(files); err != nil {
			return err
		}
		if err := tidy(ctx, out, dir); err != nil {
			return err
		}
	}
	printPortStats(out, res.Stats)
	return nil
}

// printPortStats prints what was translated and what is left.
func printPortStats(out io.Writer, s port.Stats) {
	fmt.Fprintf(out, "\nported: %d of %d decorators translated fully, %d of %d statements translated (%s)\n",
		s.DecoratorsTranslated, s.Decorators, s.StatementsTranslated, s.Statements, percent(s.StatementsTranslated, s.Statements))
	for _, h := range s.Handlers {
		fmt.Fprintf(out, "  %-40s %3d translated, %3d left (TODO(port))\n", filepath.Base(h.File)+": "+h.Python+" → "+h.Go, h.Translated, h.Left)
	}
}

func percent(a, b int) string {
	if b == 0 {
		return "100%"
	}
	return fmt.Sprintf("%d%%", a*100/b)
}
