// Package generator is kopf-gen's engine: it loads Go packages, reads their
// //kopf: markers, and computes the zz_generated.kopf.go file each package
// needs, without touching the disk until asked to.
//
// The stages are separate packages: markers (the grammar, the marker table
// and the parser), load (go/packages), model (markers and signatures to
// handlers and registrations, with all checks), emit (jennifer), and
// builtins (the table of built-in resources with typed kwargs); manifests
// (controller-tools) and clients (code-generator) serve the options.
//
// # Contract
//
//   - Generate loads the packages once and reports every error of every
//     package together, as a go/scanner.ErrorList of file:line:col: message
//     entries sorted by position; it then plans no file at all, so a failed
//     run never leaves a half-generated tree behind. Warnings (comments that
//     look like misspelt markers, +kubebuilder: markers that kopf-gen does
//     not read) come apart, sorted too, with or without
//     errors, and change nothing in what is planned.
//   - A package with markers gets GeneratedFileName next to its sources.
//     A package without markers that still has that file gets it removed
//     (it is orphaned). A file of that name that is not marked as generated
//     (see IsGenerated) is never overwritten nor removed: overwriting it is
//     an error, removing it is skipped.
//   - The output of a package depends only on its sources, those of the
//     packages it imports directly (for their typed resources), and
//     Version: the same input yields the same bytes, gofmt-clean. It does
//     not depend on which other packages the patterns match.
//
// # Scheme registration
//
// A package declaring //kopf:resource types that are runtime.Objects (a
// DeepCopyObject method, or, with Options.DeepCopy, a doc comment asking
// DeepCopy for one: +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// or +kubebuilder:object:root=true) gets RegisterFileName, always, without
// an option: GroupName, SchemeGroupVersion, Kind, Resource, SchemeBuilder
// and AddToScheme, as code-generator's register-gen writes them (without
// init()), registering those types and their lists (<T>List, if they are
// runtime.Objects too), so that client-go's schemes and clientsets can
// encode and decode them. A package that declares AddToScheme itself
// registers its types itself and gets none; one that declares another of
// those names is an error; the types of one package must share their
// group and version. The file is removed when nothing produces it.
//
// # Manifests and DeepCopy
//
// With Options.Manifests set, the same run also plans, under that
// directory, rbac/role.yaml (the ClusterRole the handlers need, from every
// package's markers, with their rbac markers' rules, and a Role per
// namespace of those with namespace=) and crd/<group>_<plural>.yaml (the CRD of every
// //kopf:resource type declared in the matched packages; one per kind,
// with every version and, with conversions, their webhook: see package
// manifests), and, when the packages have admission webhook handlers or
// conversions, webhook/service.yaml (the
// webhooks' Service) and rbac/webhook_role.yaml (the Role of their
// certificate Secret), which are removed when they have none any more;
// with
// Options.DeepCopy, zz_generated.deepcopy.go in the matched packages that
// ask for DeepCopy methods with their markers. See package manifests for
// what they hold. The same rules apply to these files: a file that is not
// marked as generated is never overwritten (it is an error) nor removed,
// and generated CRD and DeepCopy files that nothing produces any more are
// removed (a role is always produced).
//
// With Options.Kustomize, the same run plans crd/kustomization.yaml under
// the manifests' directory, listing the CRDs; with Options.Chart, a Helm
// chart in that directory, made by package packaging from the kustomization
// Manifests/default rendered over the disk with this run's files in their
// place (so the chart is never older than the manifests), and the removal
// of the chart's generated YAML files that it no longer has.
//
// Packages are loaded once with go/packages for the handler code and the
// role. CRDs and DeepCopy methods need controller-tools, which loads the
// packages that declare typed resources or DeepCopy markers once more,
// with its own loader; a run without those options, or without such
// packages, never does.
package generator

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"go/scanner"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/pmezard/go-difflib/difflib"

	"github.com/kopf-go/kopf/generator/emit"
	"github.com/kopf-go/kopf/generator/load"
	"github.com/kopf-go/kopf/generator/markers"
	"github.com/kopf-go/kopf/generator/model"
	"github.com/kopf-go/kopf/internal/buildinfo"
)

// DevVersion is the version of kopf-gen under development: what Version
// reports when kopf-gen was built from a checkout of kopf-go.
const DevVersion = "v0.1.0-dev"

// Module is this module's path.
const Module = "github.com/kopf-go/kopf/generator"

// Version is kopf-gen's version, recorded in the header of generated files
// and printed by `kopf-gen version`: the version of this module that the
// running binary was built with when it came from a module proxy (go
// install github.com/kopf-go/kopf/cmd/kopf-gen@v0.1.0: v0.1.0, as the
// modules are tagged together), else DevVersion (a checkout, whose go.mod
// replaces this module with its directory, and this module's own tests).
func Version() string {
	if v := buildinfo.ModuleVersion(Module); v != "" {
		return v
	}
	return DevVersion
}

