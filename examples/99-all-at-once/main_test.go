package main

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/kopf-go/kopf/envtest"
	"github.com/kopf-go/kopf/examples"
	"github.com/kopf-go/kopf/kopftest"
)

// As Kopf's end-to-end run of this example (its E2E marks), on a control
// plane with controllers, so that the child pod runs and is
// garbage-collected: the startup handlers succeed (one after three
// temporary failures); Kopf's obj.yaml gets its three creation handlers'
// effects (the Events, create_2 succeeding on its second attempt, the
// adopted and labelled pod, which the on.event handler notices); a change
// of spec.lst runs the update and field handlers; the deletion runs the
// deletion handler and the garbage collector deletes the pod; the stop runs
// the cleanup handler. Each handler succeeds once, as E2E_SUCCESS_COUNTS.
func TestAllAtOnce(t *testing.T) {
	env := envtest.Start(t, envtest.WithCRDs("../crd.yaml"), envtest.WithControllers())
	op := kopftest.Start(t, env.Config, Register)
	op.WaitLog("Activity 'startup_fn_retried' succeeded.", 30*time.Second)
	op.WaitLog("Activity 'startup_fn_simple' succeeded.", 10*time.Second)

	ctx := t.Context()
	objects := dynamic.NewForConfigOrDie(env.Config).Resource(examples.KopfExamples).Namespace("default")
	pods := kubernetes.NewForConfigOrDie(env.Config).CoreV1().Pods("default")
	obj := exampleObject(t)
	if _, err := objects.Create(ctx, obj, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	name := obj.GetName()
	for _, handler := range []string{"create_1", "create_2", "create_pod"} {
		op.WaitOutcome(kopftest.Match{Name: name, Handler: handler, Result: kopftest.Succeeded}, 30*time.Second)
	}
	op.WaitLog("Handler 'create_2' failed with an exception and will try again in 1 seconds: Whoops!", time.Second)
	got, err := objects.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for handler, want := range map[string]string{"create_1": "job1-status", "create_2": "job2-status"} {
		if v, _, _ := unstructured.NestedInt64(got.Object, "status", handler, want); v != 100 {
			t.Errorf("status.%s.%s = %d, want 100: %v", handler, want, v, got.Object["status"])
		}
	}
	checkEvents(t, env, name)

	child := runningChild(t, pods, string(got.GetUID()))
	op.WaitLog("[default/"+child.Name+"] This pod is special for us.", 30*time.Second)

	patch := []byte(`{"spec": {"lst": ["a", "b"]}}`)
	if _, err := objects.Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	op.WaitOutcome(kopftest.Match{Name: name, Handler: "update", Result: kopftest.Succeeded}, 30*time.Second)
	op.WaitOutcome(kopftest.Match{Name: name, Handler: "update_lst/spec.lst", Result: kopftest.Succeeded}, 30*time.Second)

	if err := objects.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	op.WaitOutcome(kopftest.Match{Name: name, Handler: "delete", Result: kopftest.Succeeded}, 30*time.Second)
	kopftest.Eventually(t, 60*time.Second, "the garbage collector to delete the child pod "+child.Name, func(ctx context.Context) (bool, error) {
		_, err := pods.Get(ctx, child.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})

	if err := op.Stop(); err != nil {
		t.Fatalf("stopping: %v", err)
	}
	op.WaitLog("Cleaning up in 3s...", time.Second)
	for id, want := range map[string]int{"create_1": 1, "create_2": 1, "create_pod": 1, "delete": 1} {
		if n := op.CountLog("Handler '" + id + "' succeeded."); n != want {
			t.Errorf("%s succeeded %d times, want %d", id, n, want)
		}
	}
	for id, want := range map[string]int{"startup_fn_simple": 1, "startup_fn_retried": 1, "cleanup_fn": 1} {
		if n := op.CountLog("Activity '" + id + "' succeeded."); n != want {
			t.Errorf("%s succeeded %d times, want %d", id, n, want)
		}
	}
	if t.Failed() {
		t.Logf("the operator's log:\n%s", op.Logs())
	}
}

// exampleObject is Kopf's obj.yaml.
func exampleObject(t *testing.T) *unstructured.Unstructured {
	t.Helper()
	obj := &unstructured.Unstructured{}
	if err := yaml.Unmarshal(examples.Object, &obj.Object); err != nil {
		t.Fatal(err)
	}
	return obj
}

// checkEvents checks the Events that create_1 posts about the object.
func checkEvents(t *testing.T, env *envtest.Environment, name string) {
	t.Helper()
	events := kubernetes.NewForConfigOrDie(env.Config).CoreV1().Events("default")
	want := map[string]bool{"Normal/AnyReason/": false, "Warning/SomeReason/Cannot do something": false}
	kopftest.Eventually(t, 30*time.Second, "the Events of create_1", func(ctx context.Context) (bool, error) {
		list, err := events.List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=" + name})
		if err != nil {
			return false, err
		}
		for _, e := range list.Items {
			key := e.Type + "/" + e.Reason + "/" + e.Message
			if _, ok := want[key]; ok {
				want[key] = true
			}
		}
		return want["Normal/AnyReason/"] && want["Warning/SomeReason/Cannot do something"], nil
	})
}

// runningChild waits until the pod that create_pod made, owned by the
// object of the uid and labelled application=kopf-example-10, runs.
func runningChild(t *testing.T, pods interface {
	List(context.Context, metav1.ListOptions) (*corev1.PodList, error)
}, uid string) *corev1.Pod {
	t.Helper()
	var child *corev1.Pod
	kopftest.Eventually(t, 60*time.Second, "the child pod to run", func(ctx context.Context) (bool, error) {
		list, err := pods.List(ctx, metav1.ListOptions{LabelSelector: "application=kopf-example-10"})
		if err != nil {
			return false, err
		}
		for i := range list.Items {
			for _, ref := range list.Items[i].OwnerReferences {
				if string(ref.UID) == uid {
					child = &list.Items[i]
				}
			}
		}
		return child != nil && child.Spec.NodeName != "" && child.Status.Phase == corev1.PodRunning, nil
	})
	return child
}
