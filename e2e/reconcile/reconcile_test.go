// Package reconcile_test checks level-triggered handlers (on.reconcile,
// docs/reconcile.md) on a real control plane, with a registration written
// by hand: a KopfExample owns a ConfigMap that its handler keeps in line
// with its spec, and a ReconcileChild (a custom resource with a status
// subresource) that the test makes. The handler runs on a change of the
// object, on a change of a child's data or status (mapped by the child's
// controller ownerReference), on a change of a watched Secret (mapped by
// the Watch's Map), after a RequeueAfter, and after errors with
// backoff until it succeeds; with Finalize, the deletion waits until it
// returns nil; nothing is ever written onto the children by the operator.
package reconcile_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/kopf-go/kopf"
	"github.com/kopf-go/kopf/envtest"
	"github.com/kopf-go/kopf/kopftest"
)

const ns = "default"

var (
	kopfExamples = schema.GroupVersionResource{Group: "kopf.dev", Version: "v1", Resource: "kopfexamples"}
	children     = schema.GroupVersionResource{Group: "e2e.kopf.dev", Version: "v1", Resource: "reconcilechildren"}
)

// run is one call of the handler.
type run struct {
	trigger  string
	retry    int
	deleting bool
}

// handler is the reconcile handler of the test, with what it has seen.
type handler struct {
	cs  kubernetes.Interface
	dyn dynamic.Interface

	mu       sync.Mutex
	runs     map[string][]run // by object name
	failures map[string]int   // by object name: errors still to return
	release  bool             // the deletion may finish
}

// register adds reconcile_fn to KopfExamples, owning ConfigMaps and
// ReconcileChildren, watching Secrets mapped to their owners by the label
// "owner", holding the finalizer, with a short backoff.
func (h *handler) register(r *kopf.Registry) error {
	return r.AddReconcile(kopf.ReconcileHandler{
		ID:       "reconcile_fn",
		Selector: kopf.Selector{Group: "kopf.dev", Version: "v1", Name: "kopfexamples"},
		Fn:       kopf.ReconcileFunc(h.reconcile),
		Owns:     []kopf.Selector{{Version: "v1", Name: "configmaps", Core: true}, {Group: "e2e.kopf.dev", Name: "reconcilechildren"}},
		Watches: []kopf.Watch{{
			Selector: kopf.Selector{Version: "v1", Name: "secrets", Core: true},
			Map: func(_ context.Context, secret kopf.Body) []types.NamespacedName {
				if owner := secret.Meta().Labels()["owner"]; owner != "" {
					return []types.NamespacedName{{Namespace: secret.Meta().Namespace(), Name: owner}}
				}
				return nil
			},
		}},
		Finalize: true,
		Backoff:  500 * time.Millisecond,
	})
}

// reconcile keeps the ConfigMap "<name>-child" with data.size = spec.size
// and its owner's controller reference, and reports in the object's
// status what it sees of its children: the ConfigMap's data.extra and the
// ReconcileChild's status.phase. spec.requeue asks for runs every second,
// spec.failures for as many errors first; on deletion, it fails until the
// test releases it.
func (h *handler) reconcile(ctx context.Context, kw kopf.ReconcileKwargs) (kopf.ReconcileResult, error) {
	h.mu.Lock()
	h.runs[kw.Name] = append(h.runs[kw.Name], run{kw.Trigger, kw.Retry, kw.Deleting})
	fail := h.failures[kw.Name] > 0
	if fail {
		h.failures[kw.Name]--
	}
	release := h.release
	h.mu.Unlock()
	switch {
	case kw.Deleting && !release:
		return kopf.ReconcileResult{}, errors.New("the deletion is held")
	case kw.Deleting:
		return kopf.ReconcileResult{}, nil
	case fail:
		return kopf.ReconcileResult{}, errors.New("failing on purpose")
	}
	size := fmt.Sprint(kw.Spec["size"])
	cm, err := h.ensureChild(ctx, kw, size)
	if err != nil {
		return kopf.ReconcileResult{}, err
	}
	kw.Patch.Status()["seen"] = map[string]any{"size": cm.Data["size"], "extra": cm.Data["extra"], "phase": h.childPhase(ctx, kw.Name+"-status")}
	if kw.Spec["requeue"] == true {
		return kopf.ReconcileResult{RequeueAfter: time.Second}, nil
	}
	return kopf.ReconcileResult{}, nil
}

