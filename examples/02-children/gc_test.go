package main

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/kopf-go/kopf/envtest"
	v1 "github.com/kopf-go/kopf/examples/apis/kopf/v1"
	"github.com/kopf-go/kopf/examples/generated/clientset/versioned"
	"github.com/kopf-go/kopf/kopftest"
)

// What kopf.Adopt's owner reference is for, on a control plane with
// controllers (the garbage collector, the scheduler, kwok's simulated
// node): the child pod is scheduled and runs, and deleting its owner as
// kubectl does (in the background) deletes the pod too. TestChildren
// checks the reference itself, faster, without controllers.
func TestChildrenGarbageCollected(t *testing.T) {
	ctx := t.Context()
	env := envtest.Start(t, envtest.WithCRDs("../crd.yaml"), envtest.WithControllers())
	op := kopftest.Start(t, env.Config, Register)
	kexes := versioned.NewForConfigOrDie(env.Config).KopfV1().KopfExamples("default")
	pods := kubernetes.NewForConfigOrDie(env.Config).CoreV1().Pods("default")

	owner, err := kexes.Create(ctx, &v1.KopfExample{
		ObjectMeta: metav1.ObjectMeta{Name: "kopf-example-1"},
		Spec:       v1.KopfExampleSpec{Duration: "1m", Field: "value"},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	op.WaitOutcome(kopftest.Match{Name: owner.Name, Handler: "create_fn", Result: kopftest.Succeeded}, 30*time.Second)
	got, err := kexes.Get(ctx, owner.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Status.CreateFn == nil || len(got.Status.CreateFn.Children) != 1 {
		t.Fatalf("status.create_fn lists no one child: %+v", got.Status)
	}
	uid := got.Status.CreateFn.Children[0]

	// The child runs: scheduled to a node, its phase Running.
	var child *corev1.Pod
	defer func() {
		if t.Failed() && child != nil {
			t.Logf("the child pod as last seen: node %q, status %+v", child.Spec.NodeName, child.Status)
		}
	}()
	poll(t, 60*time.Second, "the child pod to run", func(ctx context.Context) (bool, error) {
		list, err := pods.List(ctx, metav1.ListOptions{})
		if err != nil || len(list.Items) != 1 {
			return false, err
		}
		child = &list.Items[0]
		return string(child.UID) == uid && child.Spec.NodeName != "" && child.Status.Phase == corev1.PodRunning, nil
	})

	// kubectl delete: the owner goes at once, the garbage collector
	// deletes its child.
	if err := kexes.Delete(ctx, owner.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	poll(t, 60*time.Second, "the garbage collector to delete the child pod "+child.Name, func(ctx context.Context) (bool, error) {
		_, err := pods.Get(ctx, child.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
	if n := op.CountLog("failed with an exception"); n != 0 {
		t.Errorf("%d failures in the log:\n%s", n, op.Logs())
	}
}

// poll checks cond every 100 ms until it holds, and fails the test with
// what it waited for after the timeout.
func poll(t *testing.T, timeout time.Duration, what string, cond func(ctx context.Context) (bool, error)) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(t.Context(), 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		ok, err := cond(ctx)
		if err != nil {
			last = err
		}
		return ok, nil
	})
	if err != nil {
		t.Fatalf("waiting %s for %s: %v (last error: %v)", timeout, what, err, last)
	}
}
