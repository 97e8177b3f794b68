// Package scaffold is `kopf-gen init`: it renders the operator repository
// of package templates for a module, group, version and kind, and writes
// it without ever overwriting a file that differs, unless forced.
//
// # The data of the templates
//
//	.Module       the module path, e.g. github.com/acme/widget-operator
//	.Name         the operator's name (binary, role, service account,
//	              Deployment): manifests.DefaultRoleName(Module)
//	.Group        the API group, e.g. example.com
//	.Version      the API version and the Go package of the types, e.g. v1alpha1
//	.APIPackage   the name handlers import the types as (Version)
//	.Kind         the kind and Go type, e.g. Widget
//	.Plural       the plural, e.g. widgets
//	.Namespace    the namespace of the Deployment and service account
//	.GoVersion    the go directive of go.mod, e.g. 1.25.0; .GoMinor 1.25
//	.KopfVersion  the version of github.com/kopf-go/kopf (and of its
//	              envtest module) to require, or ""
//	.KopfReplace  the directory to replace github.com/kopf-go/kopf with,
//	              relative to Dir (with forward slashes), or ""
//	.KopfReplaceMount
//	              where the Dockerfile mounts that directory: where the
//	              relative path leads from its WORKDIR, /src
//	.CIPath, .CIKopfPath
//	              with KopfReplace leading out of the repository
//	              (../kopf-go): where CI checks out the operator and
//	              kopf-go so that the relative path leads from one to the
//	              other; "" otherwise
//	.KopfGenVersion
//	              the version of kopf-gen that the Makefile installs
//	              (KOPF_GEN_VERSION): see KopfGenVersion
//	.Webhooks     whether to scaffold admission webhooks (Options.Webhooks)
//	.Managed      the name of the managed webhook configurations:
//	              <Name>.<Group>
//	.WebhookPort, .WebhookPortName
//	              where the runtime's webhook server listens in the pod
//	              (manifests.WebhookTargetPort), and that port's name
//	.WebhookRole  the Role of the webhooks' certificate Secret that
//	              kopf-gen writes (manifests.WebhookRoleName)
//	.Cluster      whether the kind is cluster-scoped (Options.Scope)
//	.Spec, .Status
//	              whether the type has a spec, and a status (and with it
//	              the CRD's status subresource): Options.NoSpec, NoStatus
//	.Greeting     the Go path of the example's field from the object:
//	              Spec.Greeting, or Greeting without a spec; .GreetingPath
//	              its JSON path, spec.greeting or greeting
//	.ObjectNamespace
//	              the namespace of the end-to-end test's objects: default,
//	              or "" for a cluster-scoped kind
//
// # Scope, spec and status
//
// Options.Scope Cluster scaffolds a cluster-scoped kind: the type has
// +kubebuilder:resource:scope=Cluster (the CRD's scope) and
// +genclient:nonNamespaced (the typed client's), and the end-to-end test
// creates its objects without a namespace. Handlers' markers, the
// operator's ClusterRole (which kopf-gen writes for every scope) and its
// --all-namespaces are the same for both scopes.
//
// Options.NoStatus scaffolds a type without a Status field, and a CRD
// without the status subresource: the operator then writes the handlers'
// results (status.<handler id>) and its progress with the rest of the
// object, in one patch (the CRD's status still keeps unknown fields: see
// package manifests), and the handlers set no conditions. Options.NoSpec
// scaffolds a type whose data fields are at the top level, as a
// ConfigMap's are, without a Spec field.
//
// # Admission webhooks
//
// With Options.Webhooks, the scaffold also has a validating and a mutating
// handler of the resource (internal/handlers/webhooks.go, and its test),
// main.go manages their webhook configurations (kopf.WithManagedWebhooks),
// the Deployment exposes the webhook server's port, config/rbac binds the
// Role that kopf-gen writes for the certificate Secret, the Makefile
// deploys the webhooks' Service that kopf-gen writes (config/webhook/), and
// the end-to-end test serves the webhooks on 127.0.0.1 for its local API
// server. Templates rendered only then are listed in webhookOnly.
//
// The operator's go.mod requires the runtime module only: the Makefile
// installs a pinned kopf-gen into bin/ with go install, as kubebuilder's
// installs controller-gen, so that none of kopf-gen's dependencies
// (x/tools, jennifer, controller-tools) enters the operator's module graph.
// With KopfReplace, the Makefile builds kopf-gen from that checkout
// instead. The replace directive is relative, so that the repository works
// wherever the two directories are side by side: the Makefile uses the same
// path, the Dockerfile gets the checkout as a named build context, and CI
// checks out both.
//
// # Existing files
//
// A file that does not exist is created. A file whose content is what the
// template renders is left as is. go.mod is kept when it declares the same
// module and already requires and replaces kopf-go as the options say (the
// go command maintains the rest after creation); when it declares the same
// module but requires or replaces kopf-go otherwise, it is a conflict, or
// with Force updated: only its kopf-go requirements and replacements change.
// Any other existing file is a conflict: it is left alone and reported,
// unless Force is set, in which case it is overwritten. Files that init does not render (such
// as the generated ones, go.sum, or the user's own) are never touched by
// this package.
package scaffold

