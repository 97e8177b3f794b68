package main

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/mod/modfile"
)

// DefaultKubernetesVersion is the version of etcd's and kube-apiserver's
// module that kopf-gen envtest builds by default: the one whose go.mod and
// go.sum are pinned in controlplane/ (and the one that package envtest
// looks for in the cache).
const DefaultKubernetesVersion = "1.35.4"

// controlplane is the Go module that kopf-gen envtest builds: the mains of
// kube-apiserver and etcd, and the lifeline that ties them to their parent.
// Its files end with .txt so that they are neither packages of kopf-gen's
// module nor a go.mod that would cut the directory out of it (go:embed
// refuses a directory with a go.mod); envtest writes them into a temporary
// directory without the suffix.
//
//go:embed controlplane
var controlplane embed.FS

// The binaries that kopf-gen envtest builds, as setup-envtest names them.
var controlPlaneBinaries = []string{"etcd", "kube-apiserver"}

// The binaries that kopf-gen envtest --controllers builds too: the first
// two from the same module as kube-apiserver, kwok from its own.
var controllerBinaries = []string{"kube-controller-manager", "kube-scheduler", "kwok"}

// KwokVersion is the version of sigs.k8s.io/kwok whose kwok (simulated
// nodes and pods) kopf-gen envtest --controllers builds.
const KwokVersion = "v0.8.0"

// kubeVersion is a Kubernetes release: 1.<minor>.<patch>[-pre].
type kubeVersion struct {
	minor, patch, pre string
}

var kubeVersionRE = regexp.MustCompile(`^v?1\.([0-9]|[1-9][0-9]+)\.([0-9]|[1-9][0-9]+)(-(?:alpha|beta|rc)\.(?:[0-9]|[1-9][0-9]+))?$`)

// parseKubeVersion accepts 1.35.4, v1.35.4 and pre-releases such as
// 1.36.0-rc.0.
func parseKubeVersion(s string) (kubeVersion, error) {
	m := kubeVersionRE.FindStringSubmatch(s)
	if m == nil {
		return kubeVersion{}, fmt.Errorf("--kubernetes-version %q: a Kubernetes release is 1.<minor>.<patch>, such as %s", s, DefaultKubernetesVersion)
	}
	return kubeVersion{minor: m[1], patch: m[2], pre: m[3]}, nil
}

// String is the version without a v: 1.35.4, as setup-envtest's
// directories name it.
func (v kubeVersion) String() string { return "1." + v.minor + "." + v.patch + v.pre }

// module is the version of k8s.io/kubernetes: v1.35.4.
func (v kubeVersion) module() string { return "v" + v.String() }

// staging is the version of the staging modules (k8s.io/api,
// k8s.io/apiserver, ...) released with it: v0.35.4.
func (v kubeVersion) staging() string { return "v0." + v.minor + "." + v.patch + v.pre }

// ldflags are the linker flags of both binaries: stripped, and with the
// version that kube-apiserver reports (/version, --version), which a
// build from the module proxy does not get from git.
func (v kubeVersion) ldflags() string {
	const pkg = "k8s.io/component-base/version"
	return fmt.Sprintf("-s -w -X %s.gitVersion=%s -X %s.gitMajor=1 -X %s.gitMinor=%s", pkg, v.module(), pkg, pkg, v.minor)
}

// defaultEnvtestBinDir is where kopf-gen envtest puts binaries without
// --bin-dir: <user cache>/kopf-go/k8s, where package envtest looks.
func defaultEnvtestBinDir() (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no user cache directory (%w): give --bin-dir", err)
	}
	return filepath.Join(cache, "kopf-go", "k8s"), nil
}

// assetsDir is the directory of one version's binaries under binDir, in
// setup-envtest's layout: <version>-<GOOS>-<GOARCH>.
func assetsDir(binDir string, v kubeVersion) string {
	return filepath.Join(binDir, v.String()+"-"+runtime.GOOS+"-"+runtime.GOARCH)
}

