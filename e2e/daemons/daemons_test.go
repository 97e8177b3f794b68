// Package daemons tests daemons and timers on a real control plane: their
// start and stop with the object and its filters, the operator's exit and
// restart, the finalizer, and the timers' schedules (bounds, not exact
// times). Handlers are registered by hand through kopf.Registry.
package daemons

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kopf-go/kopf"
	"github.com/kopf-go/kopf/envtest"
	"github.com/kopf-go/kopf/kopftest"
)

var (
	gvr      = schema.GroupVersionResource{Group: "kopf.dev", Version: "v1", Resource: "kopfexamples"}
	selector = kopf.Selector{Group: "kopf.dev", Version: "v1", Name: "kopfexamples"}
)

const finalizer = "kopf.zalando.org/KopfFinalizerMarker"

// recorder collects what the handlers saw, safe for their goroutines.
type recorder struct {
	mu     sync.Mutex
	times  []time.Time
	causes []error
	fields []string // spec.field as each call saw it
}

func (r *recorder) saw(field string) {
	r.mu.Lock()
	r.times = append(r.times, time.Now())
	r.fields = append(r.fields, field)
	r.mu.Unlock()
}

func (r *recorder) mark() {
	r.mu.Lock()
	r.times = append(r.times, time.Now())
	r.mu.Unlock()
}

func (r *recorder) stopped(cause error) {
	r.mu.Lock()
	r.causes = append(r.causes, cause)
	r.mu.Unlock()
}

func (r *recorder) snapshot() ([]time.Time, []error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.times), slices.Clone(r.causes)
}

