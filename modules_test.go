package kopf_test

import (
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestModules checks the split of kopf-go into modules: the generator and
// kopf-gen live in modules of their own (kopfGenModules), so that the
// runtime module, which every operator requires, carries none of their
// dependencies.
//
// The modules that generator/go.mod and cmd/kopf-gen/go.mod require
// directly, apart from those shared with the runtime, are kopf-gen's
// dependencies (x/tools, jennifer, controller-tools, apiextensions-apiserver,
// x/mod, flect, ...). The root's go.mod must not require any of them
// directly, nor any of mustNotRequire at all; and no package that the root
// module's packages or tests build may come from one of them. (x/tools
// itself stays in the root's module graph as an indirect requirement:
// golang.org/x/text, which client-go needs, requires it in its go.mod. No
// package of it is built.)
func TestModules(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list over the root module")
	}
	root := requirements(t, "go.mod")
	if got := goDirective(t, "go.mod"); got != runtimeGoVersion {
		t.Errorf("the root go.mod's go directive is %s, want %s (client-go's, so that operators need no newer Go)", got, runtimeGoVersion)
	}
	kopfGen := map[string]bool{}
	for _, m := range kopfGenModules {
		gomod := filepath.Join(filepath.FromSlash(m), "go.mod")
		if got, want := modulePathOf(t, gomod), modulePath+"/"+m; got != want {
			t.Errorf("%s declares module %q, want %q", gomod, got, want)
		}
		for mod, indirect := range requirements(t, gomod) {
			if !indirect && !slices.Contains(shared, mod) && !strings.HasPrefix(mod, modulePath) {
				kopfGen[mod] = true
			}
		}
	}
	for _, mod := range mustNotRequire {
		kopfGen[mod] = true
		if _, ok := root[mod]; ok {
			t.Errorf("the root go.mod requires %s", mod)
		}
	}
	for mod, indirect := range root {
		if kopfGen[mod] && !indirect {
			t.Errorf("the root go.mod requires %s, a dependency of kopf-gen, directly", mod)
		}
		if !indirect && !slices.Contains(runtimeRequires, mod) {
			t.Errorf("the root go.mod requires %s directly, which runtimeRequires does not allow: every operator links the root module, so a new dependency of it is a decision to record in docs/ARCHITECTURE.md's modules table and here", mod)
		}
	}

	cmd := exec.Command("go", "list", "-deps", "-test", "-f", "{{with .Module}}{{.Path}} {{end}}{{.ImportPath}}", "./...")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps -test ./...: %v", err)
	}
	built := map[string]string{} // module: one of its packages
	for line := range strings.SplitSeq(strings.TrimSpace(string(out)), "\n") {
		if mod, pkg, ok := strings.Cut(line, " "); ok {
			built[mod] = pkg
		}
	}
	if len(built) < 5 {
		t.Fatalf("go list -deps found only the modules %v", built)
	}
	for _, mod := range slices.Sorted(maps.Keys(kopfGen)) {
		if pkg, ok := built[mod]; ok {
			t.Errorf("the root module builds %s, of kopf-gen's dependency %s", pkg, mod)
		}
	}
	for _, m := range kopfGenModules {
		if pkg, ok := built[modulePath+"/"+m]; ok {
			t.Errorf("the root module builds %s, of the module %s", pkg, m)
		}
	}
}

// runtimeGoVersion is the go directive of the root module: the one of
// k8s.io/client-go, which it requires.
const runtimeGoVersion = "1.25.0"

// shared are the modules that both the runtime and kopf-gen may require
// directly: the runtime's own, go-difflib, which apimachinery's
// util/diff builds into the runtime anyway, and kube-openapi, which
// client-go builds into it (generator/clients names OpenAPI models with
// its util).
var shared = []string{
	"k8s.io/api", "k8s.io/apimachinery", "k8s.io/client-go", "k8s.io/klog/v2",
	"sigs.k8s.io/yaml", "github.com/spf13/cobra", "github.com/go-logr/logr",
	"github.com/pmezard/go-difflib", "k8s.io/kube-openapi",
}

// runtimeRequires are the modules that the root go.mod may require
// directly: what every operator links, kept lean on purpose (see the
// modules table of docs/ARCHITECTURE.md). prometheus/client_golang is the
// metrics' (runtime/metrics; controller-runtime links it too, so operators
// that mix both link it once); client_model is its data model, which the
// metrics' tests read. spf13/pflag is cobra's flag set, which the operator
// binary's flags (runtime/cli) use directly. sigs.k8s.io/randfill is
// apimachinery's fuzzer (metav1 imports it, so every operator links it
// already): kopftest.RoundTrip fills objects with it.
var runtimeRequires = []string{
	"github.com/go-json-experiment/json", "github.com/go-logr/logr", "github.com/spf13/cobra", "github.com/spf13/pflag",
	"golang.org/x/crypto", "k8s.io/api", "k8s.io/apimachinery", "k8s.io/client-go", "k8s.io/klog/v2", "k8s.io/utils",
	"github.com/prometheus/client_golang", "github.com/prometheus/client_model",
	"sigs.k8s.io/randfill",
}

// mustNotRequire are modules that the root go.mod must not list at all,
// not even as indirect requirements.
var mustNotRequire = []string{
	"github.com/dave/jennifer",
	"sigs.k8s.io/controller-tools",
	"k8s.io/code-generator",
	"k8s.io/apiextensions-apiserver",
	"github.com/gobuffalo/flect",
	modulePath + "/generator",
	modulePath + "/cmd/kopf-gen",
}

var (
	requireRE = regexp.MustCompile(`^(?:require\s+)?(\S+)\s+v\S+(\s*//\s*indirect)?`)
	moduleRE  = regexp.MustCompile(`(?m)^module\s+(\S+)\s*$`)
	goRE      = regexp.MustCompile(`(?m)^go\s+(\S+)\s*$`)
)

// requirements maps the modules that the go.mod file at path requires to
// whether the requirement is marked indirect.
func requirements(t *testing.T, path string) map[string]bool {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	inBlock := false
	for line := range strings.SplitSeq(string(data), "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "require (":
			inBlock = true
		case inBlock && line == ")":
			inBlock = false
		case inBlock || strings.HasPrefix(line, "require "):
			if m := requireRE.FindStringSubmatch(line); m != nil {
				out[m[1]] = m[2] != ""
			}
		}
	}
	if len(out) == 0 {
		t.Fatalf("%s requires nothing", path)
	}
	return out
}

// modulePathOf returns the module path that the go.mod file at path declares.
func modulePathOf(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m := moduleRE.FindSubmatch(data)
	if m == nil {
		t.Fatalf("%s declares no module", path)
	}
	return string(m[1])
}

// goDirective returns the go directive of the go.mod file at path.
func goDirective(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m := goRE.FindSubmatch(data)
	if m == nil {
		t.Fatalf("%s has no go directive", path)
	}
	return string(m[1])
}

// TestFacadeLinksNoClientset checks that an operator links client-go's
// typed clientset (with its hundreds of typed clients) only if its own code
// uses it: kopf.Client is generic over the client's type for that reason.
func TestFacadeLinksNoClientset(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list over the root module")
	}
	cmd := exec.Command("go", "list", "-deps", ".")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps .: %v", err)
	}
	for pkg := range strings.SplitSeq(string(out), "\n") {
		if pkg == "k8s.io/client-go/kubernetes" {
			t.Errorf("the facade links %s", pkg)
		}
	}
}
