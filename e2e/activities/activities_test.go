// Package activities tests the operator's activities on a real control
// plane: the login handlers' credentials and their re-login on 401, the
// startup handlers before anything is watched (their settings and memo
// taking effect, their failure stopping the operator), the cleanup
// handlers after the stop and their timeout, and the probes. Handlers are
// registered by hand through kopf.Registry.
package activities

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kopf-go/kopf"
	"github.com/kopf-go/kopf/e2e/cluster"
	"github.com/kopf-go/kopf/envtest"
	"github.com/kopf-go/kopf/kopftest"
)

var (
	gvr      = schema.GroupVersionResource{Group: "kopf.dev", Version: "v1", Resource: "kopfexamples"}
	selector = kopf.Selector{Group: "kopf.dev", Version: "v1", Name: "kopfexamples"}
)

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

func example(name string) map[string]any {
	return map[string]any{"apiVersion": "kopf.dev/v1", "kind": "KopfExample", "metadata": map[string]any{"name": name}, "spec": map[string]any{"field": "value"}}
}

// registry returns a Register function adding the activity handlers and a
// create handler of kopfexamples (if create is set).
func registry(create kopf.ChangingFn, activities ...kopf.ActivityHandler) func(*kopf.Registry) error {
	return func(r *kopf.Registry) error {
		for _, a := range activities {
			if err := r.AddActivity(a); err != nil {
				return err
			}
		}
		if create == nil {
			return nil
		}
		return r.AddChanging(kopf.ChangingHandler{ID: "create_fn", Selector: selector, Reasons: []kopf.Reason{kopf.ReasonCreate}, Fn: create})
	}
}

// created stores "created" into status.create_fn.
func created(ctx context.Context, kw *kopf.ChangingKwargs) (any, error) { return "created", nil }

func handled(o *unstructured.Unstructured) bool {
	v, _, _ := unstructured.NestedString(o.Object, "status", "create_fn")
	return v == "created"
}

