package reliability_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"

	"github.com/kopf-go/kopf/e2e/cluster"
	"github.com/kopf-go/kopf/e2e/internal/proc"
	"github.com/kopf-go/kopf/kopftest"
	"github.com/kopf-go/kopf/runtime/causes"
	"github.com/kopf-go/kopf/runtime/kwargs"
	"github.com/kopf-go/kopf/runtime/logging"
	"github.com/kopf-go/kopf/runtime/operator"
	"github.com/kopf-go/kopf/runtime/registry"
	"github.com/kopf-go/kopf/runtime/settings"
)

// hungGrace is how long the operator waits, after cancelling the workers at
// the exit timeout, before it leaves the hung ones behind (operator's
// hungGrace).
const hungGrace = time.Second

// deafHandler returns a handler that ignores its context: it reports its
// invocation on invoked, then blocks until release is called (at the
// latest when the test ends) and returns {"message": message}.
func deafHandler(t *testing.T, message string) (fn registry.ChangingFn, invoked <-chan struct{}, release func()) {
	t.Helper()
	calls, unblock := make(chan struct{}, 1), make(chan struct{})
	var once sync.Once
	release = func() { once.Do(func() { close(unblock) }) }
	t.Cleanup(release)
	fn = func(context.Context, *kwargs.Changing) (any, error) {
		calls <- struct{}{}
		<-unblock // deaf to the context
		return map[string]any{"message": message}, nil
	}
	return fn, calls, release
}

