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

	"golang.org/x/mod/modfile"
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

// noControlPlane is the environment of a scaffold's commands in which its
// end-to-end test finds no control plane (and skips): no KUBEBUILDER_ASSETS,
// an empty user cache; the go command keeps its build cache.
func noControlPlane(t *testing.T) []string {
	t.Helper()
	return []string{"KUBEBUILDER_ASSETS=", "XDG_CACHE_HOME=" + t.TempDir(),
		"GOCACHE=" + strings.TrimSpace(goIn(t, ".", nil, "go", "env", "GOCACHE"))}
}

// TestInit scaffolds an operator repository against this checkout and
// takes it through what its user and its CI do: tidy, build, vet, test,
// go generate with the kopf-gen its Makefile builds, verify, make; checks
// that its module graph holds none of kopf-gen's dependencies and its
// binary no package of controller-runtime; then re-runs init without and
// with --force, and with other flags; last, replaces its types
// (checkReplacedTypes). (Its end-to-end test runs in e2e/scaffold, on a
// control plane; here it must skip and say why. e2e/scaffold's TestScaffold
// relies on this test for the scaffold's make test.)
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
	noCP := noControlPlane(t)
	code, out, errOut := kopfGen(t, args...)
	if code != 0 || errOut != "" {
		t.Fatalf("init: exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{
		"created     go.mod\n", "created     main.go\n", "created     internal/handlers/handlers.go\n", "created     api/v1alpha1/types.go\n",
		"created     test/e2e/e2e_test.go\n",
		"created     Dockerfile\n", "created     Makefile\n", "created     README.md\n", "created     .github/workflows/ci.yml\n",
		"running     go mod tidy\n",
		"generated   internal/handlers/zz_generated.kopf.go\n", "generated   api/v1alpha1/zz_generated.deepcopy.go\n",
		"generated   config/crd/example.com_widgets.yaml\n", "generated   config/rbac/role.yaml\n",
		"generated   api/v1alpha1/zz_generated.register.go\n", "generated   pkg/generated/clientset/versioned/clientset.go\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("init's output lacks %q:\n%s", want, out)
		}
	}

	// go.mod replaces kopf-go with a path relative to the repository, so
	// that it works wherever both are side by side (Makefile, Dockerfile, CI).
	rel, err := filepath.Rel(dir, root)
	if err != nil {
		t.Fatal(err)
	}
	gomod, _ := os.ReadFile(filepath.Join(dir, "go.mod"))
	for _, want := range []string{"github.com/kopf-go/kopf => " + filepath.ToSlash(rel) + "\n", "github.com/kopf-go/kopf/envtest => " + filepath.ToSlash(rel) + "/envtest\n"} {
		if !strings.Contains(string(gomod), want) {
			t.Errorf("go.mod lacks %q:\n%s", want, gomod)
		}
	}

	// It builds, vets and tests as it is; without a control plane, the
	// end-to-end test skips and says why.
	goIn(t, dir, nil, "go", "mod", "tidy")
	goIn(t, dir, nil, "go", "build", "./...")
	goIn(t, dir, nil, "go", "vet", "./...")
	out = goIn(t, dir, noCP, "go", "test", "-count=1", "-v", "./...")
	for _, want := range []string{"--- PASS: TestCreate", "--- SKIP: TestWidget", "no control plane for the end-to-end test (make test-e2e builds one with kopf-gen envtest and runs it)"} {
		if !strings.Contains(out, want) {
			t.Errorf("go test -v ./... lacks %q:\n%s", want, out)
		}
	}
	// KOPF_E2E (make test-e2e) turns the skip into a failure.
	cmd := exec.Command("go", "test", "-count=1", "./test/e2e/")
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), noCP...), "KOPF_E2E=1")
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "no control plane, though KOPF_E2E is set") {
		t.Errorf("the end-to-end test with KOPF_E2E and no control plane: %v\n%s", err, out)
	}

	// It requires the runtime only: kopf-gen is a binary in bin/, not a
	// tool of its module.
	assertLean(t, dir)

	// go generate with the kopf-gen that the Makefile builds (from this
	// checkout, as go.mod replaces kopf-go with it) changes nothing, and
	// verify passes: that kopf-gen's, run by make lint (with main.go's
	// flags, as here without make), and after make manifests and fmt
	// kopf-gen's in this process.
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
	_, noMake := exec.LookPath("make")
	if noMake == nil {
		goIn(t, dir, noCP, "make", "lint", "build", "test", "manifests", "fmt")
		out := goIn(t, dir, nil, "make", "help")
		for _, target := range []string{"generate", "manifests", "fmt", "vet", "lint", "test", "test-e2e", "run",
			"install", "uninstall", "deploy", "undeploy", "build-installer", "helm-chart", "docker-build", "docker-push"} {
			if !strings.Contains(out, "\n"+target+": ") {
				t.Errorf("make help lacks %s:\n%s", target, out)
			}
		}
	} else {
		t.Log("no make: the Makefile is not run")
		goIn(t, dir, nil, filepath.Join(bin, "kopf-gen"), "verify", "--manifests=config", "--kustomize", "--chart=dist/chart", "--deepcopy", "--clients=pkg/generated")
	}
	t.Chdir(dir)
	if code, out, errOut := kopfGen(t, "verify", "--manifests=config", "--kustomize", "--chart=dist/chart", "--deepcopy", "--clients=pkg/generated"); code != 0 {
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
	handlers := filepath.Join(dir, "internal", "handlers", "handlers.go")
	edited := before["internal/handlers/handlers.go"] + "\n// A user's edit.\n"
	write(t, handlers, edited)
	code, out, errOut = kopfGen(t, append(args, "--skip-generate")...)
	if code != 1 || !strings.Contains(out, "conflict    internal/handlers/handlers.go\n") ||
		errOut != "kopf-gen: 1 file exists and differs from its template; left alone (--force overwrites): internal/handlers/handlers.go\n" {
		t.Errorf("init over an edit: exit %d\n%s\n%s", code, out, errOut)
	}
	if b, _ := os.ReadFile(handlers); string(b) != edited {
		t.Error("init overwrote a user's file without --force")
	}
	code, out, errOut = kopfGen(t, append(args, "--force")...)
	if code != 0 || !strings.Contains(out, "overwritten internal/handlers/handlers.go\n") {
		t.Errorf("init --force: exit %d\n%s\n%s", code, out, errOut)
	}
	if after := snapshot(t, dir); !reflect.DeepEqual(before, after) {
		t.Errorf("init --force did not restore the repository")
	}

	// Other flags: without --force, go.mod and the files that depend on
	// them are conflicts; --force applies them. Here: no --kopf-replace, a
	// version instead.
	pinned := append(slices.Clone(args[:len(args)-2]), "--kopf-version", "v0.9.0", "--skip-generate")
	code, out, errOut = kopfGen(t, pinned...)
	if code != 1 || !strings.Contains(out, "conflict    go.mod\n") || !strings.Contains(out, "conflict    Makefile\n") {
		t.Errorf("init with other flags: exit %d\n%s\n%s", code, out, errOut)
	}
	if after := snapshot(t, dir); !reflect.DeepEqual(before, after) {
		t.Errorf("init with other flags and without --force changed the repository")
	}
	code, out, errOut = kopfGen(t, append(pinned, "--force")...)
	if code != 0 || !strings.Contains(out, "updated     go.mod\n") || !strings.Contains(out, "overwritten Makefile\n") {
		t.Errorf("init --force with other flags: exit %d\n%s\n%s", code, out, errOut)
	}
	gomod, _ = os.ReadFile(filepath.Join(dir, "go.mod"))
	if strings.Contains(string(gomod), "replace") || !strings.Contains(string(gomod), "github.com/kopf-go/kopf v0.9.0\n") ||
		!strings.Contains(string(gomod), "github.com/kopf-go/kopf/envtest v0.9.0\n") || !strings.Contains(string(gomod), "k8s.io/client-go") {
		t.Errorf("go.mod after init --force --kopf-version v0.9.0 without --kopf-replace:\n%s", gomod)
	}
	// And back.
	code, out, errOut = kopfGen(t, append(args, "--force")...)
	if code != 0 || !strings.Contains(out, "updated     go.mod\n") {
		t.Errorf("init --force --kopf-replace again: exit %d\n%s\n%s", code, out, errOut)
	}
	after := snapshot(t, dir)
	if modLines(t, after["go.mod"]) != modLines(t, before["go.mod"]) {
		t.Errorf("init --force --kopf-replace did not restore go.mod's requirements and replacements:\n%s\nwas:\n%s", after["go.mod"], before["go.mod"])
	}
	delete(after, "go.mod")
	delete(before, "go.mod")
	if !reflect.DeepEqual(before, after) {
		t.Errorf("init --force --kopf-replace did not restore the repository")
	}

	// Types replaced by others: make generate, then make verify.
	if noMake == nil {
		checkReplacedTypes(t, dir)
	}
}

