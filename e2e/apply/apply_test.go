// Package apply_test checks kopf.Apply and kopf.ApplyStatus on a real
// control plane, in an operator's handler: a child ConfigMap applied with
// client-go's apply configurations, a status field of the handler's own
// object applied to its status subresource, a conflict with another
// field manager retried as a TemporaryError and named in the log, and
// ForceOwnership taking the field.
package apply_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kopf-go/kopf"
	"github.com/kopf-go/kopf/envtest"
	"github.com/kopf-go/kopf/kopftest"
)

const ns = "default"

var kopfExamples = schema.GroupVersionResource{Group: "kopf.dev", Version: "v1", Resource: "kopfexamples"}

// register adds create_fn: it applies the child ConfigMap "<name>-child"
// with data.owner set to its owner's name (forced on a retry: the first
// attempt's conflict is the test's), then status.applied.phase of its own
// object.
func register(r *kopf.Registry) error {
	return r.AddChanging(kopf.ChangingHandler{
		ID:       "create_fn",
		Selector: kopf.Selector{Group: "kopf.dev", Version: "v1", Name: "kopfexamples"},
		Reasons:  []kopf.Reason{kopf.ReasonCreate},
		Fn: func(ctx context.Context, kw *kopf.ChangingKwargs) (any, error) {
			child := corev1ac.ConfigMap(kw.Name+"-child", kw.Namespace).
				WithData(map[string]string{"owner": kw.Name})
			opts := []kopf.ApplyOption{kopf.ConflictDelay(time.Second)}
			if kw.Retry > 0 {
				opts = append(opts, kopf.ForceOwnership())
			}
			if _, err := kopf.Apply(ctx, child, opts...); err != nil {
				return nil, err
			}
			status := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "kopf.dev/v1", "kind": "KopfExample",
				"metadata": map[string]any{"name": kw.Name, "namespace": kw.Namespace},
				"status":   map[string]any{"applied": map[string]any{"phase": "ready"}},
			}}
			if _, err := kopf.ApplyStatus(ctx, status); err != nil {
				return nil, err
			}
			return nil, nil
		},
	})
}

func TestApply(t *testing.T) {
	ctx := context.Background()
	env := envtest.Start(t, envtest.WithCRDs(filepath.Join("..", "..", "examples", "crd.yaml")))
	cs := kubernetes.NewForConfigOrDie(env.Config)

	// Another field manager owns the child's data.owner before the
	// operator applies it.
	taken := corev1ac.ConfigMap("taken-child", ns).WithData(map[string]string{"owner": "someone-else"})
	if _, err := cs.CoreV1().ConfigMaps(ns).Apply(ctx, taken, metav1.ApplyOptions{FieldManager: "someone-else"}); err != nil {
		t.Fatal(err)
	}

	op := kopftest.Start(t, env.Config, register, kopf.WithNamespaces(ns))
	op.WaitReady(30 * time.Second)
	objs := kopftest.NewObjects(t, env.Config, kopfExamples, ns)
	for _, name := range []string{"free", "taken"} {
		objs.Create(map[string]any{
			"apiVersion": "kopf.dev/v1", "kind": "KopfExample",
			"metadata": map[string]any{"name": name}, "spec": map[string]any{"field": "value"},
		})
	}

	t.Run("a child and a status applied as kopf", func(t *testing.T) {
		obj := objs.WaitFor("free", 60*time.Second, func(u *unstructured.Unstructured) bool {
			phase, _, _ := unstructured.NestedString(u.Object, "status", "applied", "phase")
			return phase == "ready"
		})
		if got := managers(obj.GetManagedFields(), "status"); !slices.Contains(got, kopf.FieldManager) {
			t.Errorf("the status's managers are %v, want %q among them", got, kopf.FieldManager)
		}
		cm := child(t, cs, "free-child")
		if cm.Data["owner"] != "free" || !slices.Equal(managers(cm.ManagedFields, ""), []string{kopf.FieldManager}) {
			t.Errorf("the child has %v managed by %v, want owner=free by kopf", cm.Data, managers(cm.ManagedFields, ""))
		}
	})

	t.Run("a conflict retried, then forced", func(t *testing.T) {
		op.WaitLog(`Handler 'create_fn' failed temporarily: applying ConfigMap default/taken-child as "kopf": conflict with "someone-else" on .data.owner (ForceOwnership takes these fields)`, 60*time.Second)
		objs.WaitFor("taken", 60*time.Second, func(u *unstructured.Unstructured) bool {
			phase, _, _ := unstructured.NestedString(u.Object, "status", "applied", "phase")
			return phase == "ready"
		})
		cm := child(t, cs, "taken-child")
		if cm.Data["owner"] != "taken" || !slices.Equal(managers(cm.ManagedFields, ""), []string{kopf.FieldManager}) {
			t.Errorf("the child has %v managed by %v, want owner=taken by kopf alone", cm.Data, managers(cm.ManagedFields, ""))
		}
	})
}

func child(t *testing.T, cs kubernetes.Interface, name string) *corev1.ConfigMap {
	t.Helper()
	cm, err := cs.CoreV1().ConfigMaps(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the child %s: %v", name, err)
	}
	return cm
}

// managers are the managers of server-side applies to a subresource ("":
// the object itself).
func managers(fields []metav1.ManagedFieldsEntry, subresource string) []string {
	var out []string
	for _, f := range fields {
		if f.Operation == metav1.ManagedFieldsOperationApply && f.Subresource == subresource {
			out = append(out, f.Manager)
		}
	}
	slices.Sort(out)
	return out
}