import (
	"bytes"
	"errors"
	"fmt"
	"go/format"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"text/template"

	"github.com/gobuffalo/flect"
	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	"golang.org/x/mod/semver"

	"github.com/kopf-go/kopf/generator"
	"github.com/kopf-go/kopf/generator/manifests"
	"github.com/kopf-go/kopf/internal/buildinfo"
	"github.com/kopf-go/kopf/templates"
)

// GoVersion is the go directive of scaffolded modules: the runtime
// module's (client-go's), so that an operator needs no newer Go.
const GoVersion = "1.25.0"

// KopfModule is the module path of kopf-go's runtime; KopfGenModule that
// of kopf-gen, and EnvtestModule that of kopf-go's envtest, modules of
// their own.
const (
	KopfModule    = "github.com/kopf-go/kopf"
	KopfGenModule = KopfModule + "/cmd/kopf-gen"
	EnvtestModule = KopfModule + "/envtest"
)

// ManifestsDir is where the scaffold keeps its manifests, ClientsDir its
// typed clientset and apply configurations; its main.go generates with
// GenerateOptions' settings:
//
//	//go:generate kopf-gen --manifests=config --kustomize --chart=dist/chart --deepcopy --clients=pkg/generated
const (
	ManifestsDir = "config"
	ClientsDir   = "pkg/generated"
	ChartDir     = "dist/chart"
)

// GenerateOptions are the generator's options for a scaffolded repository
// in dir, as its //go:generate line and `make verify` give them.
func GenerateOptions(dir string) generator.Options {
	return generator.Options{Dir: dir, Manifests: ManifestsDir, Kustomize: true, Chart: ChartDir, DeepCopy: true, Clients: ClientsDir}
}

// Options are init's inputs.
type Options struct {
	// Dir is the directory of the new repository; it is created if needed.
	Dir string
	// Module, Group, Version, Kind and Plural describe the operator and
	// its resource; Plural defaults to DefaultPlural(Kind).
	Module, Group, Version, Kind, Plural string
	// Namespace is where the Deployment runs; "" means "default".
	Namespace string
	// KopfVersion is the version of kopf-go to require; "" means
	// DefaultKopfVersion(), or v0.0.0 with KopfReplace.
	KopfVersion string
	// KopfReplace, if set, is a directory holding kopf-go, for a replace
	// directive (an unpublished kopf-go, or development of kopf-go
	// itself); Validate makes it absolute, and go.mod names it relative to
	// Dir.
	KopfReplace string
	// Force overwrites existing files that differ.
	Force bool
	// Webhooks scaffolds admission webhooks (see the package doc).
	Webhooks bool
	// Scope is the kind's scope, Namespaced or Cluster (Validate accepts
	// either in lower case too); "" means Namespaced.
	Scope string
	// NoSpec and NoStatus scaffold a type without a Spec field (its data
	// fields at the top level), and without a Status field and the
	// status subresource (see the package doc).
	NoSpec, NoStatus bool
}

// The scopes of Options.Scope.
const (
	Namespaced = "Namespaced"
	Cluster    = "Cluster"
)

// Status is what became of a file.
type Status int

