package peering

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kopf-go/kopf/e2e/internal/proc"
	"github.com/kopf-go/kopf/kopftest"
)

// kopfPython is the Python with Kopf importable: $KOPF_PYTHON (default
// python3), with $KOPF_PYTHONPATH (e.g. a checkout of Kopf's source) on
// its path. Kopf 1.44.6 ran here from its source (git archive 1.44.6
// kopf) with Python 3.11, click 8.4 and Debian 12's python3-aiohttp,
// -iso8601, -pythonjsonlogger, -jsonpatch, -yaml; two shims: the
// kopf/_cogs/helpers/versions.py that setuptools-scm writes on install
// (__version__, __version_tuple__, __commit_id__), and no proxy= to
// aiohttp.ClientSession in kopf/_cogs/clients/auth.py (aiohttp 3.8 has
// none). The peering code is Kopf's own, unchanged.
func kopfPython(t *testing.T) (string, []string) {
	t.Helper()
	python := os.Getenv("KOPF_PYTHON")
	if python == "" {
		python = "python3"
	}
	env := []string{"PYTHONPATH=" + os.Getenv("KOPF_PYTHONPATH")}
	cmd := exec.Command(python, "-c", "import kopf")
	cmd.Env = append(os.Environ(), env...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Skipf("Python Kopf cannot be run here (%s -c 'import kopf': %v: %s); set KOPF_PYTHON and KOPF_PYTHONPATH", python, err, out)
	}
	return python, env
}

// A real Python Kopf operator (Kopf's 06-peering example) and a kopf-go
// operator on one KopfPeering see each other and pause each other by
// priority, both ways: Kopf at 100 pauses kopf-go at 0; kopf-go at 666
// (--dev) pauses Kopf at 0. Skipped where Kopf cannot be imported.
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
