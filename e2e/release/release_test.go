package release_test

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/modfile"

	"github.com/kopf-go/kopf/e2e/release"
)

// kopfGo is the module path of kopf-go's runtime, the prefix of the others.
const kopfGo = "github.com/kopf-go/kopf"

// TestRelease is issue 24's release rehearsal: kopf-go's published modules
// at one version (KOPF_RELEASE_VERSION, default v0.1.0) in a file-based
// module proxy; then, as a user with only that proxy and the public one and
// an empty GOPATH: go install of kopf-gen at latest and at that version,
// kopf-gen init without --kopf-replace, and the scaffold's make lint (vet,
// verify with the kopf-gen that its Makefile installs, gofmt, a tidy
// go.mod), make test, make build and, with KUBEBUILDER_ASSETS, make
// test-e2e.
//
// The module cache is the go command's own (go env GOMODCACHE), so that
// the dependencies are neither downloaded nor compiled again: the build
// cache keys a package by its directory, and the scaffolds of
// cmd/kopf-gen's TestInit and e2e/scaffold compiled them from there.
// kopf-go's own modules are removed from it before and after the test:
// each run publishes new content at the same version, and a user's cache
// must not keep it.
func TestRelease(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Fatalf("the scaffold's tests run with make: %v", err)
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	version := os.Getenv("KOPF_RELEASE_VERSION")
	if version == "" {
		version = "v0.1.0"
	}
	work := t.TempDir()
	proxy := filepath.Join(work, "proxy")
	start := time.Now()
	mods, err := release.BuildProxy(t.Context(), root, proxy, version)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d modules at %s in %s (%s)", len(mods), version, proxy, time.Since(start).Round(time.Millisecond))
	env := userEnv(t, work, proxy)

	// go install at the version and at latest (the README's command, which
	// the proxy's list resolves to the version), then kopf-gen reports the
	// version it was installed at.
	kopfGen := filepath.Join(work, "gobin", "kopf-gen")
	for _, query := range []string{"latest", version} {
		run(t, work, env, "go", "install", kopfGo+"/cmd/kopf-gen@"+query)
		if out := run(t, work, env, kopfGen, "version"); out != "kopf-gen "+version+"\n" {
			t.Errorf("kopf-gen installed @%s: kopf-gen version says %q, want kopf-gen %s", query, out, version)
		}
	}

	dir := filepath.Join(work, "widget-operator")
	out := run(t, work, env, kopfGen, "init", dir, "--module", "example.com/widget-operator",
		"--group", "example.com", "--version", "v1alpha1", "--kind", "Widget")
	t.Logf("kopf-gen init:\n%s", out)
	checkScaffold(t, dir, version)

	out = run(t, dir, append(env, "KUBEBUILDER_ASSETS="), "make", "lint", "test", "build")
	if !strings.Contains(out, "ok  \texample.com/widget-operator/internal/handlers") {
		t.Errorf("make test did not test the handlers:\n%s", out)
	}
	if !strings.Contains(out, "go install "+kopfGo+"/cmd/kopf-gen@"+version) {
		t.Errorf("make verify did not install kopf-gen at %s:\n%s", version, out)
	}
	want := "widget-operator, kopf-go version " + strings.TrimPrefix(version, "v") + "\n"
	if out := run(t, dir, env, filepath.Join(dir, "bin", "widget-operator"), "--version"); out != want {
		t.Errorf("the operator's --version says %q, want %q", out, want)
	}

	checkTidy(t, work, env, mods, version)

	if os.Getenv("KUBEBUILDER_ASSETS") == "" {
		t.Log("KUBEBUILDER_ASSETS is not set: make test-e2e is left out")
		return
	}
	out = run(t, dir, append(envtestFlags(t), env...), "make", "test-e2e")
	for _, want := range []string{"--- PASS: TestWidget", "ok  \texample.com/widget-operator/test/e2e"} {
		if !strings.Contains(out, want) {
			t.Errorf("make test-e2e lacks %q:\n%s", want, out)
		}
	}
}

// userEnv is the environment of a user of kopf-go as published in proxy:
// GOPROXY with that proxy first, then the public one (the go command's
// own GOPROXY); GONOSUMDB for kopf-go's modules, which the checksum
// database does not know (not GOPRIVATE: it would also bypass the proxies
// and fetch from github.com); an empty GOPATH and GOBIN; the go command's
// module cache, without kopf-go's modules (removed now and when the test
// ends); no go.work; no module index.
func userEnv(t *testing.T, work, proxy string) []string {
	t.Helper()
	goEnv := func(name string) string {
		out, err := exec.Command("go", "env", name).Output()
		if err != nil {
			t.Fatalf("go env %s: %v", name, err)
		}
		return strings.TrimSpace(string(out))
	}
	modcache := goEnv("GOMODCACHE")
	removeModules(t, modcache)
	t.Cleanup(func() { removeModules(t, modcache) })
	noSumDB := kopfGo
	if v := goEnv("GONOSUMDB"); v != "" {
		noSumDB += "," + v
	}
	gobin := filepath.Join(work, "gobin")
	return []string{
		"GOPROXY=file://" + filepath.ToSlash(proxy) + "," + goEnv("GOPROXY"),
		"GONOSUMDB=" + noSumDB,
		"GOPATH=" + filepath.Join(work, "gopath"),
		"GOBIN=" + gobin,
		"GOMODCACHE=" + modcache,
		// -modcacherw: the module cache's files are writable, so that
		// removeModules and t.TempDir's cleanup can remove them.
		"GOFLAGS=" + strings.TrimSpace(goEnv("GOFLAGS")+" -modcacherw"),
		"GOWORK=off",
		// The go command indexes a module of the module cache once, by its
		// directory alone (modules there are immutable), in the build
		// cache; kopf-go's modules here change from run to run at the same
		// version and directory, so the index is off.
		"GODEBUG=" + strings.TrimPrefix(os.Getenv("GODEBUG")+",goindex=0", ","),
		"PATH=" + gobin + string(os.PathListSeparator) + os.Getenv("PATH"),
	}
}

