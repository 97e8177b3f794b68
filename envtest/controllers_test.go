package envtest_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kopf-go/kopf/envtest"
)

// With WithControllers, what a cluster's controllers and kubelets do
// happens: a Deployment's pods run, owner references are
// garbage-collected, a namespace is deleted with its objects. Every
// assertion polls until its deadline.
func TestWithControllers(t *testing.T) {
	ctx := t.Context()
	started := time.Now()
	env := envtest.Start(t, envtest.WithControllers())
	t.Logf("the control plane with controllers started in %v", time.Since(started).Round(time.Millisecond))
	cs := kubernetes.NewForConfigOrDie(env.Config)

	t.Run("a Deployment's pods run", func(t *testing.T) {
		deploymentRuns(ctx, t, cs)
	})
	t.Run("a pod is deleted as a kubelet deletes it", func(t *testing.T) {
		podDeletion(ctx, t, cs)
	})
	t.Run("an owner's dependents are garbage-collected", func(t *testing.T) {
		ownerDeletion(ctx, t, cs)
	})
	t.Run("a namespace is deleted with its objects", func(t *testing.T) {
		namespaceDeletion(ctx, t, cs)
	})

	if t.Failed() {
		return // Start's cleanup shows the controllers' logs
	}
	names := []string{"kube-controller-manager", "kube-scheduler", "kwok"}
	pids := childPIDs(t, names...)
	if len(pids) != len(names) {
		t.Fatalf("%d of the controllers' processes are found while running: %v", len(pids), pids)
	}
	if err := env.Stop(); err != nil {
		t.Fatal(err)
	}
	for _, pid := range append(pids, childPIDs(t, "etcd", "kube-apiserver")...) {
		if _, err := os.Stat(filepath.Join("/proc", pid)); err == nil {
			t.Errorf("process %s is still running after Stop", pid)
		}
	}
}

// deploymentRuns: a Deployment gets a ReplicaSet, and its pods are bound
// to kwok's node, Running and Ready; the Deployment counts them ready.
func deploymentRuns(ctx context.Context, t *testing.T, cs kubernetes.Interface) {
	labels := map[string]string{"app": "web"}
	deploy := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](2),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "web", Image: "example.com/web:1"}}},
			},
		},
	}
	deploy, err := cs.AppsV1().Deployments("default").Create(ctx, deploy, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	poll(ctx, t, 30*time.Second, "a ReplicaSet owned by the Deployment", func(ctx context.Context) (bool, error) {
		rss, err := cs.AppsV1().ReplicaSets("default").List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
		if err != nil {
			return false, err
		}
		for _, rs := range rss.Items {
			if ref := metav1.GetControllerOf(&rs); ref != nil && ref.UID == deploy.UID {
				return true, nil
			}
		}
		return false, nil
	})
	poll(ctx, t, 30*time.Second, "two Running and Ready pods on "+envtest.NodeName, func(ctx context.Context) (bool, error) {
		pods, err := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
		if err != nil {
			return false, err
		}
		running := 0
		var states []string
		for _, pod := range pods.Items {
			if pod.Spec.NodeName == envtest.NodeName && pod.Status.Phase == corev1.PodRunning && podReady(&pod) {
				running++
			}
			states = append(states, fmt.Sprintf("%s on %q %s %+v", pod.Name, pod.Spec.NodeName, pod.Status.Phase, pod.Status.Conditions))
		}
		if running != 2 {
			return false, fmt.Errorf("the pods: %s", strings.Join(states, "; "))
		}
		return true, nil
	})
	poll(ctx, t, 30*time.Second, "the Deployment's two ready replicas", func(ctx context.Context) (bool, error) {
		d, err := cs.AppsV1().Deployments("default").Get(ctx, "web", metav1.GetOptions{})
		return err == nil && d.Status.ReadyReplicas == 2, err
	})
}

