package main

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"

	"github.com/kopf-go/kopf/envtest"
	v1 "github.com/kopf-go/kopf/examples/apis/kopf/v1"
	"github.com/kopf-go/kopf/examples/generated/clientset/versioned"
	kopfv1 "github.com/kopf-go/kopf/examples/generated/clientset/versioned/typed/kopf/v1"
	"github.com/kopf-go/kopf/kopftest"
)

// What kopf.Adopt's owner reference is for, on a control plane with
// controllers (the garbage collector, the scheduler, kwok's simulated
// node): the child pod is scheduled and runs, and deleting its owner
// deletes the pod too: in the background as kubectl does by default (the
// owner goes at once), or in the foreground (kubectl delete
// --cascade=foreground: the owner stays until its child, which blocks
// the owner's deletion, is gone). TestChildren checks the reference
// itself, faster, without controllers.
func TestChildrenGarbageCollected(t *testing.T) {
	env := envtest.Start(t, envtest.WithCRDs("../crd.yaml"), envtest.WithControllers())
	op := kopftest.Start(t, env.Config, Register)
	kexes := versioned.NewForConfigOrDie(env.Config).KopfV1().KopfExamples("default")
	pods := kubernetes.NewForConfigOrDie(env.Config).CoreV1().Pods("default")
	for _, propagation := range []metav1.DeletionPropagation{metav1.DeletePropagationBackground, metav1.DeletePropagationForeground} {
		t.Run(string(propagation), func(t *testing.T) {
			ctx := t.Context()
			name := "kopf-example-" + strings.ToLower(string(propagation))
			child := runningChild(t, op, kexes, pods, name)
			if err := kexes.Delete(ctx, name, metav1.DeleteOptions{PropagationPolicy: &propagation}); err != nil {
				t.Fatal(err)
			}
			kopftest.Eventually(t, 60*time.Second, "the owner to be gone", func(ctx context.Context) (bool, error) {
				_, err := kexes.Get(ctx, name, metav1.GetOptions{})
				if apierrors.IsNotFound(err) {
					return true, nil
				}
				return false, err
			})
			_, err := pods.Get(ctx, child.Name, metav1.GetOptions{})
			if propagation == metav1.DeletePropagationForeground && !apierrors.IsNotFound(err) {
				t.Errorf("the owner is gone before its child pod, deleted in the foreground (the pod: %v)", err)
			}
			kopftest.Eventually(t, 60*time.Second, "the garbage collector to delete the child pod "+child.Name, func(ctx context.Context) (bool, error) {
				_, err := pods.Get(ctx, child.Name, metav1.GetOptions{})
				if apierrors.IsNotFound(err) {
					return true, nil
				}
				return false, err
			})
		})
	}
	if n := op.CountLog("failed with an exception"); n != 0 {
		t.Errorf("%d failures in the log:\n%s", n, op.Logs())
	}
}

// runningChild creates a KopfExample and waits until its child pod, the
// one listed in its status, runs: scheduled to a node, its phase Running.
func runningChild(t *testing.T, op *kopftest.Operator, kexes kopfv1.KopfExampleInterface, pods corev1client.PodInterface, name string) *corev1.Pod {
	t.Helper()
	ctx := t.Context()
	_, err := kexes.Create(ctx, &v1.KopfExample{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       v1.KopfExampleSpec{Duration: "1m", Field: "value"},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	op.WaitOutcome(kopftest.Match{Name: name, Handler: "create_fn", Result: kopftest.Succeeded}, 30*time.Second)
	got, err := kexes.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Status.CreateFn == nil || len(got.Status.CreateFn.Children) != 1 {
		t.Fatalf("status.create_fn lists no one child: %+v", got.Status)
	}
	uid := got.Status.CreateFn.Children[0]
	var child *corev1.Pod
	defer func() {
		if t.Failed() && child != nil {
			t.Logf("the child pod as last seen: node %q, status %+v", child.Spec.NodeName, child.Status)
		}
	}()
	kopftest.Eventually(t, 60*time.Second, "the child pod to run", func(ctx context.Context) (bool, error) {
		list, err := pods.List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		for i := range list.Items {
			if string(list.Items[i].UID) == uid {
				child = &list.Items[i]
			}
		}
		return child != nil && child.Spec.NodeName != "" && child.Status.Phase == corev1.PodRunning, nil
	})
	return child
}
