package main

import (
	"bytes"
	"go/parser"
	"go/token"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	"golang.org/x/mod/modfile"
)

// fakeAssets puts executable stand-ins of the binaries (etcd and
// kube-apiserver unless others are named) into binDir's directory of
// version and returns that directory.
func fakeAssets(t *testing.T, binDir, version string, names ...string) string {
	t.Helper()
	dir := filepath.Join(binDir, version+"-"+runtime.GOOS+"-"+runtime.GOARCH)
	if len(names) == 0 {
		names = controlPlaneBinaries
	}
	for _, name := range names {
		write(t, filepath.Join(dir, exe(name)), "#!/bin/sh\n")
	}
	return dir
}

// TestEnvtestFlags checks the arguments envtest refuses, before anything
// is looked up or built.
func TestEnvtestFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"envtest", "extra"}, `kopf-gen: unknown command "extra" for "kopf-gen envtest"` + "\n"},
		{[]string{"envtest", "--kubernetes-version", "1.35"}, `kopf-gen: --kubernetes-version "1.35": a Kubernetes release is 1.<minor>.<patch>, such as 1.35.4` + "\n"},
		{[]string{"envtest", "--kubernetes-version", "0.35.4"}, `kopf-gen: --kubernetes-version "0.35.4": a Kubernetes release is 1.<minor>.<patch>, such as 1.35.4` + "\n"},
		{[]string{"envtest", "--kubernetes-version", "1.35.04"}, `kopf-gen: --kubernetes-version "1.35.04": a Kubernetes release is 1.<minor>.<patch>, such as 1.35.4` + "\n"},
		{[]string{"envtest", "--kubernetes-version", "latest"}, `kopf-gen: --kubernetes-version "latest": a Kubernetes release is 1.<minor>.<patch>, such as 1.35.4` + "\n"},
	} {
		code, out, errOut := kopfGen(t, tc.args...)
		if code != 1 || out != "" || errOut != tc.want {
			t.Errorf("%v: exit %d, stdout %q, stderr %q, want %q", tc.args, code, out, errOut, tc.want)
		}
	}
}

func TestParseKubeVersion(t *testing.T) {
	for _, tc := range []struct {
		in, str, module, staging, ldflags string
	}{
		{"1.35.4", "1.35.4", "v1.35.4", "v0.35.4", "gitVersion=v1.35.4 -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=35"},
		{"v1.34.1", "1.34.1", "v1.34.1", "v0.34.1", "gitMinor=34"},
		{"1.36.0-rc.0", "1.36.0-rc.0", "v1.36.0-rc.0", "v0.36.0-rc.0", "gitVersion=v1.36.0-rc.0 "},
	} {
		v, err := parseKubeVersion(tc.in)
		if err != nil {
			t.Errorf("%s: %v", tc.in, err)
			continue
		}
		if v.String() != tc.str || v.module() != tc.module || v.staging() != tc.staging || !strings.Contains(v.ldflags(), tc.ldflags) {
			t.Errorf("%s: %s %s %s %q", tc.in, v, v.module(), v.staging(), v.ldflags())
		}
	}
}

// TestEnvtestPresent: with both binaries in place, envtest prints their
// directory and builds nothing: it needs no go command then.
func TestEnvtestPresent(t *testing.T) {
	binDir := t.TempDir()
	want := fakeAssets(t, binDir, DefaultKubernetesVersion)
	other := fakeAssets(t, binDir, "1.34.1")
	t.Setenv("PATH", "")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"envtest", "--bin-dir", binDir}, want},
		{[]string{"envtest", "--bin-dir", binDir, "--kubernetes-version", "v1.34.1"}, other},
	} {
		code, out, errOut := kopfGen(t, tc.args...)
		if code != 0 || out != tc.want+"\n" || errOut != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q, want %q", tc.args, code, out, errOut, tc.want)
		}
	}
	// The default directory is in the user's cache, where package envtest looks.
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache)
	t.Setenv("HOME", cache)
	t.Setenv("LocalAppData", cache)
	userCache, err := os.UserCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	want = fakeAssets(t, filepath.Join(userCache, "kopf-go", "k8s"), DefaultKubernetesVersion)
	if code, out, errOut := kopfGen(t, "envtest"); code != 0 || out != want+"\n" || errOut != "" {
		t.Errorf("default --bin-dir: exit %d, stdout %q, stderr %q, want %q", code, out, errOut, want)
	}
}

