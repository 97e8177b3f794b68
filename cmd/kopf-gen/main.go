// Command kopf-gen generates the Go code behind kopf-go's //kopf: markers.
//
// Usage:
//
//	kopf-gen [flags]                      same as kopf-gen generate [flags] ./...
//	kopf-gen generate [flags] [packages]  write zz_generated.kopf.go where needed (default ./...)
//	kopf-gen verify [flags] [packages]    fail with a diff if a generated file is stale, missing or orphaned
//	kopf-gen init DIR --module M --group G --version V --kind K [--plural P]
//	                                      scaffold an operator repository
//	kopf-gen port [--out DIR] [--module M] [--crd FILE...] FILE.py...
//	                                      port a Kopf operator (Python) to a repository
//	kopf-gen envtest [--kubernetes-version V] [--bin-dir DIR]
//	                                      build etcd and kube-apiserver from the Go module
//	                                      proxy; print the KUBEBUILDER_ASSETS directory
//	kopf-gen kustomize DIR [--image NAME=IMAGE] [-o FILE]
//	                                      render a kustomization as kustomize build does
//	kopf-gen add-version SRC VERSION [--conversions DIR]
//	                                      add a version to the kinds of the API package in SRC:
//	                                      the package VERSION beside it, the conversions' stubs
//	kopf-gen markers                      describe every marker and argument
//	kopf-gen version                      print the version recorded in generated headers
//
// Packages are go/packages patterns resolved in the current directory, so
// that a `//go:generate kopf-gen` line regenerates the package it is in and
// those below it.
//
// generate, verify and the bare command take the same flags, so that
// verify checks exactly what generate writes:
//
//	--manifests DIR   also write DIR/rbac/role.yaml (the ClusterRole the
//	                  handlers need) and DIR/crd/<group>_<plural>.yaml (the
//	                  CRDs of //kopf:resource types, with controller-tools,
//	                  so +kubebuilder markers apply); DIR is relative to the
//	                  current directory
//	--role-name NAME  the ClusterRole's name (default: from the module path,
//	                  e.g. widget-operator)
//	--peering         add the rules of Kopf's peering objects to the role
//	--deepcopy        also write zz_generated.deepcopy.go in packages whose
//	                  markers ask for it (+k8s:deepcopy-gen, +kubebuilder:object)
//	--clients DIR     also write the typed clientset (DIR/clientset/versioned)
//	                  and apply configurations (DIR/applyconfiguration) of the
//	                  //kopf:resource types marked +genclient, with
//	                  k8s.io/code-generator's client-gen and
//	                  applyconfiguration-gen; DIR is relative to the current
//	                  directory
//	--kustomize       also write DIR/crd/kustomization.yaml (of --manifests
//	                  DIR), listing the CRDs for kustomize
//	--chart DIR       also write a Helm chart into DIR, made from the
//	                  kustomization of --manifests' default/ rendered with the
//	                  manifests of the same run (needs --kustomize)
//
// Packages of //kopf:resource types that are runtime.Objects always get
// zz_generated.register.go (SchemeGroupVersion, AddToScheme), with or
// without flags.
//
// init writes the repository's files, then runs `go mod tidy` and the
// generation of its //go:generate line (--manifests=config --deepcopy) in
// it, unless --skip-generate. It never overwrites an existing file that
// differs from the template unless --force: such files are listed as
// conflicts, the others are still written, and the exit status is 1.
//
// Errors in the sources are printed one per line as file:line:col: message,
// file names relative to the current directory, all of them in one run; the
// exit status is then 1, and no file is written. Warnings (comments that
// look like misspelt markers, such as "// kopf:on.create") are printed on
// standard error by generate, verify and the bare command as
// file:line:col: warning: message, among the errors if there are any, in
// position order; they change neither the files nor the exit status. verify prints its unified
// diffs on standard output and exits with status 1 when anything differs.
package main

import (
	"context"
	"errors"
	"fmt"
	"go/scanner"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kopf-go/kopf/generator"
	"github.com/kopf-go/kopf/generator/manifests"
	"github.com/kopf-go/kopf/generator/markers"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run executes kopf-gen with the arguments and returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := newRootCmd()
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	if err := root.ExecuteContext(ctx); err != nil {
		report(stderr, err)
		return 1
	}
	return 0
}

// errDrift is returned by verify when files differ; the diffs are already
// printed.
type errDrift struct{ n int }

func (e errDrift) Error() string {
	if e.n == 1 {
		return "1 generated file is out of date; run kopf-gen generate"
	}
	return fmt.Sprintf("%d generated files are out of date; run kopf-gen generate", e.n)
}

// report prints an error: positioned source errors one per line with paths
// relative to the working directory (with the run's warnings among them,
// see diagnostics), anything else prefixed by kopf-gen.
func report(w io.Writer, err error) {
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range joined.Unwrap() {
			report(w, e)
		}
		return
	}
	var d diagnostics
	if errors.As(err, &d) {
		printDiagnostics(w, d.warnings, d.errors)
		return
	}
	var list scanner.ErrorList
	if !errors.As(err, &list) {
		fmt.Fprintf(w, "kopf-gen: %v\n", err)
		return
	}
	printDiagnostics(w, nil, list)
}

