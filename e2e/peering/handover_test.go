package peering

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kopf-go/kopf"
	"github.com/kopf-go/kopf/e2e/internal/proc"
	"github.com/kopf-go/kopf/kopftest"
)

// handoverDelay is flaky_fn's delay after its first attempt fails: long
// enough for the operator that failed it to stop before the retry is due,
// so that the next operator runs the retry.
const handoverDelay = 15 * time.Second

// diffBaseKey is the annotation of Kopf's diff-base (the last handled
// essence).
const diffBaseKey = "kopf.zalando.org/last-handled-configuration"

// handOver is one hand-over test's namespace, objects and ledger: the
// file to which both operators' handlers append one line per run (see
// testdata/kopf_handover.py for the format).
type handOver struct {
	t      *testing.T
	ns     string
	ledger string
	objs   *kopftest.Objects
	kc     string
	python string
	env    []string
	py     *proc.Process // the Kopf operator running, if any
}

// kopf starts the real Python Kopf operator of testdata/kopf_handover.py,
// standalone in h's namespace, as the operator named name in the ledger.
func (h *handOver) kopf(name string) *proc.Process {
	h.t.Helper()
	script, err := filepath.Abs(filepath.Join("testdata", "kopf_handover.py"))
	if err != nil {
		h.t.Fatal(err)
	}
	env := append(slices.Clone(h.env), "KUBECONFIG="+h.kc, "HANDOVER_LEDGER="+h.ledger,
		"HANDOVER_OPERATOR="+name, fmt.Sprintf("HANDOVER_DELAY=%g", handoverDelay.Seconds()))
	h.py = start(h.t, h.python, filepath.Join(filepath.Dir(h.ledger), name+".log"), env,
		"-m", "kopf", "run", script, "--standalone", "--verbose", "-n", h.ns)
	return h.py
}

// kopfRunning fails the test at once if the Kopf operator that should be
// running has exited (its log follows the failure).
func (h *handOver) kopfRunning() {
	h.t.Helper()
	if h.py == nil {
		return
	}
	select {
	case <-h.py.Done():
		h.t.Fatalf("%s exited with code %d", h.py.Name, h.py.ExitCode())
	default:
	}
}

// stopKopf stops a Kopf operator as a terminal does (SIGINT) and waits
// for it to exit.
func (h *handOver) stopKopf(py *proc.Process) {
	h.t.Helper()
	if err := py.Signal(syscall.SIGINT); err != nil {
		h.t.Fatal(err)
	}
	if !py.Wait(60 * time.Second) {
		h.t.Fatalf("%s did not exit on SIGINT", py.Name)
	}
	h.py = nil
}