// removeModules removes kopf-go's modules from the module cache at
// modcache: extracted and downloaded.
func removeModules(t *testing.T, modcache string) {
	t.Helper()
	for _, d := range []string{modcache, filepath.Join(modcache, "cache", "download")} {
		dir := filepath.Join(d, filepath.FromSlash(path.Dir(kopfGo)))
		// Files of a module cache are read-only unless written with -modcacherw.
		_ = filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
			if err == nil && e.IsDir() {
				_ = os.Chmod(p, 0o755)
			}
			return nil
		})
		if err := os.RemoveAll(dir); err != nil {
			t.Fatalf("removing the rehearsal's previous kopf-go modules: %v", err)
		}
	}
}

// checkTidy checks that the released go.mod of each module is the one that
// go mod tidy keeps, in the module as the proxy serves it: the go.mod that
// docs/releasing.md's steps write (replace directives dropped, go get of
// the tagged versions, go mod tidy) is the one rehearsed. Only go.sum may
// change: the checkout's lacks the sums of kopf-go's modules, which go
// install @version does not read.
func checkTidy(t *testing.T, work string, env []string, mods []release.Module, version string) {
	t.Helper()
	for _, m := range mods {
		out := run(t, work, env, "go", "mod", "download", "-json", m.Path+"@"+version)
		var dl struct{ Dir string }
		if err := json.Unmarshal([]byte(out), &dl); err != nil || dl.Dir == "" {
			t.Fatalf("go mod download -json %s@%s: %v\n%s", m.Path, version, err, out)
		}
		dir := filepath.Join(work, "tidy", strings.ReplaceAll(m.Path, "/", "_"))
		if err := os.CopyFS(dir, os.DirFS(dl.Dir)); err != nil {
			t.Fatal(err)
		}
		run(t, dir, env, "go", "mod", "tidy")
		got, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, m.GoMod) {
			t.Errorf("go mod tidy changes the released go.mod of %s:\nreleased:\n%s\ntidied:\n%s", m.Path, m.GoMod, got)
		}
	}
}

// checkScaffold checks that the scaffold in dir requires kopf-go at
// version, replaces nothing, and that its Makefile installs kopf-gen at
// version.
func checkScaffold(t *testing.T, dir, version string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := modfile.Parse("go.mod", data, nil)
	if err != nil {
		t.Fatal(err)
	}
	required := map[string]string{}
	for _, r := range f.Require {
		required[r.Mod.Path] = r.Mod.Version
	}
	for _, m := range []string{kopfGo, kopfGo + "/envtest"} {
		if required[m] != version {
			t.Errorf("the scaffold's go.mod requires %s at %q, want %s:\n%s", m, required[m], version, data)
		}
	}
	if len(f.Replace) > 0 {
		t.Errorf("the scaffold's go.mod has replace directives:\n%s", data)
	}
	makefile, err := os.ReadFile(filepath.Join(dir, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "KOPF_GEN_VERSION ?= " + version + "\n"; !bytes.Contains(makefile, []byte(want)) {
		t.Errorf("the scaffold's Makefile lacks %q", want)
	}
}

// run runs a command in dir with env added to the test's environment, and
// fails the test with its output if it fails.
func run(t *testing.T, dir string, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	start := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s in %s: %v\n%s", name, strings.Join(args, " "), dir, err, out.String())
	}
	t.Logf("%s %s: %s", filepath.Base(name), strings.Join(args, " "), time.Since(start).Round(time.Second))
	return out.String()
}

// envtestFlags are the scaffold's make variables that make kopf-gen
// envtest find the binaries of KUBEBUILDER_ASSETS, as e2e/scaffold's.
func envtestFlags(t *testing.T) []string {
	t.Helper()
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	version, ok := strings.CutSuffix(filepath.Base(assets), "-"+runtime.GOOS+"-"+runtime.GOARCH)
	if !ok {
		t.Fatalf("KUBEBUILDER_ASSETS=%s is not in kopf-gen envtest's layout (DIR/<version>-%s-%s)", assets, runtime.GOOS, runtime.GOARCH)
	}
	return []string{"ENVTEST_BIN_DIR=" + filepath.Dir(assets), "ENVTEST_K8S_VERSION=" + version, "KUBEBUILDER_ASSETS="}
}