// diagnostics are the errors of a run in the sources and its warnings,
// printed together.
type diagnostics struct{ warnings, errors scanner.ErrorList }

func (d diagnostics) Error() string { return d.errors.Error() }
func (d diagnostics) Unwrap() error { return d.errors }

// printDiagnostics prints warnings and errors in one list sorted by
// position, one per line: "file:line:col: message" for errors and
// "file:line:col: warning: message" for warnings (the compilers' format,
// which editors parse), with paths relative to the working directory.
func printDiagnostics(w io.Writer, warnings, errs scanner.ErrorList) {
	type diag struct {
		*scanner.Error
		warning bool
	}
	all := make([]diag, 0, len(warnings)+len(errs))
	for _, e := range warnings {
		all = append(all, diag{e, true})
	}
	for _, e := range errs {
		all = append(all, diag{e, false})
	}
	sort.SliceStable(all, func(i, j int) bool {
		a, b := all[i].Pos, all[j].Pos
		if a.Filename != b.Filename {
			return a.Filename < b.Filename
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Column < b.Column
	})
	wd, _ := os.Getwd()
	for _, e := range all {
		msg := e.Msg
		if e.warning {
			msg = "warning: " + msg
		}
		pos := e.Pos
		pos.Filename = relative(wd, pos.Filename)
		if pos.Filename == "" && !pos.IsValid() {
			fmt.Fprintf(w, "kopf-gen: %s\n", msg)
			continue
		}
		fmt.Fprintf(w, "%s: %s\n", pos, msg)
	}
}

// generateFiles runs the generator and prints its warnings on stderr; with
// errors in the sources, the warnings go with the error, to be printed
// among the errors.
func generateFiles(ctx context.Context, stderr io.Writer, opts generator.Options) ([]generator.File, error) {
	files, warnings, err := generator.Generate(ctx, opts)
	var list scanner.ErrorList
	if errors.As(err, &list) && len(warnings) > 0 {
		return nil, diagnostics{warnings: warnings, errors: list}
	}
	printDiagnostics(stderr, warnings, nil)
	return files, err
}

// relative returns path relative to dir when it lies below dir.
func relative(dir, path string) string {
	if dir == "" || !filepath.IsAbs(path) {
		return path
	}
	rel, err := filepath.Rel(dir, path)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return path
	}
	return rel
}

// genFlags are the flags of generate, verify and the bare command.
type genFlags struct {
	manifests, roleName, clients, chart string
	peering, deepcopy, kustomize        bool
}

func (f *genFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.manifests, "manifests", "", "also generate `DIR`/rbac/role.yaml and DIR/crd/<group>_<plural>.yaml (relative to the current directory)")
	cmd.Flags().StringVar(&f.roleName, "role-name", "", "the `name` of the generated ClusterRole (default: from the module path, e.g. widget-operator)")
	cmd.Flags().BoolVar(&f.peering, "peering", false, "add the rules of Kopf's peering objects (kopf.dev) to the role")
	cmd.Flags().BoolVar(&f.deepcopy, "deepcopy", false, "also generate zz_generated.deepcopy.go where +k8s:deepcopy-gen or +kubebuilder:object markers ask for it")
	cmd.Flags().BoolVar(&f.kustomize, "kustomize", false, "also generate DIR/crd/kustomization.yaml (of --manifests DIR), listing the CRDs for kustomize")
	cmd.Flags().StringVar(&f.chart, "chart", "", "also generate a Helm chart into `DIR` from the kustomization of --manifests' default/ (needs --manifests and --kustomize)")
	cmd.Flags().StringVar(&f.clients, "clients", "", "also generate the typed clientset (`DIR`/clientset/versioned) and apply configurations (DIR/applyconfiguration) of //kopf:resource types marked +genclient, with k8s.io/code-generator (relative to the current directory)")
}

func (f *genFlags) options(patterns []string) (generator.Options, error) {
	if f.roleName != "" && !manifests.IsDNSSubdomain(f.roleName) {
		return generator.Options{}, fmt.Errorf("--role-name %q: not a valid object name: lower-case letters, digits, '-' and '.', starting and ending with a letter or digit", f.roleName)
	}
	if f.manifests == "" && (f.roleName != "" || f.peering) {
		return generator.Options{}, errors.New("--role-name and --peering apply to the role that --manifests generates: add --manifests DIR")
	}
	if (f.manifests == "" && f.kustomize) || (f.chart != "" && (f.manifests == "" || !f.kustomize)) {
		return generator.Options{}, errors.New("--kustomize applies to the manifests of --manifests DIR, and --chart renders DIR/default with the kustomization of --kustomize: add --manifests DIR --kustomize")
	}
	return generator.Options{Patterns: patterns, Manifests: f.manifests, RoleName: f.roleName, Peering: f.peering, DeepCopy: f.deepcopy, Clients: f.clients,
		Kustomize: f.kustomize, Chart: f.chart}, nil
}