// The statuses of files.
const (
	// Created files did not exist.
	Created Status = iota
	// Unchanged files already had the rendered content.
	Unchanged
	// Kept is a go.mod of the same module, left as the go command keeps it.
	Kept
	// Conflict files exist with other content and were left alone.
	Conflict
	// Overwritten files existed with other content and were replaced (Force).
	Overwritten
	// Updated is a go.mod of the same module whose kopf-go requirements
	// and replacements were made what the options say (Force).
	Updated
)

func (s Status) String() string {
	return [...]string{"created", "unchanged", "kept", "conflict", "overwritten", "updated"}[s]
}

// Result lists the files of the scaffold, by path relative to Dir with
// forward slashes, in sorted order.
type Result struct {
	Files  []string
	Status map[string]Status
}

// Conflicts returns the files left alone because they differ.
func (r *Result) Conflicts() []string {
	var out []string
	for _, f := range r.Files {
		if r.Status[f] == Conflict {
			out = append(out, f)
		}
	}
	return out
}

var (
	versionRE = regexp.MustCompile(`^v[1-9][0-9]*((alpha|beta)[1-9][0-9]*)?$`)
	kindRE    = regexp.MustCompile(`^[A-Z][A-Za-z0-9]*$`)
)

// DefaultPlural is the plural of a kind when none is given: the kind's
// English plural in lower case, as kubebuilder makes it (Widget: widgets,
// Policy: policies).
func DefaultPlural(kind string) string { return strings.ToLower(flect.Pluralize(kind)) }

// DefaultKopfVersion is the version of kopf-go's runtime that this
// kopf-gen was built with, when it was built from a published version, or
// "".
func DefaultKopfVersion() string { return buildinfo.ModuleVersion(KopfModule) }

// KopfGenVersion is the version of kopf-gen that a scaffolded Makefile
// installs: this kopf-gen's own when it was built from a published
// version (go install github.com/kopf-go/kopf/cmd/kopf-gen@v0.2.0), else
// kopfVersion (the runtime's, as the modules are tagged together), else
// "latest".
func KopfGenVersion(kopfVersion string) string {
	if v := buildinfo.ModuleVersion(KopfGenModule); v != "" {
		return v
	}
	if kopfVersion != "" && kopfVersion != "v0.0.0" {
		return kopfVersion
	}
	return "latest"
}