// TestEnvtestControllers: --controllers wants kube-controller-manager,
// kube-scheduler and kwok too, builds only those that are missing (the
// first two from the embedded module, kwok with go install at its pinned
// version) and leaves the binaries that are there untouched. A stand-in
// for the go command records what it is asked.
func TestEnvtestControllers(t *testing.T) {
	tools := t.TempDir()
	record := filepath.Join(tools, "record")
	write(t, filepath.Join(tools, "go"), `#!/bin/sh
echo "GOBIN=$GOBIN $*" >> `+record+`
case "$1" in
build) while [ $# -gt 0 ]; do case "$1" in -o) out="$2"; shift;; ./*) echo built > "$out${1#./}";; esac; shift; done;;
install) echo installed > "$GOBIN/kwok";;
esac
`)
	if err := os.Chmod(filepath.Join(tools, "go"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", tools)
	binDir := t.TempDir()
	dir := fakeAssets(t, binDir, DefaultKubernetesVersion)
	before, err := os.Stat(filepath.Join(dir, "kube-apiserver"))
	if err != nil {
		t.Fatal(err)
	}

	// Without --controllers, the two binaries are enough.
	if code, out, errOut := kopfGen(t, "envtest", "--bin-dir", binDir); code != 0 || out != dir+"\n" || errOut != "" {
		t.Fatalf("without --controllers: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	code, out, errOut := kopfGen(t, "envtest", "--bin-dir", binDir, "--controllers")
	if code != 0 || out != dir+"\n" {
		t.Fatalf("--controllers: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	for _, want := range []string{
		"kopf-gen envtest: building kube-controller-manager and kube-scheduler 1.35.4, and kwok " + KwokVersion + ", for " + runtime.GOOS + "/" + runtime.GOARCH + " from",
		"kopf-gen envtest: kube-controller-manager and kube-scheduler 1.35.4, and kwok " + KwokVersion + ", are in " + dir + "\n",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	calls := strings.Split(strings.TrimSpace(readFile(t, record)), "\n")
	if len(calls) != 2 || !strings.HasSuffix(calls[0], " ./kube-controller-manager ./kube-scheduler") || !strings.HasPrefix(calls[0], "GOBIN= build -trimpath") ||
		!regexp.MustCompile(`^GOBIN=\S+ install .* sigs\.k8s\.io/kwok/cmd/kwok@`+regexp.QuoteMeta(KwokVersion)+`$`).MatchString(calls[1]) {
		t.Errorf("the go command was asked:\n%s", strings.Join(calls, "\n"))
	}
	for name, want := range map[string]string{"kube-controller-manager": "built\n", "kube-scheduler": "built\n", "kwok": "installed\n", "etcd": "#!/bin/sh\n", "kube-apiserver": "#!/bin/sh\n"} {
		if got := readFile(t, filepath.Join(dir, name)); got != want {
			t.Errorf("%s holds %q, want %q", name, got, want)
		}
	}
	if after, err := os.Stat(filepath.Join(dir, "kube-apiserver")); err != nil || !os.SameFile(before, after) || !after.ModTime().Equal(before.ModTime()) {
		t.Errorf("kube-apiserver was replaced: %v", err)
	}

	// With all five there, nothing is built.
	if err := os.Remove(record); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := kopfGen(t, "envtest", "--bin-dir", binDir, "--controllers"); code != 0 || out != dir+"\n" || errOut != "" {
		t.Errorf("--controllers again: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if _, err := os.Stat(record); err == nil {
		t.Errorf("the go command was run although all binaries are there: %s", readFile(t, record))
	}
}

// TestEnvtestFailures checks that each failure names its cause: no go
// command, a module proxy that cannot be reached or is off, a version that
// does not exist.
func TestEnvtestFailures(t *testing.T) {
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	notFound := httptest.NewServer(http.NotFoundHandler())
	t.Cleanup(notFound.Close)
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	for _, tc := range []struct {
		name, version string
		env           map[string]string
		want          []string
	}{
		{"no go", DefaultKubernetesVersion, map[string]string{"PATH": ""},
			[]string{"kopf-gen: the go command is not on PATH: kopf-gen envtest builds etcd and kube-apiserver with it; install Go (https://go.dev/dl/) or put it on PATH\n"}},
		{"proxy unreachable", "1.30.99", map[string]string{"GOPROXY": closed.URL},
			[]string{"kopf-gen: looking up k8s.io/kubernetes v1.30.99: the Go module proxy is unreachable (go env GOPROXY says where it is): check the network, or set GOPROXY to a proxy that can be reached:\n", "connection refused"}},
		{"proxy off", "1.30.99", map[string]string{"GOPROXY": "off"},
			[]string{"the Go module proxy is unreachable", "module lookup disabled by GOPROXY=off"}},
		{"unknown version", "1.99.0", map[string]string{"GOPROXY": notFound.URL},
			[]string{"kopf-gen: Kubernetes 1.99.0 is unknown: the Go module proxy has no k8s.io/kubernetes v1.99.0 (releases: https://github.com/kubernetes/kubernetes/releases):\n", "404 Not Found"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("PATH", filepath.Dir(goTool))
			t.Setenv("GOSUMDB", "off")
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			binDir := t.TempDir()
			code, out, errOut := kopfGen(t, "envtest", "--bin-dir", binDir, "--kubernetes-version", tc.version)
			if code != 1 || out != "" {
				t.Errorf("exit %d, stdout %q", code, out)
			}
			for _, want := range tc.want {
				if !strings.Contains(errOut, want) {
					t.Errorf("stderr lacks %q:\n%s", want, errOut)
				}
			}
			if tc.version != DefaultKubernetesVersion && !strings.HasPrefix(errOut, "kopf-gen envtest: Kubernetes "+tc.version+" is not pinned in this kopf-gen (1.35.4 is): resolving its dependencies with go mod tidy\n") {
				t.Errorf("stderr does not say that the version is resolved:\n%s", errOut)
			}
			if entries, _ := os.ReadDir(binDir); len(entries) != 0 {
				t.Errorf("a failed build left %v in --bin-dir", entries)
			}
		})
	}
}

// TestControlPlaneModule checks the embedded module of the default
// version: its files, the versions it requires, and Go that parses.
func TestControlPlaneModule(t *testing.T) {
	files, err := controlPlaneModule(nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for name := range files {
		names = append(names, name)
	}
	slices.Sort(names)
	want := []string{"etcd/main.go", "go.mod", "go.sum", "internal/lifeline/lifeline.go", "internal/lifeline/lifeline_other.go",
		"kube-apiserver/main.go", "kube-controller-manager/main.go", "kube-scheduler/main.go"}
	if !reflect.DeepEqual(names, want) {
		t.Errorf("files %v, want %v", names, want)
	}
	mf, err := modfile.Parse("go.mod", files["go.mod"], nil)
	if err != nil {
		t.Fatal(err)
	}
	v, _ := parseKubeVersion(DefaultKubernetesVersion)
	requires := map[string]string{}
	for _, r := range mf.Require {
		requires[r.Mod.Path] = r.Mod.Version
	}
	if requires["k8s.io/kubernetes"] != v.module() || requires["k8s.io/component-base"] != v.staging() || requires["go.etcd.io/etcd/server/v3"] == "" {
		t.Errorf("go.mod requires kubernetes %q, component-base %q, etcd %q; want %s, %s and etcd's server",
			requires["k8s.io/kubernetes"], requires["k8s.io/component-base"], requires["go.etcd.io/etcd/server/v3"], v.module(), v.staging())
	}
	for _, r := range mf.Replace {
		if r.New.Path != r.Old.Path || r.New.Version != v.staging() {
			t.Errorf("replace %s => %s %s: want the same module at %s", r.Old.Path, r.New.Path, r.New.Version, v.staging())
		}
	}
	if !bytes.Contains(files["go.sum"], []byte("k8s.io/kubernetes "+v.module()+" h1:")) {
		t.Error("go.sum does not pin k8s.io/kubernetes")
	}
	fset := token.NewFileSet()
	for name, wantPkg := range map[string]string{
		"kube-apiserver/main.go": "main", "etcd/main.go": "main",
		"kube-controller-manager/main.go": "main", "kube-scheduler/main.go": "main",
		"internal/lifeline/lifeline.go": "lifeline", "internal/lifeline/lifeline_other.go": "lifeline",
	} {
		f, err := parser.ParseFile(fset, name, files[name], parser.ImportsOnly)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if f.Name.Name != wantPkg {
			t.Errorf("%s: package %s, want %s", name, f.Name.Name, wantPkg)
		}
		if wantPkg == "main" && !bytes.Contains(files[name], []byte("\""+mf.Module.Mod.Path+"/internal/lifeline\"")) || wantPkg == "main" && !bytes.Contains(files[name], []byte("lifeline.Tie()")) {
			t.Errorf("%s does not tie itself to its parent with the module's lifeline", name)
		}
	}
	// The lifeline asks Linux for a signal when the parent dies.
	if !bytes.Contains(files["internal/lifeline/lifeline.go"], []byte("PR_SET_PDEATHSIG")) {
		t.Error("lifeline.go does not set PR_SET_PDEATHSIG")
	}

	// The Makefile of this repository builds the same version.
	makefile, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	if m := regexp.MustCompile(`(?m)^K8S_VERSION\s*:?=\s*(\S+)$`).FindSubmatch(makefile); m == nil || string(m[1]) != DefaultKubernetesVersion {
		t.Errorf("the Makefile's K8S_VERSION is %q, kopf-gen's default %s", m, DefaultKubernetesVersion)
	}
}

// TestControlPlaneGoMod derives the go.mod of an unpinned version from
// k8s.io/kubernetes's, and checks it against the pinned one when derived
// for the pinned version: the same requirements and replacements.
func TestControlPlaneGoMod(t *testing.T) {
	v, _ := parseKubeVersion("1.36.0-rc.0")
	kube := "module k8s.io/kubernetes\n\ngo 1.26.0\n\nrequire k8s.io/api v0.0.0\n\nreplace (\n\tk8s.io/api => ./staging/src/k8s.io/api\n\tk8s.io/client-go => ./staging/src/k8s.io/client-go\n\tgithub.com/x/y => github.com/x/y v1.0.0\n)\n"
	got, err := controlPlaneGoMod(v, []byte(kube))
	if err != nil {
		t.Fatal(err)
	}
	want := "module github.com/kopf-go/kopf/cmd/kopf-gen/controlplane\n\ngo 1.26.0\n\nrequire (\n\tk8s.io/component-base v0.36.0-rc.0\n\tk8s.io/kubernetes v1.36.0-rc.0\n)\n\nreplace (\n\tk8s.io/api => k8s.io/api v0.36.0-rc.0\n\tk8s.io/client-go => k8s.io/client-go v0.36.0-rc.0\n)\n"
	if string(got) != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	if _, err := controlPlaneGoMod(v, []byte("module k8s.io/kubernetes\n")); err == nil || !strings.Contains(err.Error(), "replaces no staging module") {
		t.Errorf("a go.mod without staging modules: %v", err)
	}

	// For the pinned version: the go.mod of k8s.io/kubernetes from the
	// module cache or the proxy (a small file).
	v, _ = parseKubeVersion(DefaultKubernetesVersion)
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	kubeMod, err := kubernetesGoMod(t.Context(), goRunner{tool: goTool, dir: t.TempDir(), stderr: &stderr}, v)
	if err != nil {
		t.Fatal(err)
	}
	derived, err := controlPlaneGoMod(v, kubeMod)
	if err != nil {
		t.Fatal(err)
	}
	files, err := controlPlaneModule(nil)
	if err != nil {
		t.Fatal(err)
	}
	pinned, err := modfile.Parse("go.mod", files["go.mod"], nil)
	if err != nil {
		t.Fatal(err)
	}
	d, err := modfile.Parse("go.mod", derived, nil)
	if err != nil {
		t.Fatal(err)
	}
	replaces := func(f *modfile.File) []string {
		var out []string
		for _, r := range f.Replace {
			out = append(out, r.Old.Path+" => "+r.New.Path+" "+r.New.Version)
		}
		slices.Sort(out)
		return out
	}
	if !reflect.DeepEqual(replaces(d), replaces(pinned)) {
		t.Errorf("the pinned go.mod's replacements differ from those derived from k8s.io/kubernetes %s:\npinned  %v\nderived %v", v.module(), replaces(pinned), replaces(d))
	}
	if d.Module.Mod.Path != pinned.Module.Mod.Path || d.Go.Version != pinned.Go.Version {
		t.Errorf("derived module %s go %s, pinned %s go %s", d.Module.Mod.Path, d.Go.Version, pinned.Module.Mod.Path, pinned.Go.Version)
	}
}

// TestControlPlaneModuleResolves writes the pinned module and lists every
// package that the build compiles, with go.mod and go.sum read-only: the
// pinned files are complete and consistent, and the mains import what
// exists. (The build itself runs in `make controlplane`, which uses
// kopf-gen envtest; it takes minutes.) With a cold module cache this
// downloads the modules of Kubernetes, as the build would.
func TestControlPlaneModuleResolves(t *testing.T) {
	if testing.Short() {
		t.Skip("go list of kube-apiserver's dependencies")
	}
	files, err := controlPlaneModule(nil)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, content := range files {
		write(t, filepath.Join(dir, filepath.FromSlash(name)), string(content))
	}
	out := goIn(t, dir, []string{"GOWORK=off", "GOFLAGS=-mod=readonly"}, "go", "list", "-deps", "-f", "{{if .Module}}{{.Module.Path}}{{end}}",
		"./kube-apiserver", "./etcd", "./kube-controller-manager", "./kube-scheduler")
	for _, want := range []string{"k8s.io/kubernetes", "go.etcd.io/etcd/server/v3", "github.com/kopf-go/kopf/cmd/kopf-gen/controlplane"} {
		if !slices.Contains(strings.Fields(out), want) {
			t.Errorf("the build compiles no package of %s", want)
		}
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