// kopfGo starts a kopf-go operator in the test's process with the same
// handlers as testdata/kopf_handover.py, under Kopf's ids (those that
// kopf-gen gives the same functions: field_fn/spec.field for the field
// handler), as the operator named "kopf-go" in the ledger.
func (h *handOver) kopfGo() *kopftest.Operator {
	h.t.Helper()
	record := func(handler string, kw *kopf.ChangingKwargs) error {
		f, err := os.OpenFile(h.ledger, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = fmt.Fprintf(f, "kopf-go %s %s retry=%d\n", handler, kw.Name, kw.Retry)
		return err
	}
	register := func(r *kopf.Registry) error {
		for _, h := range []kopf.ChangingHandler{
			{ID: "create_fn", Reasons: []kopf.Reason{kopf.ReasonCreate}, Fn: func(_ context.Context, kw *kopf.ChangingKwargs) (any, error) {
				return nil, record("create_fn", kw)
			}},
			{ID: "flaky_fn", Reasons: []kopf.Reason{kopf.ReasonCreate}, Fn: func(_ context.Context, kw *kopf.ChangingKwargs) (any, error) {
				if err := record("flaky_fn", kw); err != nil {
					return nil, err
				}
				if flaky, _, _ := unstructured.NestedBool(kw.Body, "spec", "flaky"); flaky && kw.Retry == 0 {
					return nil, kopf.NewTemporaryError("fails once", handoverDelay)
				}
				return nil, nil
			}},
			{ID: "field_fn/spec.field", Reasons: []kopf.Reason{kopf.ReasonUpdate}, Field: []string{"spec", "field"}, Fn: func(_ context.Context, kw *kopf.ChangingKwargs) (any, error) {
				return nil, record("field_fn/spec.field", kw)
			}},
		} {
			h.Selector = selector
			if err := r.AddChanging(h); err != nil {
				return err
			}
		}
		return nil
	}
	return kopftest.Start(h.t, shared.Config, register, kopf.WithNamespaces(h.ns))
}

// lines are the ledger's lines so far.
func (h *handOver) lines() []string {
	h.t.Helper()
	data, err := os.ReadFile(h.ledger)
	if err != nil && !os.IsNotExist(err) {
		h.t.Fatal(err)
	}
	return strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
}

// waitRuns waits until the ledger has each of want.
func (h *handOver) waitRuns(want ...string) {
	h.t.Helper()
	waitFor(h.t, fmt.Sprintf("the handlers' runs %q", want), 60*time.Second, func() bool {
		h.kopfRunning()
		got := h.lines()
		for _, w := range want {
			if !slices.Contains(got, w) {
				return false
			}
		}
		return true
	})
}

// create creates a KopfExample with spec.field v1; flaky fails its
// flaky_fn once.
func (h *handOver) create(name string, flaky bool) {
	h.t.Helper()
	obj := example(name)
	obj["spec"] = map[string]any{"field": "v1", "flaky": flaky}
	h.objs.Create(obj)
}

// setField changes the object's spec.field: an update for field_fn.
func (h *handOver) setField(name, value string) {
	h.t.Helper()
	h.objs.MergePatch(name, map[string]any{"spec": map[string]any{"field": value}})
}

// waitHandled waits until the object's diff-base has spec.field value:
// its creation, or the update to value, is handled and stored.
func (h *handOver) waitHandled(name, value string) {
	h.t.Helper()
	h.objs.WaitFor(name, 60*time.Second, func(obj *unstructured.Unstructured) bool {
		h.kopfRunning()
		var base map[string]any
		if json.Unmarshal([]byte(obj.GetAnnotations()[diffBaseKey]), &base) != nil {
			return false
		}
		got, _, _ := unstructured.NestedString(base, "spec", "field")
		return got == value
	})
}

// waitRetryPending waits until the object's flaky_fn has a stored
// failure with its retry still to come (Kopf's progress record: one
// retry, neither success nor failure), as Kopf's or kopf-go's persisted
// state says.
func (h *handOver) waitRetryPending(name string) {
	h.t.Helper()
	h.objs.WaitFor(name, 60*time.Second, func(obj *unstructured.Unstructured) bool {
		h.kopfRunning()
		var rec struct {
			Retries int  `json:"retries"`
			Success bool `json:"success"`
			Failure bool `json:"failure"`
		}
		raw, ok := obj.GetAnnotations()["kopf.zalando.org/flaky_fn"]
		return ok && json.Unmarshal([]byte(raw), &rec) == nil && rec.Retries == 1 && !rec.Success && !rec.Failure
	})
}

// A real Python Kopf operator (testdata/kopf_handover.py) handles objects
// and stops with a retry pending; a kopf-go operator with the same
// handlers takes over, re-runs no handler that succeeded, runs the update
// that came meanwhile and finishes the pending retry, and stops with a
// retry of its own pending; Kopf comes back and does the same. Each
// handler runs exactly once per object and cause, counted in the ledger
// that both operators' handlers write: the promise of a move from Kopf
// to kopf-go, and back.
func TestHandOver(t *testing.T) {
	python, env := kopfPython(t)
	dir := t.TempDir()
	ns := newNamespace(t, "hand-over")
	h := &handOver{t: t, ns: ns, ledger: filepath.Join(dir, "ledger"), objs: kopftest.NewObjects(t, shared.Config, examples, ns),
		kc: kubeconfig(t), python: python, env: env}

	// Kopf: a is created and updated; b's flaky_fn fails, its retry due
	// after Kopf has stopped.
	py := h.kopf("kopf-1")
	h.create("obj-a", false)
	h.create("obj-b", true)
	h.waitHandled("obj-a", "v1")
	h.setField("obj-a", "v2")
	h.waitHandled("obj-a", "v2")
	h.waitRetryPending("obj-b")
	h.stopKopf(py)

	// kopf-go: a's update while no operator ran, b's retry, c's creation
	// with its own retry left pending; then a sentinel, created last:
	// once it is handled, anything re-run would have been re-run.
	h.setField("obj-a", "v3")
	h.create("obj-c", true)
	op := h.kopfGo()
	h.waitRuns("kopf-go field_fn/spec.field obj-a retry=0", "kopf-go flaky_fn obj-b retry=1", "kopf-go flaky_fn obj-c retry=0")
	h.waitHandled("obj-a", "v3")
	h.waitHandled("obj-b", "v1")
	h.waitRetryPending("obj-c")
	h.create("obj-go", false)
	h.waitHandled("obj-go", "v1")
	if err := op.Stop(); err != nil {
		t.Fatal(err)
	}

	// Kopf again: b's update while no operator ran, c's retry, a sentinel.
	h.setField("obj-b", "v2")
	py = h.kopf("kopf-2")
	h.waitRuns("kopf-2 field_fn/spec.field obj-b retry=0", "kopf-2 flaky_fn obj-c retry=1")
	h.waitHandled("obj-b", "v2")
	h.waitHandled("obj-c", "v1")
	h.create("obj-py", false)
	h.waitHandled("obj-py", "v1")
	h.stopKopf(py)

	h.checkLedger()
}

// checkLedger checks that each handler ran once per object and cause, in
// the operator expected, and no more.
func (h *handOver) checkLedger() {
	h.t.Helper()
	want := []string{
		"kopf-1 create_fn obj-a retry=0", "kopf-1 flaky_fn obj-a retry=0", "kopf-1 field_fn/spec.field obj-a retry=0",
		"kopf-1 create_fn obj-b retry=0", "kopf-1 flaky_fn obj-b retry=0",
		"kopf-go field_fn/spec.field obj-a retry=0", "kopf-go flaky_fn obj-b retry=1",
		"kopf-go create_fn obj-c retry=0", "kopf-go flaky_fn obj-c retry=0",
		"kopf-go create_fn obj-go retry=0", "kopf-go flaky_fn obj-go retry=0",
		"kopf-2 field_fn/spec.field obj-b retry=0", "kopf-2 flaky_fn obj-c retry=1",
		"kopf-2 create_fn obj-py retry=0", "kopf-2 flaky_fn obj-py retry=0",
	}
	got := h.lines()
	count := map[string]int{}
	for _, w := range want {
		count[w]++
	}
	for _, g := range got {
		count[g]--
	}
	for _, run := range slices.Sorted(maps.Keys(count)) {
		if n := count[run]; n < 0 {
			h.t.Errorf("ran %d time(s) more than expected (a re-run): %s", -n, run)
		} else if n > 0 {
			h.t.Errorf("did not run: %s", run)
		}
	}
}