// Validate checks the options and fills the defaults. It reports every
// problem at once, one error per line.
func (o *Options) Validate() error {
	var errs []error
	bad := func(flag, value, format string, args ...any) {
		errs = append(errs, fmt.Errorf("--%s %q: %s", flag, value, fmt.Sprintf(format, args...)))
	}
	if o.Dir == "" {
		errs = append(errs, errors.New("the directory is missing: kopf-gen init DIR --module M --group G --version V --kind K"))
	} else if st, err := os.Stat(o.Dir); err == nil && !st.IsDir() {
		errs = append(errs, fmt.Errorf("%s is not a directory", o.Dir))
	}
	switch {
	case o.Module == "":
		errs = append(errs, errors.New("--module is required: the module path, e.g. github.com/acme/widget-operator"))
	case module.CheckImportPath(o.Module) != nil:
		bad("module", o.Module, "not a valid module path: %v", unwrapModuleErr(module.CheckImportPath(o.Module)))
	case o.Module == KopfModule || strings.HasPrefix(o.Module, KopfModule+"/"):
		bad("module", o.Module, "the operator needs a module of its own, not kopf-go's")
	}
	switch {
	case o.Group == "":
		errs = append(errs, errors.New("--group is required: the API group of the resource, a DNS name such as example.com"))
	case !manifests.IsDNSSubdomain(o.Group) || !strings.Contains(o.Group, "."):
		bad("group", o.Group, "an API group must be a lower-case DNS subdomain with at least one dot (such as example.com or widgets.acme.io)")
	}
	switch {
	case o.Version == "":
		errs = append(errs, errors.New("--version is required: the API version, such as v1, v1beta1 or v1alpha1"))
	case !versionRE.MatchString(o.Version):
		bad("version", o.Version, "an API version is v<N>, v<N>alpha<M> or v<N>beta<M>, such as v1, v1beta1 or v2alpha3")
	}
	switch {
	case o.Kind == "":
		errs = append(errs, errors.New("--kind is required: the resource's kind in CamelCase, such as Widget"))
	case !kindRE.MatchString(o.Kind):
		bad("kind", o.Kind, "a kind is CamelCase: an upper-case letter, then letters and digits (such as Widget or DatabaseClaim)")
	case strings.HasSuffix(o.Kind, "List"):
		bad("kind", o.Kind, "a kind must not end with List: %sList is the kind of lists of %[1]s", o.Kind)
	}
	if o.Plural == "" && kindRE.MatchString(o.Kind) {
		o.Plural = DefaultPlural(o.Kind)
	} else if o.Plural != "" && (!manifests.IsDNSLabel(o.Plural) || o.Plural[0] < 'a' || o.Plural[0] > 'z') {
		bad("plural", o.Plural, "a plural is lower-case letters, digits and '-', starting with a letter, at most 63 characters (such as widgets)")
	}
	switch strings.ToLower(o.Scope) {
	case "", "namespaced":
		o.Scope = Namespaced
	case "cluster":
		o.Scope = Cluster
	default:
		bad("scope", o.Scope, "a scope is Namespaced or Cluster")
	}
	if o.Namespace == "" {
		o.Namespace = "default"
	} else if !manifests.IsDNSLabel(o.Namespace) {
		bad("namespace", o.Namespace, "a namespace is a DNS label: lower-case letters, digits and '-'")
	}
	if v := o.KopfVersion; v != "" && (!semver.IsValid(v) || semver.Canonical(v) != strings.TrimSuffix(v, "+incompatible")) {
		bad("kopf-version", o.KopfVersion, "not a module version such as v0.1.0")
	}
	if o.KopfReplace != "" {
		abs, err := filepath.Abs(o.KopfReplace)
		if err != nil {
			bad("kopf-replace", o.KopfReplace, "%v", err)
		} else if _, err := os.Stat(filepath.Join(abs, "go.mod")); err != nil {
			bad("kopf-replace", o.KopfReplace, "no go.mod there: it must be a checkout of %s", KopfModule)
		} else if _, err := os.Stat(filepath.Join(abs, "envtest", "go.mod")); err != nil {
			bad("kopf-replace", o.KopfReplace, "no envtest/go.mod there: it must be a checkout of %s with its envtest module", KopfModule)
		} else {
			o.KopfReplace = abs
		}
	}
	if o.KopfVersion == "" {
		o.KopfVersion = DefaultKopfVersion()
		if o.KopfVersion == "" && o.KopfReplace != "" {
			o.KopfVersion = "v0.0.0"
		}
	}
	return errors.Join(errs...)
}

// unwrapModuleErr drops the path that module's errors repeat.
func unwrapModuleErr(err error) error {
	var ipe *module.InvalidPathError
	if errors.As(err, &ipe) && ipe.Err != nil {
		return ipe.Err
	}
	return err
}

// data is what the templates see.
type data struct {
	Module, Name, Group, Version, APIPackage, Kind, Plural, Namespace string
	GoVersion, GoMinor, KopfVersion, KopfReplace, KopfGenVersion      string
	KopfReplaceMount, CIPath, CIKopfPath                              string

	Webhooks                              bool
	Managed, WebhookPortName, WebhookRole string
	WebhookPort                           int

	Cluster, Spec, Status                   bool
	Greeting, GreetingPath, ObjectNamespace string
}

// webhookOnly are the templates rendered only with Options.Webhooks.
var webhookOnly = map[string]bool{
	"internal/handlers/webhooks.go.tmpl":         true,
	"internal/handlers/webhooks_test.go.tmpl":    true,
	"config/rbac/webhook_role_binding.yaml.tmpl": true,
	"config/webhook/kustomization.yaml.tmpl":     true,
}

// namespaceTemplate is the operator's Namespace object, rendered unless
// the operator runs in the namespace default, which always exists (and
// which make undeploy must not try to delete).
const namespaceTemplate = "config/default/namespace.yaml.tmpl"

