package main

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// goIn runs the go command (or another) in dir and fails the test on error.
func goIn(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// snapshot reads every file of a tree but bin/.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if e.IsDir() {
			if rel == "bin" {
				return filepath.SkipDir
			}
			return nil
		}
		b, err := os.ReadFile(p)
		out[filepath.ToSlash(rel)] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestInit scaffolds an operator repository against this checkout and
// takes it through what its user and its CI do: tidy, build, vet, test,
// go generate with the kopf-gen its Makefile builds, verify, make; checks
// that its module graph holds none of kopf-gen's dependencies; then re-runs
// init without and with --force.
func TestInit(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a scaffolded repository (go mod tidy, go build, kopf-gen)")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "widget-operator")
	args := []string{"init", dir, "--module", "github.com/acme/widget-operator", "--group", "example.com",
		"--version", "v1alpha1", "--kind", "Widget", "--kopf-replace", root}
	code, out, errOut := kopfGen(t, args...)
	if code != 0 || errOut != "" {
		t.Fatalf("init: exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{
		"created     go.mod\n", "created     main.go\n", "created     handlers.go\n", "created     api/v1alpha1/types.go\n",
		"created     Dockerfile\n", "created     Makefile\n", "created     README.md\n", "created     .github/workflows/ci.yml\n",
		"running     go mod tidy\n",
		"generated   zz_generated.kopf.go\n", "generated   api/v1alpha1/zz_generated.deepcopy.go\n",
		"generated   config/crd/example.com_widgets.yaml\n", "generated   config/rbac/role.yaml\n",
		"generated   api/v1alpha1/zz_generated.register.go\n", "generated   pkg/generated/clientset/versioned/clientset.go\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("init's output lacks %q:\n%s", want, out)
		}
	}

	// It builds, vets and tests as it is.
	goIn(t, dir, nil, "go", "mod", "tidy")
	goIn(t, dir, nil, "go", "build", "./...")
	goIn(t, dir, nil, "go", "vet", "./...")
	goIn(t, dir, nil, "go", "test", "./...")

	// It requires the runtime only: kopf-gen is a binary in bin/, not a
	// tool of its module.
	assertLean(t, dir)

	// go generate with the kopf-gen that the Makefile builds (from this
	// checkout, as go.mod replaces kopf-go with it) changes nothing, and
	// verify passes.
	before := snapshot(t, dir)
	bin := filepath.Join(dir, "bin")
	if _, err := exec.LookPath("make"); err == nil {
		goIn(t, dir, nil, "make", "kopf-gen")
	} else {
		goIn(t, ".", nil, "go", "build", "-o", filepath.Join(bin, "kopf-gen"), ".")
	}
	goIn(t, dir, []string{"PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH")}, "go", "generate", "./...")
	if after := snapshot(t, dir); !reflect.DeepEqual(before, after) {
		t.Errorf("go generate changed the scaffold")
	}
	goIn(t, dir, nil, filepath.Join(bin, "kopf-gen"), "verify", "--manifests=config", "--deepcopy", "--clients=pkg/generated")
	if _, err := exec.LookPath("make"); err == nil {
		goIn(t, dir, nil, "make", "verify", "build", "test")
	} else {
		t.Log("no make: the Makefile is not run")
	}
	t.Chdir(dir)
	if code, out, errOut := kopfGen(t, "verify", "--manifests=config", "--deepcopy", "--clients=pkg/generated"); code != 0 {
		t.Fatalf("verify: exit %d\n%s\n%s", code, out, errOut)
	}

	// Again: nothing changes.
	before = snapshot(t, dir)
	code, out, errOut = kopfGen(t, args...)
	if code != 0 || errOut != "" || strings.Contains(out, "created") || !strings.Contains(out, "kept        go.mod\n") {
		t.Fatalf("init again: exit %d\n%s\n%s", code, out, errOut)
	}
	if after := snapshot(t, dir); !reflect.DeepEqual(before, after) {
		t.Errorf("init again changed the repository")
	}

	// A user's edit is a conflict: left alone, reported, exit status 1.
	handlers := filepath.Join(dir, "handlers.go")
	edited := before["handlers.go"] + "\n// A user's edit.\n"
	write(t, handlers, edited)
	code, out, errOut = kopfGen(t, append(args, "--skip-generate")...)
	if code != 1 || !strings.Contains(out, "conflict    handlers.go\n") ||
		errOut != "kopf-gen: 1 file exists and differs from its template; left alone (--force overwrites): handlers.go\n" {
		t.Errorf("init over an edit: exit %d\n%s\n%s", code, out, errOut)
	}
	if b, _ := os.ReadFile(handlers); string(b) != edited {
		t.Error("init overwrote a user's file without --force")
	}
	code, out, errOut = kopfGen(t, append(args, "--force")...)
	if code != 0 || !strings.Contains(out, "overwritten handlers.go\n") {
		t.Errorf("init --force: exit %d\n%s\n%s", code, out, errOut)
	}
	if after := snapshot(t, dir); !reflect.DeepEqual(before, after) {
		t.Errorf("init --force did not restore the repository")
	}
}

// kopfGenOnly are modules that kopf-gen needs and an operator must not:
// none may be in a scaffolded operator's module graph (go list -m all).
var kopfGenOnly = []string{
	"github.com/kopf-go/kopf/cmd/kopf-gen",
	"github.com/kopf-go/kopf/generator",
	"sigs.k8s.io/controller-tools",
	"github.com/dave/jennifer",
	"k8s.io/code-generator",
	"k8s.io/apiextensions-apiserver",
	"github.com/gobuffalo/flect",
}

