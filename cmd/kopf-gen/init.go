package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kopf-go/kopf/generator"
	"github.com/kopf-go/kopf/generator/scaffold"
)

// errConflicts is returned by init when existing files were left alone.
type errConflicts struct{ files []string }

func (e errConflicts) Error() string {
	what := fmt.Sprintf("%d files exist and differ from the templates", len(e.files))
	if len(e.files) == 1 {
		what = "1 file exists and differs from its template"
	}
	return fmt.Sprintf("%s; left alone (--force overwrites): %s", what, strings.Join(e.files, ", "))
}

func newInitCmd() *cobra.Command {
	var (
		o            scaffold.Options
		skipGenerate bool
	)
	cmd := &cobra.Command{
		Use:   "init DIR --module M --group G --version V --kind K [--plural P] [--scope Cluster] [--no-spec] [--no-status]",
		Short: "Scaffold an operator repository that builds, generates and verifies at once",
		Long: `init writes an operator repository into DIR (created if needed): go.mod, main.go,
handlers with create, update and delete markers in package internal/handlers
(importable, so that tests import them) with a unit test, an end-to-end test in
test/e2e (the operator in-process with kopftest, on etcd and kube-apiserver
from envtest; "make test-e2e" builds them with kopf-gen envtest), the typed
resource in api/<version>/types.go, manifests of the service account, its
binding and the Deployment with kustomizations (config/default composes the
operator, as kubebuilder's does), a multi-stage Dockerfile (static binary,
non-root), a Makefile with the targets of kubebuilder's (generate, manifests,
fmt, vet, lint, test, test-e2e, run, install, uninstall, deploy, undeploy,
build-installer, helm-chart, docker-build, docker-push; "make help"), a README and a CI workflow.

It then runs "go mod tidy" and kopf-gen's generation in DIR, as "make generate"
would (--manifests=config --kustomize --chart=dist/chart --deepcopy
--clients=pkg/generated): zz_generated.kopf.go, the DeepCopy methods and scheme
registration, the typed clientset, config/crd/ (with its kustomization.yaml),
config/rbac/role.yaml and the Helm chart in dist/chart, then "go mod tidy" again for the clientset's imports.
--skip-generate writes the files only.

Existing files are never overwritten without --force: a file that already has
the rendered content is left as is, go.mod is kept if it declares the same
module and requires and replaces kopf-go as the flags say, and any other
existing file is a conflict, listed and left alone while the other files are
still written; the exit status is then 1. With --force, conflicting files are
overwritten, and go.mod of the same module is updated: only its kopf-go
requirements and replacements change, so that a re-run applies new
--kopf-version or --kopf-replace flags (or drops --kopf-replace).

The plural defaults to the kind's English plural in lower case, as kubebuilder
makes it (Widget: widgets). The kind is namespaced with a spec and a status
subresource, unless: --scope Cluster makes it cluster-scoped
(+kubebuilder:resource:scope=Cluster and +genclient:nonNamespaced on the type;
the end-to-end test's objects have no namespace); --no-status gives the type no
Status and the CRD no status subresource (the operator then writes the
handlers' results, status.<handler id>, with the rest of the object, and the
handlers set no conditions); --no-spec puts the type's data fields at the top
level, as a ConfigMap's, without a Spec. go.mod requires the kopf-go runtime this kopf-gen
was built with, and nothing of kopf-gen: the Makefile installs kopf-gen at its
KOPF_GEN_VERSION into bin/ (this kopf-gen's version) with go install.
--kopf-version sets another version of both. --kopf-replace PATH replaces
kopf-go (and its envtest module) with a checkout, for a kopf-go that is not
published or for developing kopf-go itself: go.mod names it relative to DIR,
the Makefile builds kopf-gen from it, "make docker-build" passes it to docker
as a build context, and CI checks kopf-go out where the relative path leads.
If go mod tidy cannot resolve kopf-go, init says which of these flags fixes it.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return fmt.Errorf("init takes one directory, got %d arguments: kopf-gen init DIR --module M --group G --version V --kind K", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Dir = args[0]
			return runInit(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), o, !skipGenerate)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Module, "module", "", "the module `path` of the operator, e.g. github.com/acme/widget-operator")
	f.StringVar(&o.Group, "group", "", "the API `group` of the resource, e.g. example.com")
	f.StringVar(&o.Version, "version", "", "the API `version` of the resource, e.g. v1alpha1")
	f.StringVar(&o.Kind, "kind", "", "the `kind` of the resource, in CamelCase, e.g. Widget")
	f.StringVar(&o.Plural, "plural", "", "the `plural` of the resource (default: the kind's plural in lower case)")
	f.StringVar(&o.Namespace, "namespace", "", "the `namespace` of the Deployment and service account (default \"default\")")
	f.StringVar(&o.KopfVersion, "kopf-version", "", "the `version` of github.com/kopf-go/kopf to require (default: kopf-gen's own)")
	f.StringVar(&o.KopfReplace, "kopf-replace", "", "replace github.com/kopf-go/kopf with the checkout in `PATH` (unpublished kopf-go, or developing kopf-go); go.mod names it relative to DIR")
	f.BoolVar(&o.Webhooks, "webhooks", false, "also scaffold admission webhooks: a validating and a mutating handler, their managed configurations, the Service and RBAC that kopf-gen writes for them, the Deployment's webhook port")
	f.StringVar(&o.Scope, "scope", "Namespaced", "the `scope` of the kind: Namespaced or Cluster")
	f.BoolVar(&o.NoSpec, "no-spec", false, "give the type no spec: its data fields at the top level, as a ConfigMap's")
	f.BoolVar(&o.NoStatus, "no-status", false, "give the type no status and the CRD no status subresource: the operator writes the handlers' results (status.<handler id>) with the rest of the object")
	f.BoolVar(&o.Force, "force", false, "overwrite existing files that differ from the templates")
	f.BoolVar(&skipGenerate, "skip-generate", false, "only write the files: run neither go mod tidy nor the generation")
	return cmd
}

// runInit scaffolds, then tidies and generates, and reports every file.
func runInit(ctx context.Context, out, errOut io.Writer, o scaffold.Options, gen bool) error {
	if err := o.Validate(); err != nil {
		return err
	}
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return err
	}
	res, err := scaffold.Write(o)
	if res != nil {
		for _, name := range res.Files {
			fmt.Fprintf(out, "%-11s %s\n", res.Status[name], name)
		}
	}
	if err != nil {
		return err
	}
	if gen {
		if err := tidy(ctx, out, o.Dir); err != nil {
			return err
		}
		files, err := generateFiles(ctx, errOut, scaffold.GenerateOptions(o.Dir))
		if err != nil {
			return err
		}
		changed, err := generator.Write(files)
		abs, absErr := filepath.Abs(o.Dir)
		for _, path := range changed {
			rel, relErr := filepath.Rel(abs, path)
			if absErr != nil || relErr != nil {
				rel = path
			}
			fmt.Fprintf(out, "%-11s %s\n", "generated", filepath.ToSlash(rel))
		}
		if err != nil {
			return err
		}
		// The typed clientset imports client-go packages that go.mod
		// may not require yet.
		if len(changed) > 0 {
			if err := tidy(ctx, out, o.Dir); err != nil {
				return err
			}
		}
	}
	if conflicts := res.Conflicts(); len(conflicts) > 0 {
		return errConflicts{files: conflicts}
	}
	return nil
}

// tidy runs go mod tidy in dir.
func tidy(ctx context.Context, out io.Writer, dir string) error {
	goTool, err := exec.LookPath("go")
	if err != nil {
		return errors.New("the go command is not on PATH: the files are written; run go mod tidy and make generate in the new repository")
	}
	fmt.Fprintf(out, "%-11s go mod tidy\n", "running")
	cmd := exec.CommandContext(ctx, goTool, "mod", "tidy")
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if kopfUnresolved(msg) {
			return fmt.Errorf("go mod tidy cannot resolve kopf-go (%s) in %s: the files are written. "+
				"If kopf-go is not published where the go command looks (go env GOPROXY), clone it "+
				"(git clone https://github.com/kopf-go/kopf) and run init again with --kopf-replace PATH_OF_THE_CLONE --force; "+
				"or name a published version with --kopf-version and --force. The go command said:\n%s", scaffold.KopfModule, dir, msg)
		}
		return fmt.Errorf("go mod tidy failed in %s (%v): the files are written; fix the cause, then run go mod tidy and make generate there:\n%s", dir, err, msg)
	}
	return nil
}

// kopfUnresolved reports whether go mod tidy's error is about finding a
// module of kopf-go (the runtime, or its envtest): the go command names it
// as "module github.com/kopf-go/kopf...: reading ..." or
// "github.com/kopf-go/kopf@version: ...", whether the proxy has no such
// module or version or cannot be reached.
func kopfUnresolved(msg string) bool {
	return strings.Contains(msg, "module "+scaffold.KopfModule) || strings.Contains(msg, scaffold.KopfModule+"@")
}
