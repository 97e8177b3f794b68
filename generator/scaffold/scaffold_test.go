package scaffold

import (
	"bytes"
	"go/format"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"

	"github.com/kopf-go/kopf/templates"
)

// fakeKopf makes a directory that passes for a kopf-go checkout: the
// runtime's go.mod and its envtest module's.
func fakeKopf(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{"go.mod", "envtest/go.mod"} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("module github.com/kopf-go/kopf\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func valid(dir string) Options {
	return Options{Dir: dir, Module: "github.com/acme/widget-operator", Group: "example.com", Version: "v1alpha1", Kind: "Widget"}
}

func TestValidate(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		edit func(*Options)
		want string
	}{
		{"valid", func(*Options) {}, ""},
		{"nothing", func(o *Options) { *o = Options{} },
			"the directory is missing: kopf-gen init DIR --module M --group G --version V --kind K\n" +
				"--module is required: the module path, e.g. github.com/acme/widget-operator\n" +
				"--group is required: the API group of the resource, a DNS name such as example.com\n" +
				"--version is required: the API version, such as v1, v1beta1 or v1alpha1\n" +
				"--kind is required: the resource's kind in CamelCase, such as Widget"},
		{"dir is a file", func(o *Options) { o.Dir = file }, file + " is not a directory"},
		{"module", func(o *Options) { o.Module = "github.com/acme/bad path" }, `--module "github.com/acme/bad path": not a valid module path: invalid char ' '`},
		{"kopf's module", func(o *Options) { o.Module = "github.com/kopf-go/kopf/mine" }, `--module "github.com/kopf-go/kopf/mine": the operator needs a module of its own, not kopf-go's`},
		{"group case", func(o *Options) { o.Group = "Example.com" }, `--group "Example.com": an API group must be a lower-case DNS subdomain with at least one dot (such as example.com or widgets.acme.io)`},
		{"group dot", func(o *Options) { o.Group = "example" }, `--group "example": an API group must be a lower-case DNS subdomain with at least one dot (such as example.com or widgets.acme.io)`},
		{"version", func(o *Options) { o.Version = "v1.0" }, `--version "v1.0": an API version is v<N>, v<N>alpha<M> or v<N>beta<M>, such as v1, v1beta1 or v2alpha3`},
		{"version zero", func(o *Options) { o.Version = "v0" }, `--version "v0": an API version is v<N>, v<N>alpha<M> or v<N>beta<M>, such as v1, v1beta1 or v2alpha3`},
		{"kind", func(o *Options) { o.Kind = "widget" }, `--kind "widget": a kind is CamelCase: an upper-case letter, then letters and digits (such as Widget or DatabaseClaim)`},
		{"kind list", func(o *Options) { o.Kind = "WidgetList" }, `--kind "WidgetList": a kind must not end with List: WidgetListList is the kind of lists of WidgetList`},
		{"plural", func(o *Options) { o.Plural = "Widgets" }, `--plural "Widgets": a plural is lower-case letters, digits and '-', starting with a letter, at most 63 characters (such as widgets)`},
		{"scope", func(o *Options) { o.Scope = "Global" }, `--scope "Global": a scope is Namespaced or Cluster`},
		{"scope in lower case", func(o *Options) { o.Scope = "cluster" }, ""},
		{"namespace", func(o *Options) { o.Namespace = "Sys" }, `--namespace "Sys": a namespace is a DNS label: lower-case letters, digits and '-'`},
		{"kopf version", func(o *Options) { o.KopfVersion = "1.0" }, `--kopf-version "1.0": not a module version such as v0.1.0`},
		{"kopf replace", func(o *Options) { o.KopfReplace = t.TempDir() }, "no go.mod there: it must be a checkout of github.com/kopf-go/kopf"},
		{"kopf replace without envtest", func(o *Options) {
			o.KopfReplace = fakeKopf(t)
			os.RemoveAll(filepath.Join(o.KopfReplace, "envtest"))
		}, "no envtest/go.mod there: it must be a checkout of github.com/kopf-go/kopf with its envtest module"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := valid(t.TempDir())
			tc.edit(&o)
			err := o.Validate()
			got := ""
			if err != nil {
				got = err.Error()
			}
			if tc.want == "" && got != "" || tc.want != "" && !strings.HasSuffix(got, tc.want) {
				t.Errorf("got:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}
}

func TestDefaults(t *testing.T) {
	o := valid(t.TempDir())
	o.Kind = "Policy"
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	if o.Plural != "policies" || o.Namespace != "default" {
		t.Errorf("plural %q, namespace %q", o.Plural, o.Namespace)
	}
	root := fakeKopf(t)
	t.Chdir(filepath.Dir(root))
	o = valid(t.TempDir())
	o.KopfReplace = filepath.Base(root)
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	if o.KopfReplace != root || o.KopfVersion != "v0.0.0" {
		t.Errorf("replace %q, version %q", o.KopfReplace, o.KopfVersion)
	}
}

// TestRender checks the rendered repository: the expected files, gofmt-clean
// Go, a go.mod with the replace and no tool directive, a Makefile that
// builds kopf-gen from the checkout, the markers.
func TestRender(t *testing.T) {
	work := t.TempDir()
	o := valid(filepath.Join(work, "widget-operator"))
	o.KopfReplace = filepath.Join(work, "kopf-go")
	if err := os.Rename(fakeKopf(t), o.KopfReplace); err != nil {
		t.Fatal(err)
	}
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	files, err := Render(o)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for name := range files {
		names = append(names, name)
	}
	want := []string{
		".dockerignore", ".github/workflows/ci.yml", ".gitignore", "Dockerfile", "Makefile", "README.md",
		"api/v1alpha1/doc.go", "api/v1alpha1/types.go", "config/default/kustomization.yaml", "config/default/metrics_service.yaml",
		"config/manager/deployment.yaml", "config/manager/kustomization.yaml", "config/rbac/kustomization.yaml",
		"config/rbac/metrics_auth_role.yaml", "config/rbac/metrics_auth_role_binding.yaml", "config/rbac/metrics_reader_role.yaml",
		"config/rbac/role_binding.yaml", "config/rbac/service_account.yaml", "config/samples/widgets.yaml",
		"go.mod", "hack/cluster/main.go", "internal/handlers/handlers.go", "internal/handlers/handlers_test.go", "main.go", "test/e2e/e2e_test.go",
	}
	if !sameSet(names, want) {
		t.Errorf("files %v, want %v", names, want)
	}
	for name, content := range files {
		if strings.HasSuffix(name, ".go") {
			if formatted, err := format.Source(content); err != nil || !bytes.Equal(formatted, content) {
				t.Errorf("%s is not gofmt-clean: %v", name, err)
			}
		}
		if bytes.Contains(content, []byte("<no value>")) {
			t.Errorf("%s has an empty template value", name)
		}
	}
	mf, err := modfile.Parse("go.mod", files["go.mod"], nil)
	if err != nil {
		t.Fatal(err)
	}
	if mf.Module.Mod.Path != o.Module || mf.Go.Version != GoVersion || len(mf.Tool) != 0 ||
		len(mf.Require) != 2 || mf.Require[0].Mod != (module.Version{Path: KopfModule, Version: "v0.0.0"}) ||
		mf.Require[1].Mod != (module.Version{Path: EnvtestModule, Version: "v0.0.0"}) ||
		len(mf.Replace) != 2 || mf.Replace[0].New.Path != "../kopf-go" || mf.Replace[1].New.Path != "../kopf-go/envtest" {
		t.Errorf("go.mod:\n%s", files["go.mod"])
	}
	if bytes.Contains(files["Makefile"], []byte("KOPF_GEN_VERSION")) {
		t.Errorf("the Makefile pins a kopf-gen version though it builds kopf-gen from the checkout:\n%s", files["Makefile"])
	}
	for name, wants := range map[string][]string{
		"main.go": {"//go:generate kopf-gen --manifests=config --kustomize --chart=dist/chart --deepcopy --clients=pkg/generated\n", "os.Exit(kopf.Main(handlers.Register))",
			"\"github.com/acme/widget-operator/internal/handlers\"\n"},
		"internal/handlers/handlers.go": {"package handlers\n", "//kopf:on.create example.com/v1alpha1/widgets\n",
			"//kopf:on.update example.com/v1alpha1/widgets\n", "//kopf:on.delete example.com/v1alpha1/widgets\n"},
		"test/e2e/e2e_test.go": {"envtest.WithCRDs(\"../../config/crd\")", "envtest.WithControllers()", "env := controlPlane(t)", "kopftest.Start(t, env.Config, handlers.Register)", "op.WaitOutcome(kopftest.Match{Name: name, Handler: \"create\", Result: kopftest.Succeeded}, timeout)",
			"os.ReadFile(\"../../config/samples/widgets.yaml\")", "t.Skipf(\"no control plane for the end-to-end test (make test-e2e builds one with kopf-gen envtest and runs it): %v\", err)"},
		"api/v1alpha1/types.go": {"//kopf:resource example.com/v1alpha1/widgets\ntype Widget struct", "// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object\n"},
		"api/v1alpha1/doc.go":   {"// +k8s:deepcopy-gen=package\n", "package v1alpha1\n"},
		"Dockerfile": {"# syntax=docker/dockerfile:1\n", "FROM golang:1.25 AS build", "CGO_ENABLED=0", "USER 65532:65532",
			"RUN --mount=type=bind,from=kopf-go,target=/kopf-go \\\n"},
		"Makefile": {"KOPF_GEN_FLAGS := --manifests=config --kustomize --chart=dist/chart --deepcopy --clients=pkg/generated\n",
			"\t$(KOPF_GEN) kustomize config/default --image $(IMG_NAME)=$(IMG) -o dist/install.yaml\n", "\t$(KOPF_GEN) verify $(KOPF_GEN_FLAGS)\n",
			"CLUSTER_CRDS ?= config/crd\n", "-kubeconfig $(BIN)/kubeconfig -crds $(CLUSTER_CRDS)\n",
			"\t$(KOPF_GEN) $(KOPF_GEN_FLAGS)\n\tPATH=\"$(BIN):$$PATH\" $(GO) generate -skip '^//go:generate kopf-gen( |$$)' ./...\n", "KOPF_GO_DIR := ../kopf-go\n",
			"kopf-gen:\n\tcd $(KOPF_GO_DIR)/cmd/kopf-gen && $(GO) build -o $(KOPF_GEN) .\n",
			"\tdocker build --build-context kopf-go=$(KOPF_GO_DIR) -t $(IMG) .\n",
			"\tKUBEBUILDER_ASSETS=\"$$assets\" KOPF_E2E=1 KOPF_E2E_CONTROLLERS=$(ENVTEST_CONTROLLERS) $(GO) test -count=1 -v ./test/e2e/...\n", "$(if $(ENVTEST_CONTROLLERS),--controllers)"},
		".github/workflows/ci.yml": {"run: make lint", "run: make test", "run: make test-e2e",
			"        working-directory: widget-operator\n", "          path: widget-operator\n",
			"          repository: kopf-go/kopf\n          path: kopf-go\n", "go-version-file: widget-operator/go.mod\n"},
		"config/rbac/role_binding.yaml":     {"  name: widget-operator\n", "    namespace: default\n"},
		"config/default/kustomization.yaml": {"namespace: default\nresources:\n  - ../crd\n  - ../rbac\n  - ../manager\n  - metrics_service.yaml\n"},
	} {
		for _, w := range wants {
			if !strings.Contains(string(files[name]), w) {
				t.Errorf("%s lacks %q", name, w)
			}
		}
	}
}

// TestRenderPinned checks the files that pin kopf-go's version when no
// checkout replaces it: go.mod requires the runtime at that version and
// nothing of kopf-gen, and the Makefile installs kopf-gen at the same
// version with go install, as kubebuilder's installs controller-gen.
func TestRenderPinned(t *testing.T) {
	for _, tc := range []struct {
		kopfVersion, require, install string
	}{
		{kopfVersion: "v0.3.1", require: "require (\n\tgithub.com/kopf-go/kopf v0.3.1\n\tgithub.com/kopf-go/kopf/envtest v0.3.1\n)\n", install: "KOPF_GEN_VERSION ?= v0.3.1\n"},
		{kopfVersion: "", require: "", install: "KOPF_GEN_VERSION ?= latest\n"},
	} {
		o := valid(t.TempDir())
		o.KopfVersion = tc.kopfVersion
		if err := o.Validate(); err != nil {
			t.Fatal(err)
		}
		files, err := Render(o)
		if err != nil {
			t.Fatal(err)
		}
		mf, err := modfile.Parse("go.mod", files["go.mod"], nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(mf.Tool) != 0 || len(mf.Replace) != 0 || (tc.require == "") != (len(mf.Require) == 0) ||
			!strings.Contains(string(files["go.mod"]), tc.require) || strings.Contains(string(files["go.mod"]), "kopf-gen v") {
			t.Errorf("%q: go.mod:\n%s", tc.kopfVersion, files["go.mod"])
		}
		makefile := string(files["Makefile"])
		for _, want := range []string{
			tc.install,
			"kopf-gen: $(KOPF_GEN)-$(KOPF_GEN_VERSION)\n\tln -sf $(notdir $<) $(KOPF_GEN)\n",
			"\tGOBIN=$(BIN) $(GO) install github.com/kopf-go/kopf/cmd/kopf-gen@$(KOPF_GEN_VERSION)\n",
		} {
			if !strings.Contains(makefile, want) {
				t.Errorf("%q: the Makefile lacks %q:\n%s", tc.kopfVersion, want, makefile)
			}
		}
		if strings.Contains(makefile, "$(GO) build -o $(KOPF_GEN)") || strings.Contains(makefile, "KOPF_GO_DIR") {
			t.Errorf("%q: the Makefile builds kopf-gen from a checkout:\n%s", tc.kopfVersion, makefile)
		}
		for name, checkout := range map[string]string{"Dockerfile": "from=kopf-go", ".github/workflows/ci.yml": "repository: kopf-go/kopf"} {
			if strings.Contains(string(files[name]), checkout) {
				t.Errorf("%q: %s gets a kopf-go checkout:\n%s", tc.kopfVersion, name, files[name])
			}
		}
	}
}

// TestWrite checks what becomes of existing files.
func TestWrite(t *testing.T) {
	dir := t.TempDir()
	o := valid(dir)
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	res, err := Write(o)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range res.Files {
		if res.Status[f] != Created {
			t.Errorf("%s: %s, want created", f, res.Status[f])
		}
	}
	// The go command rewrites go.mod; the user edits handlers.go.
	gomod := filepath.Join(dir, "go.mod")
	if err := os.WriteFile(gomod, []byte("module github.com/acme/widget-operator\n\ngo 1.26.0\n\nrequire example.com/x v1.0.0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	handlers := filepath.Join(dir, "internal", "handlers", "handlers.go")
	if err := os.WriteFile(handlers, []byte("package handlers\n// mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "Dockerfile")); err != nil {
		t.Fatal(err)
	}
	res, err = Write(o)
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Conflicts(); !reflect.DeepEqual(got, []string{"internal/handlers/handlers.go"}) {
		t.Errorf("conflicts %v", got)
	}
	if res.Status["go.mod"] != Kept || res.Status["Dockerfile"] != Created || res.Status["main.go"] != Unchanged {
		t.Errorf("statuses %v", res.Status)
	}
	if b, _ := os.ReadFile(handlers); string(b) != "package handlers\n// mine\n" {
		t.Error("a conflicting file was overwritten")
	}
	// A go.mod of another module is a conflict too.
	if err := os.WriteFile(gomod, []byte("module example.com/other\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, _ = Write(o)
	if got := res.Conflicts(); !reflect.DeepEqual(got, []string{"go.mod", "internal/handlers/handlers.go"}) {
		t.Errorf("conflicts %v", got)
	}
	o.Force = true
	res, err = Write(o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status["internal/handlers/handlers.go"] != Overwritten || res.Status["go.mod"] != Overwritten || len(res.Conflicts()) != 0 {
		t.Errorf("statuses with force: %v", res.Status)
	}
	if b, _ := os.ReadFile(handlers); !strings.Contains(string(b), "//kopf:on.create") {
		t.Error("force did not restore handlers.go")
	}
}

// TestWriteGoMod checks that a re-run applies new kopf-go flags to a
// go.mod of the same module: a conflict without Force, only the kopf-go
// lines changed with it, and nothing to do when they are as asked.
func TestWriteGoMod(t *testing.T) {
	work := t.TempDir()
	kopf := filepath.Join(work, "kopf-go")
	if err := os.Rename(fakeKopf(t), kopf); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(work, "op")
	gomod := filepath.Join(dir, "go.mod")
	// What go mod tidy makes of a scaffold pinned at v0.3.1.
	tidied := "module github.com/acme/widget-operator\n\ngo 1.25.0\n\nrequire (\n\tgithub.com/kopf-go/kopf v0.3.1\n\tgithub.com/kopf-go/kopf/envtest v0.3.1\n\tk8s.io/client-go v0.35.4\n)\n\nrequire example.com/indirect v1.0.0 // indirect\n"
	withReplace := "module github.com/acme/widget-operator\n\ngo 1.25.0\n\nrequire (\n\tgithub.com/kopf-go/kopf v0.0.0\n\tgithub.com/kopf-go/kopf/envtest v0.0.0\n\tk8s.io/client-go v0.35.4\n)\n\nrequire example.com/indirect v1.0.0 // indirect\n\nreplace github.com/kopf-go/kopf => ../kopf-go\n\nreplace github.com/kopf-go/kopf/envtest => ../kopf-go/envtest\n"
	for _, tc := range []struct {
		name, have string
		edit       func(*Options)
		status     Status
		want       string
	}{
		{"same version", tidied, func(o *Options) { o.KopfVersion = "v0.3.1" }, Kept, tidied},
		{"no version asked", tidied, func(o *Options) {}, Kept, tidied},
		{"new version", tidied, func(o *Options) { o.KopfVersion = "v0.4.0"; o.Force = true }, Updated,
			strings.ReplaceAll(tidied, "v0.3.1", "v0.4.0")},
		{"new version without force", tidied, func(o *Options) { o.KopfVersion = "v0.4.0" }, Conflict, tidied},
		{"replace added", tidied, func(o *Options) { o.KopfReplace = kopf; o.Force = true }, Updated, withReplace},
		{"replace added without force", tidied, func(o *Options) { o.KopfReplace = kopf }, Conflict, tidied},
		{"replace kept", withReplace, func(o *Options) { o.KopfReplace = kopf }, Kept, withReplace},
		{"replace dropped", withReplace, func(o *Options) { o.KopfVersion = "v0.3.1"; o.Force = true }, Updated, tidied},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(gomod, []byte(tc.have), 0o644); err != nil {
				t.Fatal(err)
			}
			o := valid(dir)
			tc.edit(&o)
			if err := o.Validate(); err != nil {
				t.Fatal(err)
			}
			res, err := Write(o)
			if err != nil {
				t.Fatal(err)
			}
			if res.Status["go.mod"] != tc.status {
				t.Errorf("go.mod: %s, want %s", res.Status["go.mod"], tc.status)
			}
			if b, _ := os.ReadFile(gomod); string(b) != tc.want {
				t.Errorf("go.mod:\n%s\nwant:\n%s", b, tc.want)
			}
		})
	}
}

func TestCILayout(t *testing.T) {
	for _, tc := range []struct{ rel, operator, kopf string }{
		{"../kopf-go", "op", "kopf-go"},
		{"../../src/kopf", "_/op", "src/kopf"},
		{"../../../a/b", "_/_/op", "a/b"},
		{"./third_party/kopf-go", "", ""},
		{"../..", "", ""},
		{"/abs/kopf-go", "", ""},
	} {
		operator, kopf := ciLayout(tc.rel, "op")
		if operator != tc.operator || kopf != tc.kopf {
			t.Errorf("%s: %q %q, want %q %q", tc.rel, operator, kopf, tc.operator, tc.kopf)
		}
		// From the operator's directory, rel leads to kopf-go's.
		if operator != "" && path.Join(operator, tc.rel) != kopf {
			t.Errorf("%s: from %s it leads to %s, not %s", tc.rel, operator, path.Join(operator, tc.rel), kopf)
		}
	}
}

func sameSet(a, b []string) bool {
	m := map[string]int{}
	for _, s := range a {
		m[s]++
	}
	for _, s := range b {
		m[s]--
	}
	for _, n := range m {
		if n != 0 {
			return false
		}
	}
	return len(a) == len(b)
}

// TestTemplatesInModuleZip checks that the path of every template can be
// part of the root module's zip (templates/... there), so that publishing
// kopf-go never fails on a template.
func TestTemplatesInModuleZip(t *testing.T) {
	err := fs.WalkDir(templates.FS, templates.Root, func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		if err := module.CheckFilePath("templates/" + p); err != nil {
			t.Errorf("%s cannot be in a module zip: %v", p, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
