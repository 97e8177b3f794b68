// Package toolkit tests the public testing toolkit, package kopftest (in
// the runtime module) on envtest's control plane (module envtest), as an
// operator's own tests use them.
package toolkit

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kopf-go/kopf"
	"github.com/kopf-go/kopf/envtest"
	"github.com/kopf-go/kopf/kopftest"
	"github.com/kopf-go/kopf/runtime/causes"
	"github.com/kopf-go/kopf/runtime/execution"
	"github.com/kopf-go/kopf/runtime/kwargs"
	"github.com/kopf-go/kopf/runtime/registry"
	"github.com/kopf-go/kopf/runtime/resources"
)

var kopfExamples = schema.GroupVersionResource{Group: "kopf.dev", Version: "v1", Resource: "kopfexamples"}

func kopfExample(name string) map[string]any {
	return map[string]any{
		"apiVersion": "kopf.dev/v1", "kind": "KopfExample",
		"metadata": map[string]any{"name": name},
		"spec":     map[string]any{"field": "value"},
	}
}

// handlers registers: ok (returns a result), flaky (fails once per
// object, then succeeds), bad (fails permanently), seen (on.event).
func handlers(r *registry.Registry) error {
	sel := resources.Selector{Group: "kopf.dev", Version: "v1", Name: "kopfexamples"}
	var mu sync.Mutex
	flaky := map[string]int{}
	for _, h := range []registry.ChangingHandler{
		{ID: "ok", Fn: func(context.Context, *kwargs.Changing) (any, error) {
			return map[string]any{"message": "done"}, nil
		}},
		{ID: "flaky", Fn: func(_ context.Context, kw *kwargs.Changing) (any, error) {
			mu.Lock()
			defer mu.Unlock()
			if flaky[kw.Name]++; flaky[kw.Name] == 1 {
				return nil, errors.New("not yet")
			}
			return nil, nil
		}},
		{ID: "bad", Fn: func(context.Context, *kwargs.Changing) (any, error) {
			return nil, execution.NewPermanentError("never")
		}},
	} {
		h.Selector, h.Reasons = sel, []causes.Reason{causes.Create}
		if err := r.AddChanging(h); err != nil {
			return err
		}
	}
	return r.AddEvent(registry.EventHandler{ID: "seen", Selector: sel, Fn: func(context.Context, *kwargs.Event) error { return nil }})
}

