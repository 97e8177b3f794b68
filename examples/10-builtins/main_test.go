package main

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"

	"github.com/kopf-go/kopf/e2e/cluster"
	"github.com/kopf-go/kopf/kopftest"
)

// A pod in sight gets a killer; deleting it first cancels the killer, and
// the finalizer that the delete handler needs lets the pod go. Nothing
// schedules pods here, which these handlers do not need.
func TestBuiltins(t *testing.T) {
	ctx := context.Background()
	c := cluster.Start(t)
	cs := kubernetes.NewForConfigOrDie(c.Config)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "example-pod", Namespace: "default"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "busybox"}}},
	}
	// A pod that exists before the operator starts, never handled, is
	// created in Kopf's terms (it has no diff-base to resume from).
	if _, err := cs.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	op := kopftest.Start(t, c.Config, Register)
	const ref = "[default/example-pod] "
	op.WaitLog(ref+"=== Pod killing happens in 30s.", 30*time.Second)
	op.WaitLog(ref+"Creation is processed: 1 succeeded; 0 failed.", 10*time.Second)

	// A new pod is created and gets its killer too.
	pod2 := pod.DeepCopy()
	pod2.Name = "example-pod-2"
	if _, err := cs.CoreV1().Pods("default").Create(ctx, pod2, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	op.WaitLog("[default/example-pod-2] Creation is processed: 1 succeeded; 0 failed.", 30*time.Second)
	op.WaitLog("[default/example-pod-2] === Pod killing happens in 30s.", time.Second)

	// The delete handler holds the pods with Kopf's finalizer.
	pods := kopftest.NewObjects(t, c.Config, corev1.SchemeGroupVersion.WithResource("pods"), "default")
	pods.WaitFor("example-pod", 10*time.Second, func(o *unstructured.Unstructured) bool {
		for _, f := range o.GetFinalizers() {
			if f == "kopf.zalando.org/KopfFinalizerMarker" {
				return true
			}
		}
		return false
	})
	pods.Delete("example-pod", 30*time.Second)
	op.WaitLog(ref+"=== Pod killing is cancelled!", 10*time.Second)
	op.WaitLog(ref+"Deletion is processed: 1 succeeded; 0 failed.", 10*time.Second)
	op.WaitLog(ref+"Removing the finalizer, thus allowing the actual deletion.", 10*time.Second)
	op.WaitLog(ref+"Deleted, really deleted, and we are notified.", 10*time.Second)
	if n := op.CountLog(ref + "=== Pod killing happens in 30s."); n != 1 {
		t.Errorf("the pod got %d killers, want 1", n)
	}
	pods.Delete("example-pod-2", 30*time.Second)
	op.WaitLog("[default/example-pod-2] === Pod killing is cancelled!", 10*time.Second)
	op.Stop()

	// After a restart, a handled pod is resumed: it gets a killer again.
	pod3 := pod.DeepCopy()
	pod3.Name = "example-pod-3"
	if _, err := cs.CoreV1().Pods("default").Create(ctx, pod3, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	op2 := kopftest.Start(t, c.Config, Register)
	op2.WaitLog("[default/example-pod-3] Creation is processed: 1 succeeded; 0 failed.", 30*time.Second)
	op2.Stop()
	op3 := kopftest.Start(t, c.Config, Register)
	op3.WaitLog("[default/example-pod-3] Resuming is processed: 1 succeeded; 0 failed.", 30*time.Second)
	op3.WaitLog("[default/example-pod-3] === Pod killing happens in 30s.", 5*time.Second)
}
