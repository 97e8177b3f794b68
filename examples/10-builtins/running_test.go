package main

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kopf-go/kopf/envtest"
	"github.com/kopf-go/kopf/kopftest"
)

// Kopf's example as it behaves in a cluster, on a control plane with
// controllers (the scheduler, kwok's simulated node and pod lifecycle): a
// new pod is scheduled and runs, the operator announces its killing in 30
// s (the example's own delay), and 30 s later kills it: the pod is gone.
// TestBuiltins checks the killers' bookkeeping, faster, without
// controllers.
func TestBuiltinsKillsRunningPod(t *testing.T) {
	ctx := t.Context()
	env := envtest.Start(t, envtest.WithControllers())
	pods := kubernetes.NewForConfigOrDie(env.Config).CoreV1().Pods("default")
	op := kopftest.Start(t, env.Config, Register)
	op.WaitReady(30 * time.Second)

	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "example-pod", Namespace: "default"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "busybox"}}},
	}
	if _, err := pods.Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	const ref = "[default/example-pod] "
	op.WaitLog(ref+"=== Pod killing happens in 30s.", 30*time.Second)
	announced := time.Now()
	kopftest.Eventually(t, 30*time.Second, "the pod to run", func(ctx context.Context) (bool, error) {
		got, err := pods.Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return got.Spec.NodeName != "" && got.Status.Phase == corev1.PodRunning, nil
	})

	op.WaitLog(ref+"=== Pod killing happens NOW!", 45*time.Second)
	if waited := time.Since(announced); waited < 25*time.Second {
		t.Errorf("the pod was killed %s after the announcement, want about 30 s", waited.Round(time.Second))
	}
	kopftest.Eventually(t, 60*time.Second, "the killed pod to be gone", func(ctx context.Context) (bool, error) {
		_, err := pods.Get(ctx, pod.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	})
	if n := op.CountLog("=== Pod killing failed"); n != 0 {
		t.Errorf("the killing failed:\n%s", op.Logs())
	}
}
