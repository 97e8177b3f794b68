// Package selectors tests the server-side selectors of the watches on a
// real control plane (docs/filters.md, "Server-side selectors"): an
// operator whose every handler filters labels={app: x} watches with the
// label selector app=x, never receives an unlabelled object, and tells an
// object that leaves the selector (reported by the watch as deleted) from
// a deleted one; the same with the field selector spec.phase=on inferred
// from field= filters on a CRD's selectable field (fields_test.go).
// Handlers are registered by hand through kopf.Registry.
package selectors

import (
	"context"
	"errors"
	"fmt"
	"net/http"
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
	app      = kopf.Filter{Labels: map[string]kopf.Matcher{"app": kopf.Equal("x")}}
)

const finalizer = "kopf.zalando.org/KopfFinalizerMarker"

// journal is what the handlers saw, safe for their goroutines.
type journal struct {
	mu      sync.Mutex
	calls   []string // "<handler> <name>", e.g. "create obj", "event DELETED obj"
	stopped []error  // the daemons' stop causes
}

func (j *journal) add(call string) {
	j.mu.Lock()
	j.calls = append(j.calls, call)
	j.mu.Unlock()
}

func (j *journal) stop(cause error) {
	j.mu.Lock()
	j.stopped = append(j.stopped, cause)
	j.mu.Unlock()
}

func (j *journal) count(call string) int {
	j.mu.Lock()
	defer j.mu.Unlock()
	n := 0
	for _, c := range j.calls {
		if c == call {
			n++
		}
	}
	return n
}

func (j *journal) snapshot() ([]string, []error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	return slices.Clone(j.calls), slices.Clone(j.stopped)
}

// register adds a create, an update, a delete, an on.event handler and a
// daemon, each filtered by labels={app: x}.
func register(j *journal) func(*kopf.Registry) error {
	changing := func(id string, reason kopf.Reason) kopf.ChangingHandler {
		return kopf.ChangingHandler{ID: id, Selector: selector, Reasons: []kopf.Reason{reason}, Filter: app,
			Fn: func(ctx context.Context, kw *kopf.ChangingKwargs) (any, error) {
				j.add(id + " " + kw.Name)
				return nil, nil
			}}
	}
	return func(r *kopf.Registry) error {
		for _, h := range []kopf.ChangingHandler{changing("create", kopf.ReasonCreate), changing("update", kopf.ReasonUpdate), changing("delete", kopf.ReasonDelete)} {
			if err := r.AddChanging(h); err != nil {
				return err
			}
		}
		err := r.AddEvent(kopf.EventHandler{ID: "event", Selector: selector, Filter: app,
			Fn: func(ctx context.Context, kw *kopf.EventKwargs) error {
				j.add("event " + kw.Type + " " + kw.Name)
				return nil
			}})
		if err != nil {
			return err
		}
		return r.AddDaemon(kopf.DaemonHandler{ID: "daemon", Selector: selector, Filter: app,
			Fn: func(ctx context.Context, kw *kopf.DaemonKwargs) (any, error) {
				j.add("daemon " + kw.Name)
				<-kw.Stopped.Done()
				j.stop(context.Cause(kw.Stopped))
				return nil, nil
			}})
	}
}

// requests records the URLs of the operator's requests of a resource.
type requests struct {
	mu   sync.Mutex
	path string
	urls []string
}

func (rq *requests) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		if strings.HasSuffix(req.URL.Path, rq.path) {
			rq.mu.Lock()
			rq.urls = append(rq.urls, req.URL.String())
			rq.mu.Unlock()
		}
		return rt.RoundTrip(req)
	})
}

