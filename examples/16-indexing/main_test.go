package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/kopf-go/kopf/envtest"
	"github.com/kopf-go/kopf/examples"
	"github.com/kopf-go/kopf/kopftest"
)

var pods = schema.GroupVersionResource{Version: "v1", Resource: "pods"}

// As Kopf's end-to-end run of this example, with what it cannot check:
// the timer's status follows the pods' phases, creations and deletions.
// Pods do not run without a kubelet (envtest has none): the test sets
// their status.phase through the status subresource, as a kubelet would.
func TestIndexing(t *testing.T) {
	env := envtest.Start(t, envtest.WithCRDs("../crd.yaml"))
	ctx := t.Context()
	cs := kubernetes.NewForConfigOrDie(env.Config)
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "other"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	createPod(t, cs, "default", "pod-a", map[string]string{"app": "web"}, corev1.PodRunning)
	createPod(t, cs, "default", "pod-b", map[string]string{"app": "web", "tier": "db"}, corev1.PodPending)
	createPod(t, cs, "other", "pod-c", map[string]string{"app": "web"}, corev1.PodRunning)

	objs := kopftest.NewObjects(t, env.Config, examples.KopfExamples, "default")
	op := kopftest.Start(t, env.Config, Register)
	op.WaitReady(30 * time.Second)
	if err := env.Apply(ctx, examples.Object); err != nil {
		t.Fatal(err)
	}

	// Pods found at start are indexed before the timer first runs.
	waitRunning(t, objs, []string{"default::pod-a"})
	// A pod that starts running.
	setPhase(t, cs, "default", "pod-b", corev1.PodRunning)
	waitRunning(t, objs, []string{"default::pod-a", "default::pod-b"})
	// A new running pod.
	createPod(t, cs, "default", "pod-d", nil, corev1.PodRunning)
	waitRunning(t, objs, []string{"default::pod-a", "default::pod-b", "default::pod-d"})
	// A deleted pod.
	if err := cs.CoreV1().Pods("default").Delete(ctx, "pod-a", metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
		t.Fatal(err)
	}
	waitRunning(t, objs, []string{"default::pod-b", "default::pod-d"})

	// The probes read is_running: every pod in sight, running or not.
	want := map[string]string{"pod_count": "3", "pod_names": "[pod-b pod-c pod-d]"}
	var got map[string]string
	for deadline := time.Now().Add(10 * time.Second); ; {
		probes, err := op.Probe(ctx)
		if err != nil {
			t.Fatalf("probing: %v", err)
		}
		got = map[string]string{}
		for id, v := range probes {
			got[id] = fmt.Sprint(v)
		}
		if maps.Equal(got, want) || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !maps.Equal(got, want) {
		t.Errorf("probes: got %v, want %v", got, want)
	}

	if err := op.Stop(); err != nil {
		t.Fatalf("the operator: %v", err)
	}
	if n := len(op.Outcomes(kopftest.Match{Handler: "intervalled", Cause: kopftest.CauseTimer, Result: kopftest.Succeeded})); n < 2 {
		t.Errorf("intervalled succeeded %d times, want at least 2", n)
	}
	if n := op.CountLog("failed with an exception"); n != 0 {
		t.Errorf("%d failures in the log:\n%s", n, op.Logs())
	}
}

func createPod(t *testing.T, cs kubernetes.Interface, ns, name string, labels map[string]string, phase corev1.PodPhase) {
	t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "busybox"}}},
	}
	if _, err := cs.CoreV1().Pods(ns).Create(t.Context(), pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	setPhase(t, cs, ns, name, phase)
}

// setPhase sets a pod's status.phase, as a kubelet would.
func setPhase(t *testing.T, cs kubernetes.Interface, ns, name string, phase corev1.PodPhase) {
	t.Helper()
	patch, _ := json.Marshal(map[string]any{"status": map[string]any{"phase": phase}})
	if _, err := cs.CoreV1().Pods(ns).Patch(t.Context(), name, types.MergePatchType, patch, metav1.PatchOptions{}, "status"); err != nil {
		t.Fatal(err)
	}
}

// waitRunning waits until the example object's status.running-pods is
// want (the timer runs every 5 seconds).
func waitRunning(t *testing.T, objs *kopftest.Objects, want []string) {
	t.Helper()
	var got []string
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		got = nil
		status, _ := objs.Get("kopf-example-1").Object["status"].(map[string]any)
		if list, ok := status["running-pods"].([]any); ok {
			got = []string{}
			for _, v := range list {
				s, _ := v.(string)
				got = append(got, s)
			}
		}
		if slices.Equal(got, want) {
			return
		}
		select {
		case <-t.Context().Done():
			t.Fatal(context.Cause(t.Context()))
		case <-time.After(200 * time.Millisecond):
		}
	}
	t.Fatalf("status.running-pods = %v, want %v", got, want)
}