// podDeletion: a running pod whose deletion begins is deleted by kwok (with
// a grace period of 0, as a kubelet confirms a stopped pod), but stays
// while it has a finalizer, and disappears once the finalizer is removed.
func podDeletion(ctx context.Context, t *testing.T, cs kubernetes.Interface) {
	pods := cs.CoreV1().Pods("default")
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "held", Finalizers: []string{"example.com/hold"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "held", Image: "example.com/held:1"}}},
	}
	if _, err := pods.Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	poll(ctx, t, 30*time.Second, "the pod Running", func(ctx context.Context) (bool, error) {
		p, err := pods.Get(ctx, "held", metav1.GetOptions{})
		return err == nil && p.Status.Phase == corev1.PodRunning, err
	})
	if err := pods.Delete(ctx, "held", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	poll(ctx, t, 30*time.Second, "the pod's deletion confirmed (grace period 0), its finalizer kept", func(ctx context.Context) (bool, error) {
		p, err := pods.Get(ctx, "held", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return ptr.Deref(p.DeletionGracePeriodSeconds, -1) == 0 && len(p.Finalizers) == 1, nil
	})
	patch := []byte(`{"metadata":{"finalizers":null}}`)
	if _, err := pods.Patch(ctx, "held", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	poll(ctx, t, 30*time.Second, "the pod's disappearance", func(ctx context.Context) (bool, error) {
		_, err := pods.Get(ctx, "held", metav1.GetOptions{})
		return apierrors.IsNotFound(err), ignoreNotFound(err)
	})
}

// ownerDeletion: deleting an owner deletes the object that names it in its
// ownerReferences.
func ownerDeletion(ctx context.Context, t *testing.T, cs kubernetes.Interface) {
	cms := cs.CoreV1().ConfigMaps("default")
	owner, err := cms.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "owner"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	child := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		Name:            "child",
		OwnerReferences: []metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: owner.Name, UID: owner.UID}},
	}}
	if _, err := cms.Create(ctx, child, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cms.Delete(ctx, owner.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	poll(ctx, t, 30*time.Second, "the child's deletion", func(ctx context.Context) (bool, error) {
		_, err := cms.Get(ctx, "child", metav1.GetOptions{})
		return apierrors.IsNotFound(err), ignoreNotFound(err)
	})
}

// namespaceDeletion: a namespace with a ConfigMap and a running pod is
// deleted: the namespace controller deletes its objects, kwok its pod, and
// the namespace disappears.
func namespaceDeletion(ctx context.Context, t *testing.T, cs kubernetes.Interface) {
	ns, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "doomed-"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().ConfigMaps(ns.Name).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "data"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "worker"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "worker", Image: "example.com/worker:1"}}},
	}
	if _, err := cs.CoreV1().Pods(ns.Name).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	poll(ctx, t, 30*time.Second, "the pod Running", func(ctx context.Context) (bool, error) {
		p, err := cs.CoreV1().Pods(ns.Name).Get(ctx, "worker", metav1.GetOptions{})
		return err == nil && p.Status.Phase == corev1.PodRunning, err
	})
	if err := cs.CoreV1().Namespaces().Delete(ctx, ns.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	poll(ctx, t, 60*time.Second, "the namespace's disappearance", func(ctx context.Context) (bool, error) {
		_, err := cs.CoreV1().Namespaces().Get(ctx, ns.Name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), ignoreNotFound(err)
	})
}

// Without the controllers' binaries, WithControllers fails before anything
// starts and names the command that builds them.
func TestWithControllersMissing(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"etcd", "kube-apiserver", "kube-scheduler"} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	env, err := envtest.StartDetached(envtest.WithAssets(dir), envtest.WithControllers())
	if err == nil {
		_ = env.Stop()
		t.Fatal("StartDetached succeeds without kube-controller-manager")
	}
	if !errors.Is(err, envtest.ErrNoControllers) || !strings.Contains(err.Error(), "kube-controller-manager is missing in "+dir) ||
		!strings.Contains(err.Error(), "`kopf-gen envtest --controllers`") {
		t.Errorf("the error does not say what is missing and how to build it: %v", err)
	}
}

// poll calls cond until it returns true or the timeout passes, and then
// fails the test naming what did not happen and cond's last error (which
// may describe the state so far).
func poll(ctx context.Context, t *testing.T, timeout time.Duration, what string, cond func(context.Context) (bool, error)) {
	t.Helper()
	var last error
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		ok, err := cond(ctx)
		if err != nil {
			last = err
		}
		return ok, nil
	})
	if err != nil {
		t.Fatalf("waiting %v for %s: %v (last: %v)", timeout, what, err, last)
	}
}

func podReady(pod *corev1.Pod) bool {
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

func ignoreNotFound(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