func (rq *requests) snapshot() []string {
	rq.mu.Lock()
	defer rq.mu.Unlock()
	return slices.Clone(rq.urls)
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

func namespace(t *testing.T, cfg *rest.Config, name string) string {
	t.Helper()
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := cs.CoreV1().Namespaces().Create(t.Context(), ns, metav1.CreateOptions{}); err != nil {
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

func TestSelectors(t *testing.T) {
	env := envtest.Start(t, envtest.WithCRDs(filepath.Join("..", "..", "examples", "crd.yaml")))
	ns := namespace(t, env.Config, "selectors")
	objs := kopftest.NewObjects(t, env.Config, gvr, ns)
	rq := &requests{path: "/namespaces/" + ns + "/kopfexamples"}
	cfg := rest.CopyConfig(env.Config)
	cfg.Wrap(rq.wrap)
	var j journal
	op := kopftest.Start(t, cfg, register(&j), kopf.WithNamespaces(ns))

	objs.Create(example("plain", nil))
	objs.Create(example("obj", map[string]any{"app": "x"}))
	waitFor(t, "the daemon's start", 20*time.Second, func() bool { return j.count("daemon obj") == 1 })
	objs.WaitFor("obj", 10*time.Second, hasFinalizer)
	op.WaitLog(fmt.Sprintf("Watching kopfexamples.v1.kopf.dev in %s with the label selector 'app=x' (inferred from the handlers' filters).", ns), 5*time.Second)

	t.Run("the watch requests carry the selector", func(t *testing.T) {
		urls := rq.snapshot()
		watches := 0
		for _, u := range urls {
			if !strings.Contains(u, "labelSelector=app%3Dx") {
				t.Errorf("a request without the selector: %s", u)
			}
			if strings.Contains(u, "watch=true") {
				watches++
			}
		}
		if watches == 0 {
			t.Errorf("no watch request seen: %v", urls)
		}
		if n := op.CountLog(fmt.Sprintf("[%s/plain]", ns)); n > 0 {
			t.Errorf("the unlabelled object is in the log %d times", n)
		}
		calls, _ := j.snapshot()
		for _, c := range calls {
			if strings.HasSuffix(c, " plain") {
				t.Errorf("a handler saw the unlabelled object: %s", c)
			}
		}
	})

	t.Run("an object that leaves the selector is released, not deleted", func(t *testing.T) {
		objs.MergePatch("obj", map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": nil}}})
		waitFor(t, "the daemon's stop", 20*time.Second, func() bool { _, stopped := j.snapshot(); return len(stopped) == 1 })
		obj := objs.WaitFor("obj", 20*time.Second, func(obj *unstructured.Unstructured) bool { return !hasFinalizer(obj) })
		if obj.GetDeletionTimestamp() != nil {
			t.Errorf("the object is being deleted")
		}
		_, stopped := j.snapshot()
		if !errors.Is(stopped[0], kopf.StopFiltersMismatch) {
			t.Errorf("the daemon stopped for %v, want the filters' mismatch", stopped[0])
		}
		if n := j.count("delete obj"); n != 0 {
			t.Errorf("the delete handler ran %d times", n)
		}
		if n := j.count("event DELETED obj"); n != 0 {
			t.Errorf("on.event saw %d deletions", n)
		}
	})

	t.Run("an object that enters the selector again is handled again", func(t *testing.T) {
		objs.MergePatch("obj", map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": "x"}}})
		waitFor(t, "the daemon's restart", 20*time.Second, func() bool { return j.count("daemon obj") == 2 })
		objs.WaitFor("obj", 10*time.Second, hasFinalizer)
		if n := j.count("create obj"); n != 1 {
			t.Errorf("the create handler ran %d times, want once: the diff-base says it is created", n)
		}
	})

	t.Run("a deleted object is deleted", func(t *testing.T) { checkDeleted(t, objs, &j) })
	stopAndReport(t, op, &j)
}

// checkDeleted deletes the object "obj" that the daemon watched, and checks
// that the delete handler ran once and that the daemon, stopped for the
// filters before, stopped for the deletion.
func checkDeleted(t *testing.T, objs *kopftest.Objects, j *journal) {
	t.Helper()
	objs.Delete("obj", 30*time.Second)
	if n := j.count("delete obj"); n != 1 {
		t.Errorf("the delete handler ran %d times, want once", n)
	}
	_, stopped := j.snapshot()
	if len(stopped) != 2 || !errors.Is(stopped[1], kopf.StopDeleted) {
		t.Errorf("the daemon stopped for %v, want the filters, then the deletion", stopped)
	}
}

// stopAndReport stops the operator, and on a failure logs the journal.
func stopAndReport(t *testing.T, op *kopftest.Operator, j *journal) {
	t.Helper()
	if err := op.Stop(); err != nil {
		t.Error(err)
	}
	if t.Failed() {
		calls, stopped := j.snapshot()
		t.Logf("calls: %v; stops: %v", calls, stopped)
	}
}