func TestToolkit(t *testing.T) {
	env := envtest.Start(t, envtest.WithCRDs(filepath.Join("..", "..", "examples", "crd.yaml")))

	// Outcomes per object and handler, in the order of the attempts; an
	// object read after an outcome shows it.
	t.Run("Start", func(t *testing.T) {
		objs := kopftest.NewObjects(t, env.Config, kopfExamples, "default")
		op := kopftest.Start(t, env.Config, handlers, kopf.WithNamespaces("default"))
		op.WaitReady(30 * time.Second)
		objs.Create(kopfExample("one"))
		objs.Create(kopfExample("two"))
		for _, name := range []string{"one", "two"} {
			ok := op.WaitOutcome(kopftest.Match{Name: name, Handler: "ok", Result: kopftest.Succeeded}, 30*time.Second)
			if ok.Cause != "create" || ok.Namespace != "default" || ok.Resource != "kopfexamples.kopf.dev" || ok.UID == "" {
				t.Errorf("the outcome of ok: %+v", ok)
			}
			status, _, _ := unstructured.NestedString(objs.Get(name).Object, "status", "ok", "message")
			if status != "done" {
				t.Errorf("%s: status.ok.message = %q once ok's outcome is seen, want done", name, status)
			}
			flaky := op.WaitOutcomes(kopftest.Match{Name: name, Handler: "flaky"}, 2, 30*time.Second)
			if len(flaky) != 2 || flaky[0].Result != kopftest.Retrying || flaky[0].Message != "not yet" || flaky[0].Delay != time.Second ||
				flaky[1].Result != kopftest.Succeeded || flaky[1].Retry != 1 {
				t.Errorf("%s: flaky's outcomes: %v", name, flaky)
			}
			bad := op.WaitOutcome(kopftest.Match{Name: name, Handler: "bad"}, 30*time.Second)
			if bad.Result != kopftest.Failed || bad.Message != "never" {
				t.Errorf("%s: bad's outcome: %v", name, bad)
			}
			op.WaitOutcome(kopftest.Match{Name: name, Handler: "seen", Cause: kopftest.CauseEvent}, 30*time.Second)
			op.WaitLog("["+"default/"+name+"] Creation is processed: 2 succeeded; 1 failed.", 30*time.Second)
		}
		if err := op.Stop(); err != nil {
			t.Errorf("Stop() = %v", err)
		}
		// Each changing handler ran as often as said, and no more.
		for _, tt := range []struct {
			handler string
			n       int
		}{{"ok", 2}, {"flaky", 4}, {"bad", 2}} {
			if n := len(op.Outcomes(kopftest.Match{Handler: tt.handler})); n != tt.n {
				t.Errorf("%s: %d outcomes, want %d: %v", tt.handler, n, tt.n, op.Outcomes(kopftest.Match{Handler: tt.handler}))
			}
		}
		objs.Delete("one", 30*time.Second)
		objs.Delete("two", 30*time.Second)
	})

	// A main-like function gets the test's options and its exit error is
	// Stop's.
	t.Run("StartMain", func(t *testing.T) {
		objs := kopftest.NewObjects(t, env.Config, kopfExamples, "default")
		stopped := errors.New("stopped")
		op := kopftest.StartMain(t, env.Config, func(ctx context.Context, opts ...kopf.Option) error {
			own := []kopf.Option{kopf.WithNamespaces("default"), kopf.WithSettings(func(s *kopf.Settings) {
				s.Execution.DefaultBackoff = 2 * time.Second
			})}
			if err := kopf.Run(ctx, handlers, append(own, opts...)...); err != nil {
				return err
			}
			return fmt.Errorf("main: %w", stopped)
		})
		objs.Create(kopfExample("three"))
		retry := op.WaitOutcome(kopftest.Match{Name: "three", Handler: "flaky"}, 30*time.Second)
		if retry.Delay != 2*time.Second {
			t.Errorf("main's settings are not in force: the retry is in %s, want 2s", retry.Delay)
		}
		if err := op.Stop(); !errors.Is(err, stopped) {
			t.Errorf("Stop() = %v, want main's error", err)
		}
		objs.MergePatch("three", map[string]any{"metadata": map[string]any{"finalizers": nil}})
		objs.Delete("three", 30*time.Second)
	})

	// The command line's flags are in force: -n serves one namespace.
	t.Run("StartCommand", func(t *testing.T) {
		objs := kopftest.NewObjects(t, env.Config, kopfExamples, "default")
		op := kopftest.StartCommand(t, env.Config, []string{"run", "-n", "kube-public", "--standalone"}, handlers)
		op.WaitReady(30 * time.Second)
		other := kopftest.NewObjects(t, env.Config, kopfExamples, "kube-public")
		other.Create(kopfExample("four"))
		objs.Create(kopfExample("five"))
		op.WaitOutcome(kopftest.Match{Namespace: "kube-public", Name: "four", Handler: "ok"}, 30*time.Second)
		if err := op.Stop(); err != nil {
			t.Errorf("Stop() = %v", err)
		}
		if got := op.Outcomes(kopftest.Match{Name: "five"}); len(got) != 0 {
			t.Errorf("an object outside -n is handled: %v", got)
		}
		if !strings.Contains(op.Logs(), "[kube-public/four] Handler 'ok' succeeded.") {
			t.Errorf("the log lacks ok's success:\n%s", op.Logs())
		}
	})
}