func newEnvtestCmd() *cobra.Command {
	var version, binDir string
	var controllers bool
	cmd := &cobra.Command{
		Use:   "envtest [--kubernetes-version V] [--bin-dir DIR] [--controllers]",
		Short: "Build etcd and kube-apiserver (and the controllers) from the Go module proxy; print the KUBEBUILDER_ASSETS directory",
		Long: `envtest builds the etcd and kube-apiserver that envtest (controller-runtime's,
or kopf-go's github.com/kopf-go/kopf/envtest) starts for tests, from the sources
of Kubernetes on the Go module proxy, with the go command on PATH: no download
from a bucket, so it works wherever "go build" does (behind a proxy, with
GOPROXY set to a mirror).

The binaries go into DIR/<version>-<GOOS>-<GOARCH>/ (setup-envtest's layout),
and that directory is printed on standard output, the value for
KUBEBUILDER_ASSETS:

  export KUBEBUILDER_ASSETS=$(kopf-gen envtest)

With --controllers, it also builds what a fuller control plane needs
(envtest.WithControllers starts them): kube-controller-manager and
kube-scheduler from the same sources, and kwok (sigs.k8s.io/kwok ` + KwokVersion + `, from
its own module), which simulates nodes and the pods that run on them.

A binary that is there already is not built again: when all of them are,
nothing is built. DIR defaults to <user cache>/kopf-go/k8s, where package
envtest finds them without KUBEBUILDER_ASSETS. The first build takes a few
minutes and downloads the modules of Kubernetes into the module cache;
--controllers adds 5 to 10 minutes the first time on 2 cores
(kube-controller-manager and kube-scheduler share most of kube-apiserver's
packages; kwok compiles newer Kubernetes modules of its own).

The binaries are stripped, the Kubernetes ones report their version
(kube-apiserver --version) and on Linux die with the process that started
them, so that a killed test leaves no etcd or kube-apiserver behind.

The dependencies of the default version are pinned (go.mod and go.sum in
kopf-gen); for any other version, "go mod tidy" resolves them, and says so.
kwok's are those of its own go.mod and go.sum ("go install" at its version).
Progress and errors are printed on standard error.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			v, err := parseKubeVersion(version)
			if err != nil {
				return err
			}
			if binDir == "" {
				if binDir, err = defaultEnvtestBinDir(); err != nil {
					return err
				}
			}
			dir, err := buildControlPlane(cmd.Context(), cmd.ErrOrStderr(), v, binDir, controllers)
			if err != nil {
				return err
			}
			_, err = fmt.Fprintln(cmd.OutOrStdout(), dir)
			return err
		},
	}
	cmd.Flags().StringVar(&version, "kubernetes-version", DefaultKubernetesVersion, "the Kubernetes `version` of kube-apiserver, such as 1.34.1")
	cmd.Flags().BoolVar(&controllers, "controllers", false, "also build kube-controller-manager, kube-scheduler and kwok (envtest.WithControllers)")
	cmd.Flags().StringVar(&binDir, "bin-dir", "", "the `directory` that holds a directory per version (default <user cache>/kopf-go/k8s)")
	return cmd
}

// buildControlPlane makes sure that the binaries of version v (etcd and
// kube-apiserver; with controllers also kube-controller-manager,
// kube-scheduler and kwok) are in assetsDir(binDir, v) and returns that
// directory. Only the missing ones are built: a binary that is there is
// never replaced.
func buildControlPlane(ctx context.Context, stderr io.Writer, v kubeVersion, binDir string, controllers bool) (string, error) {
	dir, err := filepath.Abs(assetsDir(binDir, v))
	if err != nil {
		return "", err
	}
	missing := missingBinaries(dir, binaries(controllers))
	if len(missing) == 0 {
		return dir, nil
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		return "", errors.New("the go command is not on PATH: kopf-gen envtest builds etcd and kube-apiserver with it; install Go (https://go.dev/dl/) or put it on PATH")
	}
	// Build next to the target, then move the binaries in: a directory
	// with all the binaries is a finished build (see missingBinaries).
	if err := os.MkdirAll(binDir, 0o755); err != nil {
		return "", err
	}
	staging, err := os.MkdirTemp(binDir, ".build-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(staging)
	g := goRunner{tool: goTool, stderr: stderr}
	var mains []string
	for _, name := range missing {
		if name != "kwok" {
			mains = append(mains, "./"+name)
		}
	}
	if len(mains) > 0 {
		if g.dir, err = writeModule(ctx, g, v); err != nil {
			return "", err
		}
		defer os.RemoveAll(g.dir)
	}
	fmt.Fprintf(stderr, "kopf-gen envtest: building %s for %s/%s from the Go module proxy (minutes the first time)\n", describe(missing, v), runtime.GOOS, runtime.GOARCH)
	if len(mains) > 0 {
		args := append([]string{"build", "-trimpath", "-ldflags", v.ldflags(), "-o", staging + string(filepath.Separator)}, mains...)
		if _, err := g.run(ctx, "go build", v, true, args...); err != nil {
			return "", err
		}
	}
	if len(mains) < len(missing) {
		if err := installKwok(ctx, g, v, staging); err != nil {
			return "", err
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	for _, name := range missing {
		if err := os.Rename(filepath.Join(staging, exe(name)), filepath.Join(dir, exe(name))); err != nil {
			return "", err
		}
	}
	fmt.Fprintf(stderr, "kopf-gen envtest: %s are in %s\n", describe(missing, v), dir)
	return dir, nil
}

// writeModule writes the control plane's module of version v into a new
// temporary directory, resolving its dependencies with go mod tidy unless
// they are pinned, and returns the directory, which the caller removes.
func writeModule(ctx context.Context, g goRunner, v kubeVersion) (work string, err error) {
	if work, err = os.MkdirTemp("", "kopf-gen-envtest-"); err != nil {
		return "", err
	}
	defer func() {
		if err != nil {
			os.RemoveAll(work)
		}
	}()
	g.dir = work
	pinned := v.String() == DefaultKubernetesVersion
	var files map[string][]byte
	if pinned {
		files, err = controlPlaneModule(nil)
	} else {
		fmt.Fprintf(g.stderr, "kopf-gen envtest: Kubernetes %s is not pinned in this kopf-gen (%s is): resolving its dependencies with go mod tidy\n", v, DefaultKubernetesVersion)
		var gomod []byte
		if gomod, err = kubernetesGoMod(ctx, g, v); err == nil {
			var mod []byte
			if mod, err = controlPlaneGoMod(v, gomod); err == nil {
				files, err = controlPlaneModule(mod)
			}
		}
	}
	if err != nil {
		return "", err
	}
	for name, content := range files {
		p := filepath.Join(work, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return "", err
		}
		if err := os.WriteFile(p, content, 0o644); err != nil {
			return "", err
		}
	}
	if !pinned {
		if _, err := g.run(ctx, "go mod tidy", v, false, "mod", "tidy"); err != nil {
			return "", err
		}
	}
	return work, nil
}

// installKwok builds kwok (sigs.k8s.io/kwok/cmd/kwok at KwokVersion) into
// staging with go install: kwok requires newer Kubernetes modules than the
// control plane's, so it is built as its own module, with its own go.mod
// and go.sum (which replace nothing).
func installKwok(ctx context.Context, g goRunner, v kubeVersion, staging string) error {
	pkg := "sigs.k8s.io/kwok/cmd/kwok@" + KwokVersion
	g.dir = staging
	g.env = []string{"GOBIN=" + staging}
	_, err := g.run(ctx, "go install "+pkg, v, true, "install", "-trimpath", "-ldflags", "-s -w", pkg)
	return err
}

// binaries returns the names of the binaries that kopf-gen envtest builds,
// in the order it names them.
func binaries(controllers bool) []string {
	if controllers {
		return append(slices.Clone(controlPlaneBinaries), controllerBinaries...)
	}
	return controlPlaneBinaries
}

// describe names binaries with their versions, in prose: "etcd and
// kube-apiserver 1.35.4", "kube-scheduler 1.35.4, and kwok v0.8.0,".
func describe(names []string, v kubeVersion) string {
	var kube []string
	kwok := ""
	for _, name := range names {
		if name == "kwok" {
			kwok = "kwok " + KwokVersion
		} else {
			kube = append(kube, name)
		}
	}
	switch {
	case len(kube) == 0:
		return kwok
	case len(kube) > 1:
		kube[len(kube)-2] += " and " + kube[len(kube)-1]
		kube = kube[:len(kube)-1]
	}
	s := strings.Join(kube, ", ") + " " + v.String()
	if kwok != "" {
		s += ", and " + kwok + ","
	}
	return s
}

// exe is the file name of a binary.
func exe(name string) string {
	if runtime.GOOS == "windows" {
		return name + ".exe"
	}
	return name
}

// missingBinaries returns those of names that are not in dir as regular
// files.
func missingBinaries(dir string, names []string) []string {
	var missing []string
	for _, name := range names {
		st, err := os.Stat(filepath.Join(dir, exe(name)))
		if err != nil || !st.Mode().IsRegular() {
			missing = append(missing, name)
		}
	}
	return missing
}

// controlPlaneModule returns the files of the module to build, by path with
// forward slashes: the embedded ones without their .txt suffix, go.mod
// replaced by gomod unless nil, and no go.sum then (go mod tidy writes it).
func controlPlaneModule(gomod []byte) (map[string][]byte, error) {
	files := map[string][]byte{}
	err := fs.WalkDir(controlplane, "controlplane", func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		name, ok := strings.CutSuffix(strings.TrimPrefix(p, "controlplane/"), ".txt")
		if !ok {
			return fmt.Errorf("embedded %s: the name does not end with .txt", p)
		}
		b, err := controlplane.ReadFile(p)
		files[name] = b
		return err
	})
	if err != nil {
		return nil, err
	}
	if gomod != nil {
		files["go.mod"] = gomod
		delete(files, "go.sum")
	}
	return files, nil
}

// kubernetesGoMod returns the go.mod of k8s.io/kubernetes at v, from the
// module proxy (or the module cache).
func kubernetesGoMod(ctx context.Context, g goRunner, v kubeVersion) ([]byte, error) {
	out, err := g.run(ctx, "looking up k8s.io/kubernetes "+v.module(), v, false, "list", "-m", "-json", "k8s.io/kubernetes@"+v.module())
	if err != nil {
		return nil, err
	}
	var m struct{ GoMod string }
	if err := json.Unmarshal(out, &m); err != nil || m.GoMod == "" {
		return nil, fmt.Errorf("go list -m k8s.io/kubernetes@%s printed no go.mod: %s", v.module(), out)
	}
	return os.ReadFile(m.GoMod)
}

// controlPlaneGoMod writes the go.mod of the control plane for a version
// that is not pinned, from the go.mod of k8s.io/kubernetes at that version:
// it requires k8s.io/kubernetes and k8s.io/component-base, and replaces
// every staging module that k8s.io/kubernetes replaces with a directory of
// its own repository (./staging/src/k8s.io/...) by that module's release of
// the same version (v0.<minor>.<patch>), as k8s.io/kubernetes requires them
// at v0.0.0. go mod tidy adds the rest, etcd's server at the version that
// Kubernetes itself requires.
func controlPlaneGoMod(v kubeVersion, kubernetes []byte) ([]byte, error) {
	k, err := modfile.Parse("go.mod", kubernetes, nil)
	if err != nil {
		return nil, fmt.Errorf("the go.mod of k8s.io/kubernetes %s: %w", v.module(), err)
	}
	var b bytes.Buffer
	b.WriteString("module github.com/kopf-go/kopf/cmd/kopf-gen/controlplane\n\n")
	if k.Go != nil {
		fmt.Fprintf(&b, "go %s\n\n", k.Go.Version)
	}
	fmt.Fprintf(&b, "require (\n\tk8s.io/component-base %s\n\tk8s.io/kubernetes %s\n)\n", v.staging(), v.module())
	var replaces []string
	for _, r := range k.Replace {
		if strings.HasPrefix(r.New.Path, "./staging/") && r.New.Version == "" {
			replaces = append(replaces, fmt.Sprintf("\t%s => %s %s\n", r.Old.Path, r.Old.Path, v.staging()))
		}
	}
	if len(replaces) == 0 {
		return nil, fmt.Errorf("the go.mod of k8s.io/kubernetes %s replaces no staging module: not a Kubernetes release kopf-gen can build", v.module())
	}
	b.WriteString("\nreplace (\n" + strings.Join(replaces, "") + ")\n")
	f, err := modfile.Parse("go.mod", b.Bytes(), nil)
	if err != nil {
		return nil, err
	}
	return f.Format()
}

// goRunner runs the go command in the module directory.
type goRunner struct {
	tool, dir string
	env       []string // added to the environment
	stderr    io.Writer
}

// run runs go with args and returns its standard output. With stream,
// go's standard error goes on to stderr as it comes (a build's progress
// and compile errors); in any case a failure is explained by goFailure.
func (g goRunner) run(ctx context.Context, what string, v kubeVersion, stream bool, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, g.tool, args...)
	cmd.Dir = g.dir
	// The module's own settings, whatever the caller's: no workspace,
	// no -mod=vendor, binaries for the machine that kopf-gen runs on.
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=", "GOOS="+runtime.GOOS, "GOARCH="+runtime.GOARCH)
	cmd.Env = append(cmd.Env, g.env...)
	var stdout, errBuf bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &errBuf
	if stream {
		cmd.Stderr = io.MultiWriter(&errBuf, g.stderr)
	}
	if err := cmd.Run(); err != nil {
		return nil, goFailure(what, v, err, errBuf.String())
	}
	return stdout.Bytes(), nil
}

var (
	// unreachable are what the go command says when it cannot reach the
	// module proxy, or may not.
	unreachable = []string{"module lookup disabled by GOPROXY=off", "dial tcp", "no such host", "connection refused",
		"i/o timeout", "TLS handshake", "proxyconnect", "network is unreachable", "Client.Timeout", "connection reset"}
	// unknown are what it says of a version that does not exist.
	unknown = []string{"unknown revision", "invalid version", "not available", "404 Not Found", "410 Gone", "no matching versions",
		".info: no such file or directory"} // the last from a file:// GOPROXY
)

// goFailure explains a failed go command by its cause: an unreachable
// module proxy, an unknown Kubernetes version, or anything else with go's
// own words.
func goFailure(what string, v kubeVersion, err error, stderr string) error {
	msg := strings.TrimSpace(stderr)
	has := func(words []string) bool {
		for _, w := range words {
			if strings.Contains(msg, w) {
				return true
			}
		}
		return false
	}
	switch {
	case has(unreachable):
		return fmt.Errorf("%s: the Go module proxy is unreachable (go env GOPROXY says where it is): check the network, or set GOPROXY to a proxy that can be reached:\n%s", what, msg)
	case has(unknown) && strings.Contains(msg, "k8s.io/kubernetes@"+v.module()):
		return fmt.Errorf("Kubernetes %s is unknown: the Go module proxy has no k8s.io/kubernetes %s (releases: https://github.com/kubernetes/kubernetes/releases):\n%s", v, v.module(), msg)
	}
	return fmt.Errorf("%s failed (%w):\n%s", what, err, msg)
}
