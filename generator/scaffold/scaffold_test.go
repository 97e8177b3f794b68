package scaffold

import (
	"bytes"
	"go/format"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"golang.org/x/mod/modfile"
)

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
		{"namespace", func(o *Options) { o.Namespace = "Sys" }, `--namespace "Sys": a namespace is a DNS label: lower-case letters, digits and '-'`},
		{"kopf version", func(o *Options) { o.KopfVersion = "1.0" }, `--kopf-version "1.0": not a module version such as v0.1.0`},
		{"kopf replace", func(o *Options) { o.KopfReplace = t.TempDir() }, "no go.mod there: it must be a checkout of github.com/kopf-go/kopf"},
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
	root, _ := filepath.Abs("../..")
	o = valid(t.TempDir())
	o.KopfReplace = "../.."
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
	o := valid(t.TempDir())
	o.KopfReplace = "../.."
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
		"api/v1alpha1/doc.go", "api/v1alpha1/types.go", "config/manager/deployment.yaml",
		"config/rbac/role_binding.yaml", "config/rbac/service_account.yaml", "config/samples/widgets.yaml",
		"go.mod", "handlers.go", "handlers_test.go", "main.go",
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
		len(mf.Require) != 1 || mf.Require[0].Mod.Version != "v0.0.0" || len(mf.Replace) != 1 || mf.Replace[0].New.Path != o.KopfReplace {
		t.Errorf("go.mod:\n%s", files["go.mod"])
	}
	if bytes.Contains(files["Makefile"], []byte("KOPF_GEN_VERSION")) {
		t.Errorf("the Makefile pins a kopf-gen version though it builds kopf-gen from the checkout:\n%s", files["Makefile"])
	}
	for name, wants := range map[string][]string{
		"main.go":               {"//go:generate kopf-gen --manifests=config --deepcopy --clients=pkg/generated\n", "os.Exit(kopf.Main(Register))"},
		"handlers.go":           {"//kopf:on.create example.com/v1alpha1/widgets\n", "//kopf:on.update example.com/v1alpha1/widgets\n", "//kopf:on.delete example.com/v1alpha1/widgets\n"},
		"api/v1alpha1/types.go": {"//kopf:resource example.com/v1alpha1/widgets\ntype Widget struct", "// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object\n"},
		"api/v1alpha1/doc.go":   {"// +k8s:deepcopy-gen=package\n", "package v1alpha1\n"},
		"Dockerfile":            {"FROM golang:1.25 AS build", "CGO_ENABLED=0", "USER 65532:65532"},
		"Makefile": {"KOPF_GEN_FLAGS := --manifests=config --deepcopy --clients=pkg/generated\n", "\t$(KOPF_GEN) verify $(KOPF_GEN_FLAGS)\n", "generate:", "build:", "test:", "run:",
			"kopf-gen:\n\tcd " + o.KopfReplace + "/cmd/kopf-gen && $(GO) build -o $(KOPF_GEN) .\n"},
		".github/workflows/ci.yml":      {"run: make verify", "run: make test"},
		"config/rbac/role_binding.yaml": {"  name: widget-operator\n", "    namespace: default\n"},
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
		{kopfVersion: "v0.3.1", require: "require github.com/kopf-go/kopf v0.3.1\n", install: "KOPF_GEN_VERSION ?= v0.3.1\n"},
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
		if strings.Contains(makefile, "$(GO) build -o $(KOPF_GEN)") {
			t.Errorf("%q: the Makefile builds kopf-gen from a checkout:\n%s", tc.kopfVersion, makefile)
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
	handlers := filepath.Join(dir, "handlers.go")
	if err := os.WriteFile(handlers, []byte("package main\n// mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "Dockerfile")); err != nil {
		t.Fatal(err)
	}
	res, err = Write(o)
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Conflicts(); !reflect.DeepEqual(got, []string{"handlers.go"}) {
		t.Errorf("conflicts %v", got)
	}
	if res.Status["go.mod"] != Kept || res.Status["Dockerfile"] != Created || res.Status["main.go"] != Unchanged {
		t.Errorf("statuses %v", res.Status)
	}
	if b, _ := os.ReadFile(handlers); string(b) != "package main\n// mine\n" {
		t.Error("a conflicting file was overwritten")
	}
	// A go.mod of another module is a conflict too.
	if err := os.WriteFile(gomod, []byte("module example.com/other\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, _ = Write(o)
	if got := res.Conflicts(); !reflect.DeepEqual(got, []string{"go.mod", "handlers.go"}) {
		t.Errorf("conflicts %v", got)
	}
	o.Force = true
	res, err = Write(o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status["handlers.go"] != Overwritten || res.Status["go.mod"] != Overwritten || len(res.Conflicts()) != 0 {
		t.Errorf("statuses with force: %v", res.Status)
	}
	if b, _ := os.ReadFile(handlers); !strings.Contains(string(b), "//kopf:on.create") {
		t.Error("force did not restore handlers.go")
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