// A handler that ignores its context does not keep the operator from
// exiting: Run returns within the exit timeout and a second, naming the
// object; what the handler returns afterwards is not stored.
func TestExitLeavesHungHandlersBehind(t *testing.T) {
	t.Parallel()
	ns := namespace(t, "exit-hung")
	ri := objects(shared.Config, ns)
	fn, invoked, release := deafHandler(t, "late")
	s := fastSettings()
	s.Queueing.ExitTimeout = time.Second
	op := runInProcess(t, shared.Config, ns, s, handler("hung_fn", fn, causes.Create))

	create(t, ri, example("hung", nil, nil, nil))
	receiveWithin(t, invoked, 30*time.Second, "hung_fn to be invoked")
	elapsed, err := op.stop(t, 30*time.Second)
	if err != nil {
		t.Errorf("Run() = %v, want nil", err)
	}
	if limit := s.Queueing.ExitTimeout + hungGrace + 3*time.Second; elapsed > limit {
		t.Errorf("Run returned %s after the stop, want at most %s (exit timeout %s)", elapsed.Round(time.Millisecond), limit, s.Queueing.ExitTimeout)
	}
	for _, line := range []string{
		fmt.Sprintf("[WARNING ] Unprocessed streams left for ['%s/hung'] of kopfexamples.v1.kopf.dev after the exit timeout of 1 seconds; cancelling them.", ns),
		fmt.Sprintf("[WARNING ] Hung tasks are not stopped: exiting without waiting for them; tasks left: ['%s/hung'] of kopfexamples.v1.kopf.dev.", ns),
	} {
		if !strings.Contains(op.logs.String(), line) {
			t.Errorf("the operator did not log %q", line)
		}
	}

	// The handler returns a success after the exit: nothing is stored.
	release()
	waitLog(t, op.logs, fmt.Sprintf("[%s/hung] The operator is exiting; the outcome of this cycle is not stored", ns), 10*time.Second)
	obj, err := ri.Get(context.Background(), "hung", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if outcome := storedOutcome(t, obj, "hung_fn"); outcome != "" {
		t.Errorf("the result returned after the exit is stored: %s\nobject: %s", outcome, dump(obj))
	}
}

// A handler that returns after the stop is requested but within the exit
// timeout has its result stored, and the operator exits as soon as it is.
func TestExitStoresWhatFinishesInTime(t *testing.T) {
	t.Parallel()
	ns := namespace(t, "exit-in-time")
	ri := objects(shared.Config, ns)
	fn, invoked, release := deafHandler(t, "in time")
	s := fastSettings()
	s.Queueing.ExitTimeout = 20 * time.Second
	op := runInProcess(t, shared.Config, ns, s, handler("slow_fn", fn, causes.Create))

	create(t, ri, example("in-time", nil, nil, nil))
	receiveWithin(t, invoked, 30*time.Second, "slow_fn to be invoked")
	op.cancel() // the stop begins before the handler returns
	release()
	elapsed, err := op.stop(t, 30*time.Second)
	if err != nil {
		t.Errorf("Run() = %v, want nil", err)
	}
	if elapsed >= s.Queueing.ExitTimeout {
		t.Errorf("Run returned %s after the stop: it waited for the exit timeout (%s) although the handler had returned", elapsed.Round(time.Millisecond), s.Queueing.ExitTimeout)
	}
	for _, text := range []string{"Unprocessed streams left", "Hung tasks"} {
		if strings.Contains(op.logs.String(), text) {
			t.Errorf("the operator logged %q although every handler returned in time", text)
		}
	}
	obj, err := ri.Get(context.Background(), "in-time", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got, _, _ := unstructured.NestedString(obj.Object, "status", "slow_fn", "message"); got != "in time" {
		t.Errorf("status.slow_fn.message = %q, want %q: the result returned within the exit timeout is not stored\nobject: %s", got, "in time", dump(obj))
	}
}

// The operator binary on signals while a handler is hung (internal/hungop,
// Queueing.ExitTimeout at its default of 2 s): one SIGINT or SIGTERM exits
// with 0 after the exit timeout, naming the hung object; a second signal
// exits at once with 1.
func TestExitOnSignals(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bin := proc.Build(t, "./internal/hungop", dir)
	kubeconfig := shared.Kubeconfig(t, dir)
	const exitTimeout = 2 * time.Second // settings.Default()
	tests := []struct {
		name    string
		signals []syscall.Signal
		code    int
		// within bounds the time from the last signal to the exit.
		within   time.Duration
		wantLogs []string // {key} is the object's namespace/name
		notLogs  []string
	}{
		{
			name: "SIGINT", signals: []syscall.Signal{syscall.SIGINT}, code: 0, within: exitTimeout + hungGrace + 5*time.Second,
			wantLogs: []string{
				"[INFO    ] Signal SIGINT is received. Operator is stopping.",
				"[WARNING ] Unprocessed streams left for ['{key}'] of kopfexamples.v1.kopf.dev after the exit timeout of 2 seconds; cancelling them.",
				"[WARNING ] Hung tasks are not stopped: exiting without waiting for them; tasks left: ['{key}'] of kopfexamples.v1.kopf.dev.",
			},
		},
		{
			name: "SIGTERM", signals: []syscall.Signal{syscall.SIGTERM}, code: 0, within: exitTimeout + hungGrace + 5*time.Second,
			wantLogs: []string{
				"[INFO    ] Signal SIGTERM is received. Operator is stopping.",
				"[WARNING ] Hung tasks are not stopped: exiting without waiting for them; tasks left: ['{key}'] of kopfexamples.v1.kopf.dev.",
			},
		},
		{
			name: "SIGINT twice", signals: []syscall.Signal{syscall.SIGINT, syscall.SIGINT}, code: 1, within: time.Second,
			wantLogs: []string{
				"[INFO    ] Signal SIGINT is received. Operator is stopping.",
				"[WARNING ] Signal SIGINT is received again. Operator is exiting immediately, without waiting for the handlers.",
			},
			notLogs: []string{"Unprocessed streams left", "Hung tasks"},
		},
		{
			name: "SIGTERM, then SIGINT", signals: []syscall.Signal{syscall.SIGTERM, syscall.SIGINT}, code: 1, within: time.Second,
			wantLogs: []string{
				"[INFO    ] Signal SIGTERM is received. Operator is stopping.",
				"[WARNING ] Signal SIGINT is received again. Operator is exiting immediately, without waiting for the handlers.",
			},
			notLogs: []string{"Hung tasks"},
		},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ns := namespace(t, fmt.Sprintf("exit-signals-%d", i))
			ri := objects(shared.Config, ns)
			logPath := filepath.Join(dir, fmt.Sprintf("operator-%d.log", i))
			p := proc.Start(t, bin, proc.Options{Log: logPath, Args: []string{"run", "-n", ns, "--standalone", "-v", "--kubeconfig", kubeconfig}})
			create(t, ri, example("hung", nil, nil, nil))
			key := ns + "/hung"
			waitFileContains(t, logPath, fmt.Sprintf("[%s] hung_fn is invoked", key), 30*time.Second)

			var last time.Time
			for j, sig := range tt.signals {
				if j > 0 { // the first must have been taken, or the two may merge into one
					waitFileContains(t, logPath, "is received. Operator is stopping.", 10*time.Second)
				}
				last = time.Now()
				if err := p.Signal(sig); err != nil {
					t.Fatalf("sending %s: %v", sig, err)
				}
			}
			if !p.Wait(tt.within + 20*time.Second) {
				t.Fatalf("the operator did not exit in %s after the last signal", tt.within+20*time.Second)
			}
			elapsed := p.Exited().Sub(last)
			if code := p.ExitCode(); code != tt.code {
				t.Errorf("exit code %d, want %d", code, tt.code)
			}
			if elapsed > tt.within {
				t.Errorf("exited %s after the last signal, want at most %s", elapsed.Round(time.Millisecond), tt.within)
			}
			logs := readFile(t, logPath)
			for _, line := range tt.wantLogs {
				if line = strings.ReplaceAll(line, "{key}", key); !strings.Contains(logs, line) {
					t.Errorf("the operator did not log %q", line)
				}
			}
			for _, text := range tt.notLogs {
				if strings.Contains(logs, text) {
					t.Errorf("the operator logged %q", text)
				}
			}
		})
	}
}