// GeneratedFileName is the name of the generated file in each package.
const GeneratedFileName = load.GeneratedFileName

// Options say what to generate.
type Options struct {
	// Dir is the directory patterns are resolved in; "" is the current one.
	Dir string
	// Patterns are go/packages patterns; none means "./...".
	Patterns []string

	// Manifests, if set, is the directory (relative to Dir) to generate
	// rbac/role.yaml and crd/*.yaml into.
	Manifests string
	// RoleName is the name of the ClusterRole; "" means the default
	// derived from the module path (see manifests.DefaultRoleName).
	RoleName string
	// Peering adds the rules of Kopf's peering objects to the role.
	Peering bool
	// DeepCopy generates zz_generated.deepcopy.go where markers ask for it.
	DeepCopy bool
	// Clients, if set, is the directory (relative to Dir) to generate the
	// typed clientset and apply configurations of the //kopf:resource
	// types marked +genclient into, with k8s.io/code-generator (see
	// package clients): Clients/clientset/versioned and
	// Clients/applyconfiguration.
	Clients string

	// Kustomize, with Manifests, also plans the kustomization of the CRDs
	// (crd/kustomization.yaml, listing them), so that a kustomization of
	// the manifests' directory, as kopf-gen init writes one in
	// Manifests/default, installs every CRD.
	Kustomize bool
	// Chart, if set, is the directory (relative to Dir) to generate a Helm
	// chart into, from the kustomization Manifests/default rendered with
	// the manifests of the same run (see package packaging); it needs
	// Manifests and Kustomize. The chart's operator is the Deployment
	// named as the role (RoleName or its default).
	Chart string
}

// File is one file as generation wants it on disk.
type File struct {
	// Path is absolute (as go/packages reports directories).
	Path string
	// Want is the generated content, or nil if the file must not exist.
	Want []byte
	// Have is the content on disk, or nil if there is no file.
	Have []byte
}

// UpToDate reports whether the disk already holds what is wanted.
func (f File) UpToDate() bool {
	return (f.Want == nil) == (f.Have == nil) && bytes.Equal(f.Want, f.Have)
}