// kopfGenPackages are import path prefixes of kopf-gen's dependencies of
// which a scaffolded operator must build no package (go list -deps -test).
// golang.org/x/tools is among them but not among kopfGenOnly: it is in
// every client-go user's module graph, as golang.org/x/text's go.mod
// requires it, though no package of it is built; so is code-generator's
// k8s.io/gengo/v2, which k8s.io/kube-openapi's go.mod requires.
var kopfGenPackages = []string{"golang.org/x/tools/", "golang.org/x/mod/", "k8s.io/gengo/"}

// assertLean fails the test if the operator module in dir has kopf-gen's
// dependencies in its module graph or builds one of their packages.
func assertLean(t *testing.T, dir string) {
	t.Helper()
	mods := strings.Fields(goIn(t, dir, nil, "go", "list", "-m", "-f", "{{.Path}}", "all"))
	if !slices.Contains(mods, "github.com/kopf-go/kopf") || !slices.Contains(mods, "k8s.io/client-go") {
		t.Fatalf("go list -m all lacks the runtime:\n%s", strings.Join(mods, "\n"))
	}
	for _, mod := range kopfGenOnly {
		if slices.Contains(mods, mod) {
			t.Errorf("the operator's go list -m all lists %s, a dependency of kopf-gen", mod)
		}
	}
	for _, pkg := range strings.Fields(goIn(t, dir, nil, "go", "list", "-deps", "-test", "./...")) {
		for _, prefix := range kopfGenPackages {
			if strings.HasPrefix(pkg, prefix) {
				t.Errorf("the operator builds %s, a package of kopf-gen's dependencies", pkg)
			}
		}
	}
}

// TestInitErrors checks init's messages: every mistake at once, exit 1.
func TestInitErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{{
		args: []string{"init"},
		want: "kopf-gen: init takes one directory, got 0 arguments: kopf-gen init DIR --module M --group G --version V --kind K\n",
	}, {
		args: []string{"init", t.TempDir()},
		want: "kopf-gen: --module is required: the module path, e.g. github.com/acme/widget-operator\n" +
			"kopf-gen: --group is required: the API group of the resource, a DNS name such as example.com\n" +
			"kopf-gen: --version is required: the API version, such as v1, v1beta1 or v1alpha1\n" +
			"kopf-gen: --kind is required: the resource's kind in CamelCase, such as Widget\n",
	}, {
		args: []string{"init", t.TempDir(), "--module", "a b", "--group", "Example", "--version", "1", "--kind", "widget", "--plural", "Widgets"},
		want: "kopf-gen: --module \"a b\": not a valid module path: invalid char ' '\n" +
			"kopf-gen: --group \"Example\": an API group must be a lower-case DNS subdomain with at least one dot (such as example.com or widgets.acme.io)\n" +
			"kopf-gen: --version \"1\": an API version is v<N>, v<N>alpha<M> or v<N>beta<M>, such as v1, v1beta1 or v2alpha3\n" +
			"kopf-gen: --kind \"widget\": a kind is CamelCase: an upper-case letter, then letters and digits (such as Widget or DatabaseClaim)\n" +
			"kopf-gen: --plural \"Widgets\": a plural is lower-case letters, digits and '-', starting with a letter, at most 63 characters (such as widgets)\n",
	}, {
		args: []string{"generate", "--manifests=config", "--role-name=Bad_Name"},
		want: "kopf-gen: --role-name \"Bad_Name\": not a valid object name: lower-case letters, digits, '-' and '.', starting and ending with a letter or digit\n",
	}, {
		args: []string{"verify", "--peering"},
		want: "kopf-gen: --role-name and --peering apply to the role that --manifests generates: add --manifests DIR\n",
	}} {
		code, out, errOut := kopfGen(t, tc.args...)
		if code != 1 || out != "" || errOut != tc.want {
			t.Errorf("%v: exit %d, stdout %q, stderr:\n%s\nwant:\n%s", tc.args, code, out, errOut, tc.want)
		}
	}
}

// TestManifestsFlags runs the bare command with --manifests, as a
// //go:generate line does, and verify with the same flags.
func TestManifestsFlags(t *testing.T) {
	dir := chdirModule(t, map[string]string{"op/op.go": strings.Replace(handler, "kopfexamples", "kopf.dev/v1/kopfexamples", 1)})
	if code, out, errOut := kopfGen(t, "--manifests=config", "--peering"); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	role, err := os.ReadFile(filepath.Join(dir, "config", "rbac", "role.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"  name: m-operator\n", "    resources: [\"kopfexamples\"]\n    verbs: [\"list\", \"watch\", \"patch\"]\n", "clusterkopfpeerings"} {
		if !strings.Contains(string(role), want) {
			t.Errorf("role lacks %q:\n%s", want, role)
		}
	}
	if code, out, _ := kopfGen(t, "verify", "--manifests=config", "--peering"); code != 0 || out != "" {
		t.Errorf("verify: exit %d\n%s", code, out)
	}
	// Without --peering the role differs.
	code, out, errOut := kopfGen(t, "verify", "--manifests=config")
	if code != 1 || !strings.Contains(out, "--- a/config/rbac/role.yaml\n+++ b/config/rbac/role.yaml\n") ||
		errOut != "kopf-gen: 1 generated file is out of date; run kopf-gen generate\n" {
		t.Errorf("verify without --peering: exit %d\n%s\n%s", code, out, errOut)
	}
}