// inProcess is an operator run in the test's process whose stop the test
// controls and times.
type inProcess struct {
	cancel   context.CancelFunc
	done     chan error
	logs     *kopftest.Buffer
	stopOnce sync.Once
}

// runInProcess runs an operator serving ns until stop or the end of the
// test.
func runInProcess(t *testing.T, cfg *rest.Config, ns string, s *settings.Settings, handlers ...registry.ChangingHandler) *inProcess {
	t.Helper()
	reg := registry.New()
	if err := register(handlers...)(reg); err != nil {
		t.Fatal(err)
	}
	logs := &kopftest.Buffer{}
	ctx, cancel := context.WithCancel(context.Background())
	op := &inProcess{cancel: cancel, done: make(chan error, 1), logs: logs}
	go func() {
		op.done <- operator.Run(ctx, reg, operator.Options{Config: rest.CopyConfig(cfg),
			Namespaces: []string{ns}, Standalone: true, Settings: s,
			Logger: logging.New(logs, logging.Full, slog.LevelDebug),
		})
	}()
	t.Cleanup(func() {
		_, _ = op.stop(t, 30*time.Second)
		if t.Failed() {
			t.Logf("operator log:\n%s", logs.String())
		}
	})
	return op
}

// stop cancels the operator (if not yet) and waits for Run to return,
// reporting how long that took and Run's error; it fails the test if Run
// does not return within timeout. Only the first call waits.
func (o *inProcess) stop(t *testing.T, timeout time.Duration) (elapsed time.Duration, err error) {
	t.Helper()
	o.stopOnce.Do(func() {
		start := time.Now()
		o.cancel()
		select {
		case err = <-o.done:
			elapsed = time.Since(start)
		case <-time.After(timeout):
			t.Errorf("the operator did not return in %s after the stop", timeout)
			elapsed = timeout
		}
	})
	return elapsed, err
}

// storedOutcome describes what the operator stored of the handler's
// outcome in obj: its result in status, or a progress record (annotation
// or status.kopf.progress) marking it succeeded or failed; "" if none.
func storedOutcome(t *testing.T, obj *unstructured.Unstructured, id string) string {
	t.Helper()
	var found []string
	if v, ok, _ := unstructured.NestedFieldNoCopy(obj.Object, "status", id); ok {
		found = append(found, fmt.Sprintf("status.%s = %v", id, v))
	}
	records := map[string]map[string]any{}
	if raw, ok := obj.GetAnnotations()[prefix+id]; ok {
		var rec map[string]any
		if err := json.Unmarshal([]byte(raw), &rec); err != nil {
			t.Fatalf("the progress annotation of %s is not JSON: %q", id, raw)
		}
		records["annotation "+prefix+id] = rec
	}
	if rec, ok, _ := unstructured.NestedMap(obj.Object, "status", "kopf", "progress", id); ok {
		records["status.kopf.progress."+id] = rec
	}
	for where, rec := range records {
		if rec["success"] == true || rec["failure"] == true {
			found = append(found, fmt.Sprintf("%s = %v", where, rec))
		}
	}
	return strings.Join(found, "; ")
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// waitFileContains waits until the file contains text.
func waitFileContains(t *testing.T, path, text string, timeout time.Duration) {
	t.Helper()
	err := cluster.WaitFor(context.Background(), timeout, func(context.Context) (bool, error) {
		data, err := os.ReadFile(path)
		return strings.Contains(string(data), text), err
	})
	if err != nil {
		t.Fatalf("%s does not contain %q in %s: %v", filepath.Base(path), text, timeout, err)
	}
}

// waitLog waits until the log contains text.
func waitLog(t *testing.T, logs *kopftest.Buffer, text string, timeout time.Duration) {
	t.Helper()
	err := cluster.WaitFor(context.Background(), timeout, func(context.Context) (bool, error) {
		return strings.Contains(logs.String(), text), nil
	})
	if err != nil {
		t.Fatalf("the operator did not log %q in %s: %v", text, timeout, err)
	}
}

func receiveWithin[T any](t *testing.T, ch <-chan T, timeout time.Duration, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(timeout):
		t.Fatalf("timed out after %s waiting for %s", timeout, what)
		panic("unreachable")
	}
}