// relativeReplace returns the directory of the replace directive: replace
// relative to dir, with forward slashes, or absolute where no relative
// path leads there (another volume).
func relativeReplace(dir, replace string) string {
	if replace == "" {
		return ""
	}
	abs, err := filepath.Abs(dir)
	if err == nil {
		if rel, err := filepath.Rel(abs, replace); err == nil {
			// go.mod wants ./ or ../ before a relative directory.
			if rel = filepath.ToSlash(rel); rel != ".." && !strings.HasPrefix(rel, "../") {
				rel = "./" + rel
			}
			return rel
		}
	}
	return filepath.ToSlash(replace)
}

// ciLayout returns where CI checks out the operator (name) and kopf-go so
// that the relative path rel leads from the one to the other: for
// ../kopf-go, the operator in name and kopf-go in kopf-go; for
// ../../src/kopf, the operator in _/name and kopf-go in src/kopf. Both are
// "" when rel does not lead out of the repository (a submodule), or leads
// to one of its parents.
func ciLayout(rel, name string) (operator, kopf string) {
	if path.IsAbs(rel) {
		return "", ""
	}
	up := 0
	rest := path.Clean(rel)
	for rest == ".." || strings.HasPrefix(rest, "../") {
		up++
		rest = strings.TrimPrefix(strings.TrimPrefix(rest, ".."), "/")
	}
	if up == 0 || rest == "" {
		return "", ""
	}
	return strings.Repeat("_/", up-1) + name, rest
}

// newData returns what the templates see for valid options.
func newData(o Options) data {
	d := data{
		Module: o.Module, Name: manifests.DefaultRoleName(o.Module), Group: o.Group, Version: o.Version,
		APIPackage: o.Version, Kind: o.Kind, Plural: o.Plural, Namespace: o.Namespace,
		GoVersion: GoVersion, GoMinor: goMinor(GoVersion),
		KopfVersion: o.KopfVersion, KopfReplace: relativeReplace(o.Dir, o.KopfReplace),
		KopfGenVersion: KopfGenVersion(o.KopfVersion),
		Webhooks:       o.Webhooks,
		Cluster:        o.Scope == Cluster, Spec: !o.NoSpec, Status: !o.NoStatus,
		Greeting: "Spec.Greeting", GreetingPath: "spec.greeting", ObjectNamespace: "default",
	}
	if o.NoSpec {
		d.Greeting, d.GreetingPath = "Greeting", "greeting"
	}
	if d.Cluster {
		d.ObjectNamespace = ""
	}
	if o.Webhooks {
		d.Managed = d.Name + "." + o.Group
		d.WebhookPort, d.WebhookPortName = manifests.WebhookTargetPort, manifests.WebhookPortName
		d.WebhookRole = manifests.WebhookRoleName(d.Name)
	}
	if d.KopfReplace != "" {
		d.KopfReplaceMount = path.Join("/src", d.KopfReplace)
		d.CIPath, d.CIKopfPath = ciLayout(d.KopfReplace, d.Name)
	}
	return d
}