// modLines lists the requirements and replacements of a go.mod, sorted.
func modLines(t *testing.T, gomod string) string {
	t.Helper()
	f, err := modfile.Parse("go.mod", []byte(gomod), nil)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, r := range f.Require {
		lines = append(lines, "require "+r.Mod.String())
	}
	for _, r := range f.Replace {
		lines = append(lines, "replace "+r.Old.String()+" => "+r.New.String())
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// TestInitUnresolvedKopf: when go mod tidy cannot resolve kopf-go, init
// says so and names the flags that fix it.
func TestInitUnresolvedKopf(t *testing.T) {
	t.Setenv("GOPROXY", "off")
	t.Setenv("GOFLAGS", "-mod=mod")
	dir := t.TempDir()
	code, out, errOut := kopfGen(t, "init", dir, "--module", "example.com/op", "--group", "example.com",
		"--version", "v1", "--kind", "Widget", "--kopf-version", "v0.42.0")
	if code != 1 || !strings.Contains(out, "running     go mod tidy\n") {
		t.Errorf("exit %d\n%s", code, out)
	}
	for _, want := range []string{
		"kopf-gen: go mod tidy cannot resolve kopf-go (github.com/kopf-go/kopf) in " + dir + ": the files are written. " +
			"If kopf-go is not published where the go command looks (go env GOPROXY), clone it (git clone https://github.com/kopf-go/kopf) " +
			"and run init again with --kopf-replace PATH_OF_THE_CLONE --force; or name a published version with --kopf-version and --force. The go command said:\n",
		"github.com/kopf-go/kopf@v0.42.0: module lookup disabled by GOPROXY=off",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
}

// kopfGenOnly are modules that kopf-gen needs and an operator must not:
// none may be in a scaffolded operator's module graph (go list -m all).
// (k8s.io/apiextensions-apiserver and k8s.io/code-generator are in it, as
// the end-to-end test's envtest needs controller-runtime, which requires
// the former, whose go.mod requires the latter: see kopfGenPackages and
// testOnlyPackages.)
var kopfGenOnly = []string{
	"github.com/kopf-go/kopf/cmd/kopf-gen",
	"github.com/kopf-go/kopf/generator",
	"sigs.k8s.io/controller-tools",
	"github.com/dave/jennifer",
	"github.com/gobuffalo/flect",
}

// kopfGenPackages are import path prefixes of kopf-gen's dependencies of
// which a scaffolded operator must build no package, not even in its tests
// (go list -deps -test). golang.org/x/tools is among them but not among
// kopfGenOnly: it is in every client-go user's module graph, as
// golang.org/x/text's go.mod requires it, though no package of it is built;
// k8s.io/code-generator likewise (see kopfGenOnly), and code-generator's
// k8s.io/gengo/v2, which k8s.io/kube-openapi's go.mod requires.
var kopfGenPackages = []string{"golang.org/x/tools/", "golang.org/x/mod/", "k8s.io/code-generator/", "k8s.io/gengo/"}

// testOnlyPackages are import path prefixes of what the end-to-end test
// uses (envtest, on controller-runtime) and the operator's binary must not
// link (go list -deps .).
var testOnlyPackages = []string{"github.com/kopf-go/kopf/envtest", "github.com/kopf-go/kopf/kopftest",
	"sigs.k8s.io/controller-runtime/", "k8s.io/apiextensions-apiserver/"}

// assertLean fails the test if the operator module in dir has kopf-gen's
// dependencies in its module graph or builds one of their packages, or if
// its binary links what only its tests need.
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
	binary := strings.Fields(goIn(t, dir, nil, "go", "list", "-deps", "."))
	if !slices.Contains(binary, "github.com/kopf-go/kopf") {
		t.Fatalf("the operator's binary does not link the runtime:\n%s", strings.Join(binary, "\n"))
	}
	for _, pkg := range binary {
		for _, prefix := range testOnlyPackages {
			if strings.HasPrefix(pkg, prefix) {
				t.Errorf("the operator's binary links %s, which only its tests need", pkg)
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
	}, {
		args: []string{"generate", "--manifests=config", "--chart=dist/chart"},
		want: "kopf-gen: --kustomize applies to the manifests of --manifests DIR, and --chart renders DIR/default with the kustomization of --kustomize: add --manifests DIR --kustomize\n",
	}, {
		args: []string{"generate", "--kustomize"},
		want: "kopf-gen: --kustomize applies to the manifests of --manifests DIR, and --chart renders DIR/default with the kustomization of --kustomize: add --manifests DIR --kustomize\n",
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

// TestInitWebhooks scaffolds an operator with --webhooks against this
// checkout: kopf-gen writes the webhooks' Service and Role along with the
// rest; the repository builds, vets, its unit tests of the admission
// handlers pass, and verify passes. (e2e/scaffold's TestScaffoldWebhooks
// runs the same scaffold's end-to-end test, and relies on this test for
// the rest.)
func TestInitWebhooks(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a scaffolded repository (go mod tidy, go build, kopf-gen)")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "widget-operator")
	code, out, errOut := kopfGen(t, "init", dir, "--module", "github.com/acme/widget-operator", "--group", "example.com",
		"--version", "v1alpha1", "--kind", "Widget", "--kopf-replace", root, "--webhooks")
	if code != 0 || errOut != "" {
		t.Fatalf("init: exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{
		"created     internal/handlers/webhooks.go\n", "created     internal/handlers/webhooks_test.go\n",
		"created     config/rbac/webhook_role_binding.yaml\n",
		"generated   config/webhook/service.yaml\n", "generated   config/rbac/webhook_role.yaml\n", "generated   config/rbac/role.yaml\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("init's output lacks %q:\n%s", want, out)
		}
	}
	role, err := os.ReadFile(filepath.Join(dir, "config", "rbac", "role.yaml"))
	if err != nil || !strings.Contains(string(role), `resources: ["validatingwebhookconfigurations", "mutatingwebhookconfigurations"]`) {
		t.Errorf("the ClusterRole lacks the managed configurations (%v):\n%s", err, role)
	}
	goIn(t, dir, nil, "go", "build", "./...")
	goIn(t, dir, nil, "go", "vet", "./...")
	out = goIn(t, dir, noControlPlane(t), "go", "test", "-count=1", "-v", "./internal/...")
	for _, want := range []string{"--- PASS: TestValidate", "--- PASS: TestDefault", "--- PASS: TestCreate"} {
		if !strings.Contains(out, want) {
			t.Errorf("go test -v ./internal/... lacks %q:\n%s", want, out)
		}
	}
	t.Chdir(dir)
	if code, out, errOut := kopfGen(t, "verify", "--manifests=config", "--kustomize", "--chart=dist/chart", "--deepcopy", "--clients=pkg/generated"); code != 0 {
		t.Errorf("verify: exit %d\n%s\n%s", code, out, errOut)
	}
}

// TestInitVariants scaffolds kinds of other shapes against this checkout:
// cluster-scoped without a status (with webhooks), and without a spec or a
// status. Each builds, vets, verifies, and its unit tests pass; the CRD
// has the scope and no status subresource, and the typed client takes no
// namespace. (e2e/scaffold's TestScaffoldClusterNoStatus runs the first
// one's end-to-end test on a control plane.)
func TestInitVariants(t *testing.T) {
	if testing.Short() {
		t.Skip("builds scaffolded repositories (go mod tidy, go build, kopf-gen)")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, crd string
		flags     []string
		tests     []string
	}{
		{name: "cluster-nostatus", flags: []string{"--scope", "Cluster", "--no-status", "--webhooks"},
			crd:   "  scope: Cluster\n",
			tests: []string{"--- PASS: TestCreate", "--- PASS: TestValidate", "--- PASS: TestDefault"}},
		{name: "nospec-nostatus", flags: []string{"--no-spec", "--no-status"},
			crd:   "  scope: Namespaced\n",
			tests: []string{"--- PASS: TestCreate"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "widget-operator")
			args := append([]string{"init", dir, "--module", "github.com/acme/widget-operator", "--group", "example.com",
				"--version", "v1alpha1", "--kind", "Widget", "--kopf-replace", root}, tc.flags...)
			code, out, errOut := kopfGen(t, args...)
			if code != 0 || errOut != "" {
				t.Fatalf("init: exit %d\n%s\n%s", code, out, errOut)
			}
			crd, err := os.ReadFile(filepath.Join(dir, "config", "crd", "example.com_widgets.yaml"))
			if err != nil || !strings.Contains(string(crd), tc.crd) || strings.Contains(string(crd), "subresources:") {
				t.Errorf("the CRD (%v) lacks %q or has subresources:\n%s", err, tc.crd, crd)
			}
			if !strings.Contains(string(crd), "x-kubernetes-preserve-unknown-fields: true") {
				t.Errorf("the CRD's status does not keep the handlers' results:\n%s", crd)
			}
			goIn(t, dir, nil, "go", "build", "./...")
			goIn(t, dir, nil, "go", "vet", "./...")
			out = goIn(t, dir, noControlPlane(t), "go", "test", "-count=1", "-v", "./...")
			for _, want := range append(tc.tests, "--- SKIP: TestWidget") {
				if !strings.Contains(out, want) {
					t.Errorf("go test -v ./... lacks %q:\n%s", want, out)
				}
			}
			client, _ := os.ReadFile(filepath.Join(dir, "pkg", "generated", "clientset", "versioned", "typed", "api", "v1alpha1", "widget.go"))
			if cluster := slices.Contains(tc.flags, "Cluster"); cluster != strings.Contains(string(client), "func newWidgets(c *ExampleV1alpha1Client) *widgets {") {
				t.Errorf("the typed client (cluster-scoped: %v):\n%s", cluster, client)
			}
			t.Chdir(dir)
			if code, out, errOut := kopfGen(t, "verify", "--manifests=config", "--kustomize", "--chart=dist/chart", "--deepcopy", "--clients=pkg/generated"); code != 0 {
				t.Errorf("verify: exit %d\n%s\n%s", code, out, errOut)
			}
		})
	}
}