// waitFor polls cond until it holds, failing the test after timeout.
func waitFor(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func namespace(t *testing.T, cfg *rest.Config, name string) string {
	t.Helper()
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := cs.CoreV1().Namespaces().Create(context.Background(), ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return name
}

func example(name string, labels map[string]any) map[string]any {
	meta := map[string]any{"name": name}
	if labels != nil {
		meta["labels"] = labels
	}
	return map[string]any{"apiVersion": "kopf.dev/v1", "kind": "KopfExample", "metadata": meta, "spec": map[string]any{"field": "value"}}
}

func hasFinalizer(obj *unstructured.Unstructured) bool {
	return slices.Contains(obj.GetFinalizers(), finalizer)
}

func register(daemons []kopf.DaemonHandler, timers []kopf.TimerHandler) func(*kopf.Registry) error {
	return func(r *kopf.Registry) error {
		for _, d := range daemons {
			d.Selector = selector
			if err := r.AddDaemon(d); err != nil {
				return err
			}
		}
		for _, tm := range timers {
			tm.Selector = selector
			if err := r.AddTimer(tm); err != nil {
				return err
			}
		}
		return nil
	}
}

func TestDaemonsAndTimers(t *testing.T) {
	env := envtest.Start(t, envtest.WithCRDs(filepath.Join("..", "..", "examples", "crd.yaml")))

	t.Run("a daemon starts and stops with its object", func(t *testing.T) {
		ns := namespace(t, env.Config, "start-stop")
		objs := kopftest.NewObjects(t, env.Config, gvr, ns)
		var rec recorder
		op := kopftest.Start(t, env.Config, register([]kopf.DaemonHandler{{
			ID: "background",
			Fn: func(ctx context.Context, kw *kopf.DaemonKwargs) (any, error) {
				rec.mark()
				kw.Patch.Status()["daemon"] = "running"
				<-kw.Stopped.Done()
				rec.stopped(context.Cause(kw.Stopped))
				return nil, nil
			},
		}}, nil), kopf.WithNamespaces(ns))
		objs.Create(example("obj", nil))
		op.WaitLog(fmt.Sprintf("[%s/obj] Daemon 'background' is invoked.", ns), 20*time.Second)
		objs.WaitFor("obj", 10*time.Second, hasFinalizer)
		objs.Delete("obj", 20*time.Second)
		op.WaitLog(fmt.Sprintf("[%s/obj] Daemon 'background' has exited on request and will not be retried or restarted.", ns), 5*time.Second)
		times, causes := rec.snapshot()
		if len(times) != 1 || len(causes) != 1 || !errors.Is(causes[0], kopf.StopDeleted) {
			t.Errorf("started %d times, stopped for %v; want once, for the deletion", len(times), causes)
		}
		op.WaitOutcome(kopftest.Match{Handler: "background", Cause: kopftest.CauseDaemon, Result: kopftest.Succeeded}, 5*time.Second)
	})

	t.Run("a daemon follows its filters", func(t *testing.T) {
		ns := namespace(t, env.Config, "filters")
		objs := kopftest.NewObjects(t, env.Config, gvr, ns)
		var rec recorder
		op := kopftest.Start(t, env.Config, register([]kopf.DaemonHandler{{
			ID:     "filtered",
			Filter: kopf.Filter{Labels: map[string]kopf.Matcher{"run": kopf.Equal("yes")}},
			Fn: func(ctx context.Context, kw *kopf.DaemonKwargs) (any, error) {
				rec.mark()
				<-ctx.Done()
				rec.stopped(context.Cause(kw.Stopped))
				return nil, nil
			},
		}}, nil), kopf.WithNamespaces(ns))
		objs.Create(example("obj", map[string]any{"run": "yes"}))
		waitFor(t, "the daemon's start", 20*time.Second, func() bool { times, _ := rec.snapshot(); return len(times) == 1 })
		objs.MergePatch("obj", map[string]any{"metadata": map[string]any{"labels": map[string]any{"run": "no"}}})
		waitFor(t, "the daemon's stop", 10*time.Second, func() bool { _, causes := rec.snapshot(); return len(causes) == 1 })
		// Not matching, the object needs no finalizer.
		objs.WaitFor("obj", 10*time.Second, func(obj *unstructured.Unstructured) bool { return !hasFinalizer(obj) })
		objs.MergePatch("obj", map[string]any{"metadata": map[string]any{"labels": map[string]any{"run": "yes"}}})
		waitFor(t, "the daemon's restart", 10*time.Second, func() bool { times, _ := rec.snapshot(); return len(times) == 2 })
		// The daemon starts in the cycle whose patch adds the finalizer: a
		// deletion before the patch lands finds no finalizer to wait for.
		objs.WaitFor("obj", 10*time.Second, hasFinalizer)
		objs.Delete("obj", 20*time.Second)
		waitFor(t, "the daemon's second stop", 10*time.Second, func() bool { _, causes := rec.snapshot(); return len(causes) == 2 })
		_, causes := rec.snapshot()
		if len(causes) != 2 || causes[0] != kopf.StopFiltersMismatch || causes[1] != kopf.StopDeleted {
			t.Errorf("stopped for %v, want the filters, then the deletion", causes)
		}
		if err := op.Stop(); err != nil {
			t.Error(err)
		}
	})

	t.Run("the operator exits in time when a daemon ignores its context", func(t *testing.T) {
		ns := namespace(t, env.Config, "exit")
		objs := kopftest.NewObjects(t, env.Config, gvr, ns)
		hang := make(chan struct{})
		t.Cleanup(func() { close(hang) })
		op := kopftest.Start(t, env.Config, register([]kopf.DaemonHandler{{
			ID: "stubborn",
			Fn: func(ctx context.Context, kw *kopf.DaemonKwargs) (any, error) {
				<-hang
				return nil, nil
			},
		}}, nil), kopf.WithNamespaces(ns), kopf.WithSettings(func(s *kopf.Settings) { s.Background.ExitTimeout = 2 * time.Second }))
		objs.Create(example("obj", nil))
		op.WaitLog(fmt.Sprintf("[%s/obj] Daemon 'stubborn' is invoked.", ns), 20*time.Second)
		start := time.Now()
		if err := op.Stop(); err != nil {
			t.Fatalf("the operator: %v", err)
		}
		if took := time.Since(start); took < 2*time.Second || took > 6*time.Second {
			t.Errorf("the operator exited in %s, want the exit timeout (2s) and a little", took)
		}
		op.WaitLog(fmt.Sprintf("[%s/obj] Daemon 'stubborn' did not exit in time. Leaving it orphaned.", ns), time.Second)
	})

	t.Run("timers keep their schedules", func(t *testing.T) {
		ns := namespace(t, env.Config, "timers")
		objs := kopftest.NewObjects(t, env.Config, gvr, ns)
		var plain, sharp, idle recorder
		op := kopftest.Start(t, env.Config, register(nil, []kopf.TimerHandler{
			{ID: "plain", Interval: time.Second, Fn: func(ctx context.Context, kw *kopf.TimerKwargs) (any, error) {
				plain.mark()
				time.Sleep(300 * time.Millisecond)
				times, _ := plain.snapshot()
				return map[string]any{"ticks": len(times)}, nil
			}},
			{ID: "sharp", Interval: time.Second, Sharp: true, Fn: func(ctx context.Context, kw *kopf.TimerKwargs) (any, error) {
				sharp.mark()
				time.Sleep(300 * time.Millisecond)
				return nil, nil
			}},
			{ID: "idle", Idle: 2 * time.Second, Interval: 500 * time.Millisecond, Fn: func(ctx context.Context, kw *kopf.TimerKwargs) (any, error) {
				field, _ := kw.Spec["field"].(string)
				idle.saw(field)
				return nil, nil
			}},
		}), kopf.WithNamespaces(ns))
		created := time.Now()
		objs.Create(example("obj", nil))
		waitFor(t, "5 plain ticks", 30*time.Second, func() bool { times, _ := plain.snapshot(); return len(times) >= 5 })
		changed := time.Now()
		objs.MergePatch("obj", map[string]any{"spec": map[string]any{"field": "changed"}})
		waitFor(t, "idle ticks after the change", 30*time.Second, func() bool {
			times, _ := idle.snapshot()
			return len(times) > 0 && times[len(times)-1].After(changed.Add(2*time.Second))
		})
		objs.WaitFor("obj", 10*time.Second, func(obj *unstructured.Unstructured) bool {
			n, _, _ := unstructured.NestedInt64(obj.Object, "status", "plain", "ticks")
			return n > 0
		})
		objs.Delete("obj", 20*time.Second)
		if err := op.Stop(); err != nil {
			t.Error(err)
		}

		// Plain: from the end of one tick to the start of the next.
		times, _ := plain.snapshot()
		for i := 1; i < len(times); i++ {
			if gap := times[i].Sub(times[i-1]); gap < 1250*time.Millisecond || gap > 3*time.Second {
				t.Errorf("plain ticks %d and %d are %s apart, want 1.3s (interval + work) and a little", i-1, i, gap)
			}
		}
		// Sharp: on the grid of the first tick, whatever the work takes.
		times, _ = sharp.snapshot()
		for i := 1; i < len(times); i++ {
			off := times[i].Sub(times[0])
			drift := off - off.Round(time.Second)
			if drift < -50*time.Millisecond || drift > 400*time.Millisecond {
				t.Errorf("sharp tick %d is %s off its grid", i, drift)
			}
			if gap := times[i].Sub(times[i-1]); gap < 900*time.Millisecond {
				t.Errorf("sharp ticks %d and %d are %s apart, want at least the interval", i-1, i, gap)
			}
		}
		// Idle: never within 2 s of the creation, nor of the change once
		// the operator has seen it (the ticks that see the new field).
		idle.mu.Lock()
		times, fields := slices.Clone(idle.times), slices.Clone(idle.fields)
		idle.mu.Unlock()
		if !slices.Contains(fields, "changed") {
			t.Fatalf("no idle tick after the change: %v", fields)
		}
		for i, at := range times {
			if at.Before(created.Add(2 * time.Second)) {
				t.Errorf("an idle tick %s after the creation", at.Sub(created))
			}
			if fields[i] == "changed" && at.Before(changed.Add(2*time.Second)) {
				t.Errorf("an idle tick %s after the change", at.Sub(changed))
			}
		}
		op.WaitOutcome(kopftest.Match{Handler: "plain", Cause: kopftest.CauseTimer, Result: kopftest.Succeeded}, time.Second)
		if !strings.Contains(op.Logs(), fmt.Sprintf("[%s/obj] Timer 'sharp' succeeded.", ns)) {
			t.Error("Kopf's success line of a timer is not logged")
		}
	})

	t.Run("deletion releases the finalizer", func(t *testing.T) {
		ns := namespace(t, env.Config, "deletion")
		objs := kopftest.NewObjects(t, env.Config, gvr, ns)
		hang := make(chan struct{})
		t.Cleanup(func() { close(hang) })
		var ticks recorder
		op := kopftest.Start(t, env.Config, register([]kopf.DaemonHandler{{
			ID: "stubborn", CancellationTimeout: 2 * time.Second,
			When: func(kw *kopf.DaemonKwargs) bool { return kw.Labels["stubborn"] == "yes" },
			Fn: func(ctx context.Context, kw *kopf.DaemonKwargs) (any, error) {
				<-hang
				return nil, nil
			},
		}}, []kopf.TimerHandler{{
			ID: "hourly", Interval: time.Hour,
			Fn: func(ctx context.Context, kw *kopf.TimerKwargs) (any, error) {
				ticks.mark()
				return nil, nil
			},
		}}), kopf.WithNamespaces(ns))

		// A timer mid-interval: the deletion is at once.
		objs.Create(example("timer", nil))
		waitFor(t, "the first tick", 20*time.Second, func() bool { times, _ := ticks.snapshot(); return len(times) == 1 })
		objs.WaitFor("timer", 10*time.Second, hasFinalizer)
		start := time.Now()
		objs.Delete("timer", 10*time.Second)
		if took := time.Since(start); took > 5*time.Second {
			t.Errorf("the deletion took %s with a timer mid-interval", took)
		}

		// A daemon that ignores its cancellation: released after its
		// cancellation_timeout.
		objs.Create(example("daemon", map[string]any{"stubborn": "yes"}))
		op.WaitLog(fmt.Sprintf("[%s/daemon] Daemon 'stubborn' is invoked.", ns), 20*time.Second)
		objs.WaitFor("daemon", 10*time.Second, hasFinalizer)
		start = time.Now()
		objs.Delete("daemon", 20*time.Second)
		if took := time.Since(start); took < 2*time.Second || took > 10*time.Second {
			t.Errorf("the deletion took %s, want the cancellation timeout (2s) and a little", took)
		}
		op.WaitLog(fmt.Sprintf("[%s/daemon] Daemon 'stubborn' is signalled to exit by force.", ns), time.Second)
		op.WaitLog(fmt.Sprintf("[%s/daemon] Daemon 'stubborn' did not exit in time. Leaving it orphaned.", ns), time.Second)
	})

	t.Run("a restarted operator resumes daemons and timers", func(t *testing.T) {
		ns := namespace(t, env.Config, "restart")
		objs := kopftest.NewObjects(t, env.Config, gvr, ns)
		var daemonRuns, ticks recorder
		reg := register([]kopf.DaemonHandler{{
			ID: "background",
			Fn: func(ctx context.Context, kw *kopf.DaemonKwargs) (any, error) {
				daemonRuns.mark()
				<-ctx.Done()
				daemonRuns.stopped(context.Cause(kw.Stopped))
				return nil, nil
			},
		}}, []kopf.TimerHandler{{
			ID: "ticker", Interval: 500 * time.Millisecond,
			Fn: func(ctx context.Context, kw *kopf.TimerKwargs) (any, error) {
				ticks.mark()
				return nil, nil
			},
		}})
		op := kopftest.Start(t, env.Config, reg, kopf.WithNamespaces(ns))
		objs.Create(example("obj", nil))
		waitFor(t, "the daemon and a tick", 20*time.Second, func() bool {
			d, _ := daemonRuns.snapshot()
			tk, _ := ticks.snapshot()
			return len(d) == 1 && len(tk) >= 1
		})
		if err := op.Stop(); err != nil {
			t.Fatal(err)
		}
		_, causes := daemonRuns.snapshot()
		if len(causes) != 1 || causes[0] != kopf.StopOperatorExiting {
			t.Errorf("stopped for %v, want the operator's exit", causes)
		}
		tk, _ := ticks.snapshot()
		stoppedAt := len(tk)

		op2 := kopftest.Start(t, env.Config, reg, kopf.WithNamespaces(ns))
		waitFor(t, "the daemon and the timer to resume", 20*time.Second, func() bool {
			d, _ := daemonRuns.snapshot()
			tk, _ := ticks.snapshot()
			return len(d) == 2 && len(tk) >= stoppedAt+2
		})
		objs.Delete("obj", 20*time.Second)
		if err := op2.Stop(); err != nil {
			t.Error(err)
		}
	})
}