func newRootCmd() *cobra.Command {
	var rootFlags, genF, verifyF genFlags
	root := &cobra.Command{
		Use:   "kopf-gen",
		Short: "Generate the code behind kopf-go's //kopf: markers",
		Long: `kopf-gen reads the //kopf: markers of Go packages and writes, next to each
package's sources, zz_generated.kopf.go: the typed kwargs of every handler and
a Register function that adds them to a kopf.Registry.

Without a command, kopf-gen runs "generate ./...", so that a line
//go:generate kopf-gen regenerates the package it is in.`,
		Version:       generator.Version(),
		Args:          cobra.NoArgs,
		SilenceErrors: true,
		SilenceUsage:  true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts, err := rootFlags.options(nil)
			if err != nil {
				return err
			}
			return generate(cmd.Context(), cmd.ErrOrStderr(), opts)
		},
	}
	rootFlags.add(root)
	root.CompletionOptions.DisableDefaultCmd = true
	root.SetVersionTemplate("kopf-gen {{.Version}}\n")
	generateCmd := &cobra.Command{
		Use:   "generate [packages]",
		Short: "Write zz_generated.kopf.go into every package with markers (default ./...)",
		Long: `generate loads the packages (go/packages patterns, default ./...), checks every
marker and handler signature, and writes zz_generated.kopf.go into each package
that has markers. It removes the generated file of packages that have no
markers any more. On any error it writes nothing. Comments that look like
misspelt markers ("// kopf:on.create") are reported on stderr as
file:line:col: warning: ... and do not fail the run.

With --manifests DIR it also writes DIR/rbac/role.yaml, the ClusterRole with
exactly the verbs the runtime needs on the resources the markers name, and
DIR/crd/<group>_<plural>.yaml, the CRD of every //kopf:resource type (its
OpenAPI schema from the Go type and its +kubebuilder markers). With --deepcopy
it writes zz_generated.deepcopy.go into packages with +k8s:deepcopy-gen or
+kubebuilder:object markers. With --clients DIR it writes the typed clientset
(DIR/clientset/versioned) and the apply configurations (DIR/applyconfiguration)
of the //kopf:resource types marked +genclient, with k8s.io/code-generator.
Packages of //kopf:resource types that are runtime.Objects get
zz_generated.register.go (SchemeGroupVersion, AddToScheme) in any case. Generated manifests and DeepCopy files that
nothing produces any more are removed; files not marked as generated are never
overwritten.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts, err := genF.options(args)
			if err != nil {
				return err
			}
			return generate(cmd.Context(), cmd.ErrOrStderr(), opts)
		},
	}
	genF.add(generateCmd)
	verifyCmd := &cobra.Command{
		Use:   "verify [packages]",
		Short: "Fail with a diff if a generated file is stale, missing or orphaned",
		Long: `verify generates in memory and compares with the files on disk. It prints a
unified diff for every file that differs, is missing or should be removed, and
exits with status 1 if there is any. Give it the flags that generate gets.
It prints the warnings that generate prints, on stderr.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts, err := verifyF.options(args)
			if err != nil {
				return err
			}
			return verify(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), opts)
		},
	}
	verifyF.add(verifyCmd)
	root.AddCommand(
		generateCmd,
		verifyCmd,
		newInitCmd(),
		newPortCmd(),
		newEnvtestCmd(),
		newKustomizeCmd(),
		newAddVersionCmd(),
		&cobra.Command{
			Use:   "markers",
			Short: "Describe every marker and its arguments",
			Args:  cobra.NoArgs,
			RunE: func(cmd *cobra.Command, _ []string) error {
				return markers.WriteHelp(cmd.OutOrStdout(), markers.Kopf())
			},
		},
		&cobra.Command{
			Use:   "version",
			Short: "Print the version recorded in the header of generated files",
			Args:  cobra.NoArgs,
			RunE: func(cmd *cobra.Command, _ []string) error {
				_, err := fmt.Fprintf(cmd.OutOrStdout(), "kopf-gen %s\n", generator.Version())
				return err
			},
		},
	)
	return root
}

func generate(ctx context.Context, stderr io.Writer, opts generator.Options) error {
	files, err := generateFiles(ctx, stderr, opts)
	if err != nil {
		return err
	}
	if _, err := generator.Write(files); err != nil {
		return err
	}
	return nil
}

func verify(ctx context.Context, stdout, stderr io.Writer, opts generator.Options) error {
	files, err := generateFiles(ctx, stderr, opts)
	if err != nil {
		return err
	}
	wd, _ := os.Getwd()
	drift := 0
	for _, f := range files {
		if f.UpToDate() {
			continue
		}
		drift++
		d, err := generator.Diff(f, filepath.ToSlash(relative(wd, f.Path)))
		if err != nil {
			return err
		}
		if _, err := io.WriteString(stdout, d); err != nil {
			return fmt.Errorf("writing the diff: %w", err)
		}
	}
	if drift > 0 {
		return errDrift{n: drift}
	}
	return nil
}