// Render returns the files of the scaffold by path relative to Dir, with
// forward slashes. The options must be valid (see Validate).
func Render(o Options) (map[string][]byte, error) {
	d := newData(o)
	out := map[string][]byte{}
	err := fs.WalkDir(templates.FS, templates.Root, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		rel := strings.TrimPrefix(p, templates.Root+"/")
		if webhookOnly[rel] && !d.Webhooks || rel == namespaceTemplate && d.Namespace == "default" {
			return nil
		}
		name, ok := strings.CutSuffix(rel, ".tmpl")
		if !ok {
			return fmt.Errorf("template %s: the name does not end with .tmpl", p)
		}
		name = renderPath(name, d)
		src, err := fs.ReadFile(templates.FS, p)
		if err != nil {
			return err
		}
		t, err := template.New(rel).Option("missingkey=error").Parse(string(src))
		if err != nil {
			return fmt.Errorf("template %s: %w", p, err)
		}
		var b bytes.Buffer
		if err := t.Execute(&b, d); err != nil {
			return fmt.Errorf("template %s: %w", p, err)
		}
		content := b.Bytes()
		if strings.HasSuffix(name, ".go") {
			if content, err = format.Source(content); err != nil {
				return fmt.Errorf("template %s renders Go that does not parse: %w", p, err)
			}
		}
		if path.Base(name) == "go.mod" {
			if _, err := modfile.Parse(name, content, nil); err != nil {
				return fmt.Errorf("template %s renders an invalid go.mod: %w", p, err)
			}
		}
		out[name] = content
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// renderPath replaces the placeholders of template paths.
func renderPath(p string, d data) string {
	parts := strings.Split(p, "/")
	for i, part := range parts {
		switch {
		case part == "VERSION":
			parts[i] = d.Version
		case part == "PLURAL.yaml":
			parts[i] = d.Plural + ".yaml"
		}
	}
	return strings.Join(parts, "/")
}

func goMinor(v string) string {
	parts := strings.SplitN(v, ".", 3)
	if len(parts) < 2 {
		return v
	}
	return parts[0] + "." + parts[1]
}

// Write renders the scaffold and writes it into o.Dir (see the package
// doc for existing files). The options must be valid.
func Write(o Options) (*Result, error) {
	files, err := Render(o)
	if err != nil {
		return nil, err
	}
	res := &Result{Status: map[string]Status{}}
	for name := range files {
		res.Files = append(res.Files, name)
	}
	sort.Strings(res.Files)
	for _, name := range res.Files {
		want := files[name]
		target := filepath.Join(o.Dir, filepath.FromSlash(name))
		have, err := os.ReadFile(target)
		status := Created
		switch {
		case os.IsNotExist(err):
		case err != nil:
			return res, err
		case bytes.Equal(have, want):
			status = Unchanged
		case name == "go.mod" && sameModule(have, o.Module):
			updated, err := updateGoMod(have, o)
			switch {
			case err != nil:
				return res, fmt.Errorf("%s: %w", target, err)
			case updated == nil:
				status = Kept
			case o.Force:
				status, want = Updated, updated
			default:
				status = Conflict
			}
		case o.Force:
			status = Overwritten
		default:
			status = Conflict
		}
		res.Status[name] = status
		if status != Created && status != Overwritten && status != Updated {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return res, err
		}
		if err := os.WriteFile(target, want, 0o644); err != nil {
			return res, err
		}
	}
	return res, nil
}

// sameModule reports whether go.mod content declares the module.
func sameModule(gomod []byte, mod string) bool {
	return modfile.ModulePath(gomod) == mod
}

// updateGoMod returns gomod with the requirements and replacements of
// kopf-go's modules that the options ask for (those of go.mod.tmpl), or nil
// if it has them already. Requirements are checked only when the options
// name a version; every other line is left as the go command wrote it.
func updateGoMod(gomod []byte, o Options) ([]byte, error) {
	f, err := modfile.Parse("go.mod", gomod, nil)
	if err != nil {
		return nil, err
	}
	rel := relativeReplace(o.Dir, o.KopfReplace)
	changed := false
	for _, mod := range []string{KopfModule, EnvtestModule} {
		if o.KopfVersion != "" && requiredVersion(f, mod) != o.KopfVersion {
			if err := f.AddRequire(mod, o.KopfVersion); err != nil {
				return nil, err
			}
			changed = true
		}
		want := ""
		if rel != "" {
			want = rel + strings.TrimPrefix(mod, KopfModule)
		}
		if have := replacement(f, mod); have != want {
			if err := f.DropReplace(mod, ""); err != nil {
				return nil, err
			}
			if want != "" {
				if err := f.AddReplace(mod, "", want, ""); err != nil {
					return nil, err
				}
			}
			changed = true
		}
	}
	if !changed {
		return nil, nil
	}
	f.Cleanup()
	return f.Format()
}

// requiredVersion is the version of mod that f requires, or "".
func requiredVersion(f *modfile.File, mod string) string {
	for _, r := range f.Require {
		if r.Mod.Path == mod {
			return r.Mod.Version
		}
	}
	return ""
}

// replacement is the directory or module that f replaces every version
// of mod with, or "".
func replacement(f *modfile.File, mod string) string {
	for _, r := range f.Replace {
		if r.Old.Path == mod && r.Old.Version == "" {
			return strings.TrimSpace(r.New.Path + " " + r.New.Version)
		}
	}
	return ""
}