func TestActivities(t *testing.T) {
	c := cluster.Start(t, envtest.WithCRDs(filepath.Join("..", "..", "examples", "crd.yaml")))

	// The operator is given the admin's configuration, but its login
	// handler's credentials are used: first a refused token, so that every
	// request gets a 401; the re-login calls the handler again, which
	// then returns the good token, and the object that waited is handled.
	t.Run("login handlers log in and again on 401", func(t *testing.T) {
		ns := namespace(t, c.Config, "login")
		objs := kopftest.NewObjects(t, c.Config, gvr, ns)
		objs.Create(example("waiting"))
		var token atomic.Value
		token.Store("refused-token")
		var logins atomic.Int32
		login := kopf.ActivityHandler{ID: "login_fn", Activity: kopf.ActivityAuthentication, Errors: kopf.ErrorsPermanent,
			Fn: kopf.LoginFunc(func(ctx context.Context, kw kopf.ActivityKwargs) (*kopf.ConnectionInfo, error) {
				logins.Add(1)
				cfg := &rest.Config{Host: c.Config.Host, BearerToken: token.Load().(string), TLSClientConfig: rest.TLSClientConfig{CAData: c.Config.CAData}}
				return &kopf.ConnectionInfo{Config: cfg}, nil
			})}
		op := kopftest.Start(t, c.Config, registry(created, login), kopf.WithNamespaces(ns))
		op.WaitLog("Initial authentication has finished.", 10*time.Second)
		op.WaitLog("Re-authentication has failed: the credentials at their source are the ones refused (401 Unauthorized).", 20*time.Second)
		if n := logins.Load(); n < 2 {
			t.Errorf("the login handler was called %d times before the token changed, want at least 2 (at start, on 401)", n)
		}
		token.Store(c.Token())
		op.WaitLog("Re-authentication has finished.", 30*time.Second)
		objs.WaitFor("waiting", 30*time.Second, handled)
		if n := op.CountLog("Activity 'login_fn' succeeded."); n < 3 {
			t.Errorf("the login handler succeeded %d times, want at least 3", n)
		}
	})

	// With several login handlers, those of the highest priority are
	// used; LoginViaClient gives the operator's own configuration (here,
	// kopftest's WithConfig).
	t.Run("the login of the highest priority wins", func(t *testing.T) {
		ns := namespace(t, c.Config, "priority")
		objs := kopftest.NewObjects(t, c.Config, gvr, ns)
		refused := kopf.ActivityHandler{ID: "refused", Activity: kopf.ActivityAuthentication,
			Fn: kopf.LoginFunc(func(ctx context.Context, kw kopf.ActivityKwargs) (*kopf.ConnectionInfo, error) {
				return &kopf.ConnectionInfo{Config: &rest.Config{Host: c.Config.Host, BearerToken: "refused"}, Priority: 1}, nil
			})}
		builtin := kopf.ActivityHandler{ID: "builtin", Activity: kopf.ActivityAuthentication,
			Fn: kopf.LoginFunc(func(ctx context.Context, kw kopf.ActivityKwargs) (*kopf.ConnectionInfo, error) {
				info, err := kopf.LoginViaClient(ctx, kw)
				if err != nil {
					return nil, err
				}
				info.Priority = 10
				return info, nil
			})}
		op := kopftest.Start(t, c.Config, registry(created, refused, builtin), kopf.WithNamespaces(ns))
		objs.Create(example("obj"))
		objs.WaitFor("obj", 30*time.Second, handled)
		if n := op.CountLog("401 Unauthorized"); n != 0 {
			t.Errorf("the refused credentials were used (%d times 401)", n)
		}
	})

	// The startup handlers run before anything is watched: the object's
	// handler sees what they put into the memo, and the finalizer they
	// set in the settings. One of them is retried first.
	t.Run("startup handlers run first, with settings and memo", func(t *testing.T) {
		ns := namespace(t, c.Config, "startup")
		objs := kopftest.NewObjects(t, c.Config, gvr, ns)
		objs.Create(example("obj"))
		const custom = "example.com/custom-finalizer"
		startup := kopf.ActivityHandler{ID: "configure", Activity: kopf.ActivityStartup,
			Fn: kopf.ActivityFunc(func(ctx context.Context, kw kopf.ActivityKwargs) (any, error) {
				if kw.Retry == 0 {
					return nil, kopf.NewTemporaryError("not yet", time.Second)
				}
				kw.Settings.Persistence.Finalizer = custom
				kw.Memo["started"] = kw.Retry
				return nil, nil
			})}
		var seen atomic.Value
		onCreate := func(ctx context.Context, kw *kopf.ChangingKwargs) (any, error) {
			seen.Store(fmt.Sprint(kw.Memo["started"]))
			return "created", nil
		}
		register := func(r *kopf.Registry) error {
			if err := registry(onCreate, startup)(r); err != nil {
				return err
			}
			// A delete handler needs the finalizer.
			return r.AddChanging(kopf.ChangingHandler{ID: "delete_fn", Selector: selector, Reasons: []kopf.Reason{kopf.ReasonDelete},
				Fn: func(context.Context, *kopf.ChangingKwargs) (any, error) { return nil, nil }})
		}
		memo := kopf.Memo{"operator": "yes"}
		op := kopftest.Start(t, c.Config, register, kopf.WithNamespaces(ns), kopf.WithMemo(memo))
		objs.WaitFor("obj", 30*time.Second, func(o *unstructured.Unstructured) bool {
			return handled(o) && slices.Contains(o.GetFinalizers(), custom)
		})
		if got := seen.Load(); got != "1" {
			t.Errorf("the object's handler saw memo[started] = %v, want 1 (set by the startup handler)", got)
		}
		if memo["started"] != 1 {
			t.Errorf("the operator's memo is %v, want the startup handler's key in it", memo)
		}
		logs := op.Logs()
		if strings.Index(logs, "Activity 'configure' succeeded.") > strings.Index(logs, "Handler 'create_fn'") {
			t.Errorf("the object was handled before the startup handler succeeded:\n%s", logs)
		}
		objs.Delete("obj", 30*time.Second)
	})

	// A startup handler that fails for good stops the operator before it
	// watches anything; the cleanup handlers do not run.
	t.Run("a failed startup handler stops the operator", func(t *testing.T) {
		ns := namespace(t, c.Config, "failed-startup")
		objs := kopftest.NewObjects(t, c.Config, gvr, ns)
		objs.Create(example("obj"))
		var cleaned atomic.Bool
		failing := kopf.ActivityHandler{ID: "bad_start", Activity: kopf.ActivityStartup,
			Fn: kopf.ActivityFunc(func(context.Context, kopf.ActivityKwargs) (any, error) {
				return nil, kopf.NewPermanentError("cannot start")
			})}
		cleanup := kopf.ActivityHandler{ID: "cleanup_fn", Activity: kopf.ActivityCleanup,
			Fn: kopf.ActivityFunc(func(context.Context, kopf.ActivityKwargs) (any, error) { cleaned.Store(true); return nil, nil })}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		logs := &kopftest.Buffer{}
		err := kopf.Run(ctx, registry(created, failing, cleanup), kopf.WithConfig(c.Config), kopf.WithNamespaces(ns), kopf.WithStandalone(),
			kopf.WithLogger(kopf.NewLogger(logs, kopf.LogPlain, 0)))
		if err == nil || !strings.Contains(err.Error(), "Activity 'bad_start': cannot start") {
			t.Fatalf("kopf.Run returned %v, want the startup handler's failure", err)
		}
		if ctx.Err() != nil {
			t.Errorf("kopf.Run returned only when its context was done")
		}
		if !strings.Contains(logs.String(), "Activity 'bad_start' failed permanently: cannot start") {
			t.Errorf("the failure is not logged:\n%s", logs)
		}
		if cleaned.Load() {
			t.Error("the cleanup handler ran after a failed startup")
		}
		if handled(objs.Get("obj")) {
			t.Error("the object was handled although the operator did not start")
		}
	})

	// The cleanup handlers run after the watching has stopped, within
	// settings.Execution.CleanupTimeout: one that does not finish is
	// cancelled, and the operator exits.
	t.Run("cleanup handlers run after the stop, within their timeout", func(t *testing.T) {
		ns := namespace(t, c.Config, "cleanup")
		objs := kopftest.NewObjects(t, c.Config, gvr, ns)
		var mu sync.Mutex
		var order []string
		note := func(s string) { mu.Lock(); order = append(order, s); mu.Unlock() }
		quick := kopf.ActivityHandler{ID: "quick", Activity: kopf.ActivityCleanup,
			Fn: kopf.ActivityFunc(func(context.Context, kopf.ActivityKwargs) (any, error) { note("quick"); return nil, nil })}
		hung := kopf.ActivityHandler{ID: "hung", Activity: kopf.ActivityCleanup,
			Fn: kopf.ActivityFunc(func(ctx context.Context, kw kopf.ActivityKwargs) (any, error) {
				note("hung")
				<-ctx.Done()
				note("cancelled")
				return nil, ctx.Err()
			})}
		onCreate := func(ctx context.Context, kw *kopf.ChangingKwargs) (any, error) { note("create"); return "created", nil }
		op := kopftest.Start(t, c.Config, registry(onCreate, quick, hung), kopf.WithNamespaces(ns),
			kopf.WithSettings(func(s *kopf.Settings) { s.Execution.CleanupTimeout = time.Second }))
		objs.Create(example("obj"))
		objs.WaitFor("obj", 30*time.Second, handled)
		started := time.Now()
		if err := op.Stop(); err != nil {
			t.Fatalf("stopping: %v", err)
		}
		if took := time.Since(started); took < time.Second || took > 15*time.Second {
			t.Errorf("the operator stopped in %s, want the cleanup timeout of 1s and a little more", took)
		}
		mu.Lock()
		defer mu.Unlock()
		if want := []string{"create", "quick", "hung", "cancelled"}; !slices.Equal(order, want) {
			t.Errorf("calls %v, want %v", order, want)
		}
		for _, line := range []string{"Activity 'quick' succeeded.", "Cleanup activity is only partially executed due to cancellation"} {
			if op.CountLog(line) != 1 {
				t.Errorf("%q is not logged once:\n%s", line, op.Logs())
			}
		}
	})

	// The probes report their results by id; a failing probe fails the
	// probing with its message.
	t.Run("probes", func(t *testing.T) {
		ns := namespace(t, c.Config, "probes")
		var fail atomic.Bool
		count := kopf.ActivityHandler{ID: "count", Activity: kopf.ActivityProbe,
			Fn: kopf.ActivityFunc(func(ctx context.Context, kw kopf.ActivityKwargs) (any, error) { return 42, nil })}
		nothing := kopf.ActivityHandler{ID: "nothing", Activity: kopf.ActivityProbe,
			Fn: kopf.ActivityFunc(func(ctx context.Context, kw kopf.ActivityKwargs) (any, error) { return nil, nil })}
		flaky := kopf.ActivityHandler{ID: "flaky", Activity: kopf.ActivityProbe, Errors: kopf.ErrorsPermanent,
			Fn: kopf.ActivityFunc(func(ctx context.Context, kw kopf.ActivityKwargs) (any, error) {
				if fail.Load() {
					return nil, errors.New("unhealthy")
				}
				return map[string]any{"ok": true}, nil
			})}
		op := kopftest.Start(t, c.Config, registry(created, count, nothing, flaky), kopf.WithNamespaces(ns))
		op.WaitReady(30 * time.Second)
		got, err := op.Probe(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || got["count"] != 42 || fmt.Sprint(got["flaky"]) != "map[ok:true]" {
			t.Errorf("probes = %v, want count and flaky", got)
		}
		fail.Store(true)
		if _, err := op.Probe(t.Context()); err == nil || !strings.Contains(err.Error(), "Activity 'flaky': unhealthy") {
			t.Errorf("a failing probe: %v, want its error", err)
		}
	})
}