// ensureChild creates or updates the ConfigMap child.
func (h *handler) ensureChild(ctx context.Context, kw kopf.ReconcileKwargs, size string) (*corev1.ConfigMap, error) {
	cms := h.cs.CoreV1().ConfigMaps(kw.Namespace)
	cm, err := cms.Get(ctx, kw.Name+"-child", metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		controller := true
		return cms.Create(ctx, &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: kw.Name + "-child", OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "kopf.dev/v1", Kind: "KopfExample", Name: kw.Name, UID: types.UID(kw.UID), Controller: &controller,
			}}},
			Data: map[string]string{"size": size},
		}, metav1.CreateOptions{})
	}
	if err != nil || cm.Data["size"] == size {
		return cm, err
	}
	cm.Data["size"] = size
	return cms.Update(ctx, cm, metav1.UpdateOptions{})
}

// childPhase is the status.phase of the ReconcileChild name ("" if none).
func (h *handler) childPhase(ctx context.Context, name string) string {
	child, err := h.dyn.Resource(children).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return ""
	}
	phase, _, _ := unstructured.NestedString(child.Object, "status", "phase")
	return phase
}

// waitRun waits for a run of the object that matches.
func (h *handler) waitRun(t *testing.T, name string, timeout time.Duration, what string, match func(run) bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		h.mu.Lock()
		runs := append([]run(nil), h.runs[name]...)
		h.mu.Unlock()
		for _, r := range runs {
			if match(r) {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no run of %s %s in %s; runs: %v", name, what, timeout, runs)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// waitQuiet waits until the object has had no run for quiet: the runs
// that its own status patches bring are over. A change of another object
// that comes while one of its own events is pending runs the handler in
// that cycle, as triggered by the object (runtime/queueing drops the
// wakeup), so a test of another object's trigger waits for this first.
func (h *handler) waitQuiet(t *testing.T, name string, quiet, timeout time.Duration) {
	t.Helper()
	count := func() int {
		h.mu.Lock()
		defer h.mu.Unlock()
		return len(h.runs[name])
	}
	deadline := time.Now().Add(timeout)
	last, since := count(), time.Now()
	for time.Since(since) < quiet {
		if time.Now().After(deadline) {
			t.Fatalf("%s still runs after %s: %d runs", name, timeout, last)
		}
		time.Sleep(50 * time.Millisecond)
		if n := count(); n != last {
			last, since = n, time.Now()
		}
	}
}

func seen(u *unstructured.Unstructured, field string) string {
	v, _, _ := unstructured.NestedString(u.Object, "status", "seen", field)
	return v
}

func TestReconcile(t *testing.T) {
	ctx := context.Background()
	env := envtest.Start(t, envtest.WithCRDs(filepath.Join("..", "..", "examples", "crd.yaml"), filepath.Join("testdata", "children.yaml")))
	cs := kubernetes.NewForConfigOrDie(env.Config)
	dyn := dynamic.NewForConfigOrDie(env.Config)
	h := &handler{cs: cs, dyn: dyn, runs: map[string][]run{}, failures: map[string]int{"flaky": 2}}
	op := kopftest.Start(t, env.Config, h.register, kopf.WithNamespaces(ns))
	op.WaitReady(30 * time.Second)
	objs := kopftest.NewObjects(t, env.Config, kopfExamples, ns)
	kids := kopftest.NewObjects(t, env.Config, children, ns)
	create := func(name string, spec map[string]any) {
		objs.Create(map[string]any{"apiVersion": "kopf.dev/v1", "kind": "KopfExample", "metadata": map[string]any{"name": name}, "spec": spec})
	}
	create("one", map[string]any{"size": 1})
	create("requeue", map[string]any{"size": 1, "requeue": true})
	create("flaky", map[string]any{"size": 1})

	t.Run("a change of the object", func(t *testing.T) {
		objs.WaitFor("one", 60*time.Second, func(u *unstructured.Unstructured) bool { return seen(u, "size") == "1" })
		objs.MergePatch("one", map[string]any{"spec": map[string]any{"size": 2}})
		objs.WaitFor("one", 60*time.Second, func(u *unstructured.Unstructured) bool { return seen(u, "size") == "2" })
	})

	t.Run("a change of an owned ConfigMap's data", func(t *testing.T) {
		h.waitQuiet(t, "one", 2*time.Second, 30*time.Second)
		cm, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "one-child", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cm.Data["extra"] = "x"
		if _, err := cs.CoreV1().ConfigMaps(ns).Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		objs.WaitFor("one", 60*time.Second, func(u *unstructured.Unstructured) bool { return seen(u, "extra") == "x" })
		h.waitRun(t, "one", 10*time.Second, "triggered by the ConfigMap", func(r run) bool { return r.trigger == "owned configmaps.v1 default/one-child" })
	})

	t.Run("a change of an owned child's status", func(t *testing.T) {
		owner := objs.Get("one")
		kids.Create(map[string]any{
			"apiVersion": "e2e.kopf.dev/v1", "kind": "ReconcileChild",
			"metadata": map[string]any{"name": "one-status", "ownerReferences": []any{map[string]any{
				"apiVersion": "kopf.dev/v1", "kind": "KopfExample", "name": "one", "uid": string(owner.GetUID()), "controller": true,
			}}},
			"spec": map[string]any{},
		})
		child := kids.Get("one-status")
		if err := unstructured.SetNestedField(child.Object, "Ready", "status", "phase"); err != nil {
			t.Fatal(err)
		}
		if _, err := dyn.Resource(children).Namespace(ns).UpdateStatus(ctx, child, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		objs.WaitFor("one", 60*time.Second, func(u *unstructured.Unstructured) bool { return seen(u, "phase") == "Ready" })
	})

	t.Run("a change of a watched Secret, mapped", func(t *testing.T) {
		h.waitQuiet(t, "one", 2*time.Second, 30*time.Second)
		secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "one-secret", Labels: map[string]string{"owner": "one"}}}
		if _, err := cs.CoreV1().Secrets(ns).Create(ctx, secret, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		h.waitRun(t, "one", 30*time.Second, "triggered by the Secret", func(r run) bool { return r.trigger == "watched secrets.v1 default/one-secret" })
	})

	t.Run("requeue after", func(t *testing.T) {
		h.waitRun(t, "requeue", 30*time.Second, "requeued", func(r run) bool { return r.trigger == "requeue" })
	})

	t.Run("errors retried with backoff, then success", func(t *testing.T) {
		objs.WaitFor("flaky", 60*time.Second, func(u *unstructured.Unstructured) bool { return seen(u, "size") == "1" })
		h.waitRun(t, "flaky", time.Second, "retried twice", func(r run) bool { return r.trigger == "retry" && r.retry == 2 })
		op.WaitLog("Reconcile handler 'reconcile_fn' failed: failing on purpose; retrying in 0.5 seconds.", time.Second)
		op.WaitLog("Reconcile handler 'reconcile_fn' failed: failing on purpose; retrying in 1 seconds.", time.Second)
	})

	t.Run("nothing written onto the children", func(t *testing.T) {
		cm, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "one-child", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		child := kids.Get("one-status")
		for what, meta := range map[string]metav1.Object{"the ConfigMap": cm, "the ReconcileChild": child} {
			if len(meta.GetAnnotations()) != 0 || len(meta.GetFinalizers()) != 0 || len(meta.GetLabels()) != 0 {
				t.Errorf("%s has annotations %v, finalizers %v, labels %v", what, meta.GetAnnotations(), meta.GetFinalizers(), meta.GetLabels())
			}
		}
	})

	t.Run("the deletion waits for the handler", func(t *testing.T) {
		if err := dyn.Resource(kopfExamples).Namespace(ns).Delete(ctx, "one", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		h.waitRun(t, "one", 30*time.Second, "retrying the deletion", func(r run) bool { return r.deleting && r.retry >= 2 })
		if obj := objs.Get("one"); !strings.Contains(strings.Join(obj.GetFinalizers(), ","), "kopf.zalando.org/KopfFinalizerMarker") {
			t.Fatalf("the object is not held: finalizers %v", obj.GetFinalizers())
		}
		h.mu.Lock()
		h.release = true
		h.mu.Unlock()
		objs.Delete("one", 30*time.Second) // waits until it is gone
	})
}
