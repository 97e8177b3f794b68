package reliability_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kopf-go/kopf/e2e/cluster"
	"github.com/kopf-go/kopf/e2e/internal/proc"
)

// An operator process killed with SIGKILL while a handler runs loses that
// handler's attempt, and nothing else: after a restart, handlers that
// succeeded before the kill do not run again, the interrupted one runs
// again, and every object ends fully handled.
//
// The operator is internal/slowop, built here and run as `run -A
// --standalone -v` with a kubeconfig, as it would be deployed: creation
// handlers fast_fn and then slow_fn (5 s), both recording every
// invocation in a file that survives the kill.
func TestSIGKILLMidHandler(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bin := proc.Build(t, "./internal/slowop", dir)
	c := startCluster(t)
	kubeconfig := c.Kubeconfig(t, dir)
	record := filepath.Join(dir, "record")
	ri := objects(c.Config, "default")

	op1 := startProcess(t, bin, kubeconfig, record, filepath.Join(dir, "operator-1.log"))
	names := []string{"sigkill-1", "sigkill-2", "sigkill-3"}
	for _, name := range names {
		create(t, ri, example(name, nil, nil, nil))
	}
	// Kill it while every object's slow handler sleeps.
	waitRecord(t, record, 30*time.Second, func(r invocations) bool {
		for _, name := range names {
			if r.count("invoked", "slow_fn", name) == 0 {
				return false
			}
		}
		return true
	})
	op1.Kill(t)
	before := readRecord(t, record)
	for _, name := range names {
		if n := before.count("finished", "slow_fn", name); n != 0 {
			t.Fatalf("slow_fn finished for %s before the kill: the test did not interrupt it", name)
		}
		if n := before.count("finished", "fast_fn", name); n != 1 {
			t.Fatalf("fast_fn finished %d times for %s before the kill, want 1", n, name)
		}
	}

	op2 := startProcess(t, bin, kubeconfig, record, filepath.Join(dir, "operator-2.log"))
	for _, name := range names {
		obj := waitHandled(t, ri, name, 60*time.Second, "fast_fn", "slow_fn")
		if got := leftovers(obj); len(got) != 0 {
			t.Errorf("%s: progress left behind: %v", name, got)
		}
	}
	op2.Stop(t, 15*time.Second)

	after := readRecord(t, record)
	for _, name := range names {
		if n := after.count("invoked", "fast_fn", name); n != 1 {
			t.Errorf("fast_fn, which had succeeded before the kill, was invoked %d times in all for %s, want 1 (it ran again after the restart)", n, name)
		}
		if n := after.count("invoked", "slow_fn", name); n != 2 {
			t.Errorf("slow_fn, interrupted by the kill, was invoked %d times in all for %s, want 2", n, name)
		}
		if n := after.count("finished", "slow_fn", name); n != 1 {
			t.Errorf("slow_fn finished %d times for %s, want 1", n, name)
		}
	}
	if t.Failed() {
		t.Logf("invocations:\n%s", after.raw)
	}
}

// startProcess starts the slowop binary bin, recording its invocations
// into record, its output into logPath.
func startProcess(t *testing.T, bin, kubeconfig, record, logPath string) *proc.Process {
	t.Helper()
	return proc.Start(t, bin, proc.Options{
		Log:  logPath,
		Env:  append(os.Environ(), "SLOWOP_RECORD="+record),
		Args: []string{"run", "-A", "--standalone", "-v", "--kubeconfig", kubeconfig},
	})
}

// invocations is the content of the slowop record file.
type invocations struct {
	raw   string
	lines [][]string // event, handler, namespace/name, retry=, pid=
}

func (r invocations) count(event, handler, name string) int {
	n := 0
	for _, l := range r.lines {
		if len(l) >= 3 && l[0] == event && l[1] == handler && strings.HasSuffix(l[2], "/"+name) {
			n++
		}
	}
	return n
}

func readRecord(t *testing.T, path string) invocations {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	r := invocations{raw: string(data)}
	for _, line := range strings.Split(string(data), "\n") {
		if line != "" {
			r.lines = append(r.lines, strings.Fields(line))
		}
	}
	return r
}

func waitRecord(t *testing.T, path string, timeout time.Duration, cond func(invocations) bool) {
	t.Helper()
	err := cluster.WaitFor(context.Background(), timeout, func(context.Context) (bool, error) {
		return cond(readRecord(t, path)), nil
	})
	if err != nil {
		t.Fatalf("waiting for the operator's invocations: %v\nrecord:\n%s", err, readRecord(t, path).raw)
	}
}
