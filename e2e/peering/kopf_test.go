package peering

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kopf-go/kopf/e2e/cluster"
	"github.com/kopf-go/kopf/e2e/internal/proc"
	"github.com/kopf-go/kopf/kopftest"
)

// kopfVersion is the Kopf that the tests of this package run beside
// kopf-go: its source is ../shared/kopf-1.44.6 next to the repository
// (see its README: Debian 12's python3 and packages, and the shims of
// Debian's older aiohttp and click).
const kopfVersion = "1.44.6"

// kopfPython is the Python with Kopf importable, and the environment that
// makes it so: $KOPF_PYTHON (default Debian's /usr/bin/python3: the
// packages Kopf needs are Debian's, not those of another python3 on PATH),
// with PYTHONPATH set to testdata/kopfsite (its sitecustomize.py supplies
// kopf/_cogs/helpers/versions.py where the source lacks it, then runs the
// next sitecustomize) followed by $KOPF_PYTHONPATH (default
// ../shared/kopf-1.44.6/debian12-shims:../shared/kopf-1.44.6 beside the
// repository's root).
//
// Where Kopf cannot be imported, the test fails under CI ($CI true, as
// .ci/run sets it: every CI run must run these tests) and skips elsewhere,
// saying why.
func kopfPython(t *testing.T) (string, []string) {
	t.Helper()
	python, env, err := findKopf()
	if err == nil {
		t.Logf("Python Kopf: %s with %s", python, env[0])
		return python, env
	}
	if ci, _ := strconv.ParseBool(os.Getenv("CI")); ci {
		t.Fatalf("Python Kopf cannot be run, and under CI it must: %v", err)
	}
	t.Skipf("Python Kopf cannot be run here: %v (see docs/testing.md; CI fails instead of skipping)", err)
	return "", nil
}

// findKopf is kopfPython's search, with an error that says what is
// missing.
func findKopf() (string, []string, error) {
	python := os.Getenv("KOPF_PYTHON")
	if python == "" {
		python = "/usr/bin/python3"
	}
	site, err := filepath.Abs(filepath.Join("testdata", "kopfsite"))
	if err != nil {
		return "", nil, err
	}
	path := os.Getenv("KOPF_PYTHONPATH")
	if path == "" {
		root, err := cluster.RepoRoot()
		if err != nil {
			return "", nil, err
		}
		dir := filepath.Join(filepath.Dir(root), "shared", "kopf-"+kopfVersion)
		if _, err := os.Stat(filepath.Join(dir, "kopf", "__init__.py")); err != nil {
			return "", nil, fmt.Errorf("no Kopf source beside the repository (%w); set KOPF_PYTHONPATH", err)
		}
		path = filepath.Join(dir, "debian12-shims") + string(os.PathListSeparator) + dir
	}
	env := []string{"PYTHONPATH=" + site + string(os.PathListSeparator) + path}
	cmd := exec.Command(python, "-c", "import kopf; print(kopf.__version__)")
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "", nil, fmt.Errorf("%s -c 'import kopf' with %s: %w: %s (the Debian packages of ../shared/kopf-%s/README.md: is .ci/run's apt-get done?)",
			python, env[0], err, bytes.TrimSpace(out), kopfVersion)
	}
	if got := string(bytes.TrimSpace(out)); got != kopfVersion {
		return "", nil, fmt.Errorf("%s with %s imports Kopf %q, want %s", python, env[0], got, kopfVersion)
	}
	return python, env, nil
}

// A real Python Kopf operator (Kopf's 06-peering example) and a kopf-go
// operator on one KopfPeering see each other and pause each other by
// priority, both ways: Kopf at 100 pauses kopf-go at 0; kopf-go at 666
// (--dev) pauses Kopf at 0. Fails under CI, skips elsewhere, where Kopf
// cannot be imported (kopfPython).
func TestRealKopf(t *testing.T) {
	python, env := kopfPython(t)
	ns := newNamespace(t, "real-kopf")
	newPeering(t, ns, "interop")
	kc, dir := kubeconfig(t), t.TempDir()
	script, err := filepath.Abs(filepath.Join("testdata", "kopf_peer.py"))
	if err != nil {
		t.Fatal(err)
	}
	runKopf := func(name string, priority string) *proc.Process {
		return start(t, python, filepath.Join(dir, name+".log"), append(env, "KUBECONFIG="+kc, "POD_ID="+name),
			"-m", "kopf", "run", script, "--verbose", "-n", ns, "-P", "interop", "--priority", priority)
	}

	// Kopf at 100 pauses kopf-go at 0; Kopf's exit resumes it.
	low := kopftest.Start(t, shared.Config, register(nil), peered(ns, "interop", 0, "kopf-go-low")...)
	py := runKopf("kopf-high", "100")
	low.WaitLog("Pausing operations in favour of [<Peer kopf-high: priority=100, lifetime=60, lastseen='", 60*time.Second)
	if rec := rawRecord(t, ns, "interop", "kopf-high"); !regexp.MustCompile(`^\{"lastseen":"[^"]+","lifetime":60,"priority":100\}$`).MatchString(rec) {
		t.Errorf("Kopf's record: %s", rec)
	}
	if err := py.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if !py.Wait(60 * time.Second) {
		t.Fatal("Kopf did not exit on SIGINT")
	}
	low.WaitLog("Resuming operations after the pause. Conflicting operators with the same priority are gone.", 30*time.Second)
	if err := low.Stop(); err != nil {
		t.Fatal(err)
	}

	// kopf-go at 666 pauses Kopf at 0, in Kopf's own words.
	py = runKopf("kopf-low", "0")
	py.WaitLog(t, "Keep-alive in 'interop' in '"+ns+"': ok.", 60*time.Second)
	dev := kopftest.Start(t, shared.Config, register(nil), peered(ns, "interop", 666, "kopf-go-dev")...)
	py.WaitLog(t, "Pausing operations in favour of [<Peer kopf-go-dev: priority=666, lifetime=60, lastseen='", 60*time.Second)

	// The same priority: Kopf warns and stays frozen (Kopf's rule); the
	// kopf-go operator warns in Kopf's words too, and, holding its Lease,
	// serves: at most one of them is active.
	same := kopftest.Start(t, shared.Config, register(nil), peered(ns, "interop", 0, "kopf-go-same")...)
	same.WaitLog("Pausing operations in favour of [<Peer kopf-go-dev: priority=666", 30*time.Second)
	if err := dev.Stop(); err != nil {
		t.Fatal(err)
	}
	py.WaitLog(t, "Possibly conflicting operators with the same priority: [<Peer kopf-go-same: priority=0, lifetime=60, lastseen='", 60*time.Second)
	same.WaitLog("Possibly conflicting operators with the same priority: [<Peer kopf-low: priority=0, lifetime=60, lastseen='", 30*time.Second)
	same.WaitLog("Resuming operations after the pause.", 30*time.Second)
	kopftest.NewObjects(t, shared.Config, examples, ns).Create(example("obj-same"))
	same.WaitOutcome(kopftest.Match{Name: "obj-same", Handler: "create_fn", Result: kopftest.Succeeded}, 30*time.Second)
	logs := py.Logs()
	if _, after, _ := strings.Cut(logs, "Possibly conflicting operators with the same priority: [<Peer kopf-go-same"); strings.Contains(after, "Resuming operations") {
		t.Errorf("Kopf resumed next to a peer of its priority:\n%s", logs)
	}
}