// Generate computes the generated file of every package matching the
// options, and the orphaned generated files to remove. Files come sorted by
// path. On any error in the sources the error is a scanner.ErrorList holding
// all of them, and no files are returned.
//
// Warnings are what is most likely a mistake but does not stop generation
// (a comment that looks like a misspelt marker, see
// markers.Table.NearMiss; a +kubebuilder: marker that kopf-gen does not
// read, see markers.Table.KubebuilderWarning and model.RBACRule): they
// are returned sorted by position, whether
// or not there are errors, and never change the files.
func Generate(ctx context.Context, opts Options) (files []File, warnings scanner.ErrorList, err error) {
	patterns := opts.Patterns
	if len(patterns) == 0 {
		patterns = []string{"./..."}
	}
	pkgs, err := load.Load(ctx, opts.Dir, patterns...)
	if err != nil {
		return nil, nil, err
	}
	models, files, warnings, errs, err := planPackages(ctx, pkgs, opts)
	if err != nil {
		return nil, nil, err
	}
	warnings.Sort()
	warnings = dedupe(warnings)
	if len(errs) > 0 {
		errs.Sort()
		return nil, warnings, dedupe(errs)
	}
	if opts.Manifests != "" || opts.DeepCopy {
		more, err := planManifests(ctx, opts, pkgs, models)
		if err != nil {
			return nil, warnings, err
		}
		files = append(files, more...)
	}
	if opts.Clients != "" {
		more, warns, err := planClients(ctx, opts, pkgs, models)
		warnings = append(warnings, warns...)
		if err != nil {
			warnings.Sort()
			return nil, dedupe(warnings), err
		}
		files = append(files, more...)
		warnings.Sort()
		warnings = dedupe(warnings)
	}
	if opts.Chart != "" {
		more, err := planChart(opts, roleName(opts, pkgs), files)
		if err != nil {
			return nil, warnings, err
		}
		files = append(files, more...)
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	return files, warnings, nil
}

// planPackages plans the registration code (and the AddToScheme file) of
// each package, with its model; the errors in the sources are collected
// into errs, so that all of them are printed together; any other error
// stops the generation.
func planPackages(ctx context.Context, pkgs []*load.Package, opts Options) (models []*model.Package, files []File, warnings, errs scanner.ErrorList, err error) {
	table := markers.Kopf()
	positioned := func(err error) bool {
		var list scanner.ErrorList
		if !errors.As(err, &list) {
			return false
		}
		errs = append(errs, list...)
		return true
	}
	for _, pkg := range pkgs {
		m, warns, err := model.Build(ctx, pkg, table)
		warnings = append(warnings, warns...)
		if err != nil {
			if !positioned(err) {
				return nil, nil, nil, nil, err
			}
			continue
		}
		models = append(models, m)
		for _, planned := range []func() (File, bool, error){
			func() (File, bool, error) { return plan(m, pkg.Generated) },
			func() (File, bool, error) { return planRegister(pkg, m, opts.DeepCopy) },
		} {
			f, ok, err := planned()
			if err != nil {
				if !positioned(err) {
					return nil, nil, nil, nil, err
				}
				break
			}
			if ok {
				files = append(files, f)
			}
		}
	}
	return models, files, warnings, errs, nil
}

// dedupe removes repeated errors from a sorted list: the markers of a
// package's typed resources are checked by every package of the run that
// imports it, as well as by its own.
func dedupe(errs scanner.ErrorList) scanner.ErrorList {
	out := errs[:0]
	for _, e := range errs {
		if len(out) > 0 && *out[len(out)-1] == *e {
			continue
		}
		out = append(out, e)
	}
	return out
}

// plan computes the file of one package, if it needs one or has one to
// remove.
func plan(m *model.Package, existing string) (File, bool, error) {
	path := filepath.Join(m.Dir, GeneratedFileName)
	var have []byte
	if existing != "" {
		b, err := os.ReadFile(existing)
		if err != nil {
			return File{}, false, fmt.Errorf("reading %s: %w", existing, err)
		}
		have = b
	}
	ours := have != nil && IsGenerated(have)
	if len(m.Handlers) == 0 && len(m.Conversions) == 0 {
		if !ours {
			return File{}, false, nil
		}
		return File{Path: path, Have: have}, true, nil
	}
	if have != nil && !ours {
		var list scanner.ErrorList
		list.Add(token.Position{Filename: path, Line: 1, Column: 1},
			fmt.Sprintf("%s is not marked as generated (no \"// Code generated ... DO NOT EDIT.\" line before the package clause); refusing to overwrite it", GeneratedFileName))
		return File{}, false, list
	}
	want, err := emit.File(m, Version())
	if err != nil {
		return File{}, false, err
	}
	return File{Path: path, Want: want, Have: have}, true, nil
}

// IsGenerated reports whether Go source is marked as generated, by Go's
// convention: a line "// Code generated ... DO NOT EDIT." before the package
// clause.
func IsGenerated(src []byte) bool {
	for _, line := range strings.Split(string(src), "\n") {
		line = strings.TrimSuffix(line, "\r")
		if strings.HasPrefix(line, "package ") || line == "package" {
			return false
		}
		if strings.HasPrefix(line, "// Code generated ") && strings.HasSuffix(line, " DO NOT EDIT.") {
			return true
		}
	}
	return false
}

// Write brings the disk in line with the files: it writes the files whose
// content differs and removes the orphaned ones. It returns the paths it
// changed.
func Write(files []File) ([]string, error) {
	var changed []string
	for _, f := range files {
		if f.UpToDate() {
			continue
		}
		if f.Want == nil {
			if err := os.Remove(f.Path); err != nil && !os.IsNotExist(err) {
				return changed, fmt.Errorf("removing orphaned %s: %w", f.Path, err)
			}
		} else if err := writeFile(f.Path, f.Want); err != nil {
			return changed, err
		}
		changed = append(changed, f.Path)
	}
	return changed, nil
}

// writeFile replaces a file atomically, so that a concurrent build never
// sees half of it.
func writeFile(path string, content []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	defer os.Remove(tmp.Name()) // a no-op after the rename
	if _, err := tmp.Write(content); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// Diff returns a unified diff from the file on disk to the wanted one,
// naming the file by name (e.g. a path relative to the working directory);
// a missing side is /dev/null. It is empty when the file is up to date.
func Diff(f File, name string) (string, error) {
	if f.UpToDate() {
		return "", nil
	}
	from, to := "a/"+name, "b/"+name
	if f.Have == nil {
		from = "/dev/null"
	}
	if f.Want == nil {
		to = "/dev/null"
	}
	d, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A:        splitLines(f.Have),
		B:        splitLines(f.Want),
		FromFile: from,
		ToFile:   to,
		Context:  3,
	})
	if err != nil {
		return "", fmt.Errorf("diffing %s: %w", name, err)
	}
	return d, nil
}

// splitLines splits content into lines that keep their line breaks, as
// difflib expects; a missing final line break is marked as diff does.
func splitLines(b []byte) []string {
	if len(b) == 0 {
		return nil
	}
	lines := strings.SplitAfter(string(b), "\n")
	if last := lines[len(lines)-1]; last == "" {
		lines = lines[:len(lines)-1]
	} else {
		lines[len(lines)-1] = last + "\n\\ No newline at end of file\n"
	}
	return lines
}
