package workloads_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kopf-go/kopf/e2e/cluster"
)

// A WebApp is run as a Deployment: the operator creates it, adopted; the
// Deployment gets its ReplicaSet and the ReplicaSet its pods, which run
// and are ready; the operator reads their readiness back into the
// WebApp's status. Scaling the WebApp up and down scales them, and
// deleting it deletes them all (the garbage collector).
func TestDeployment(t *testing.T) {
	t.Parallel()
	c := newClients()
	ns := namespace(t, c, "deployments")
	op := startOperator(t, ns, "deployop")
	createWebApp(t, c, ns, "web", 2)
	app, err := getWebApp(t.Context(), c, ns, "web")
	if err != nil {
		t.Fatal(err)
	}
	deployment := waitRunning(t, c, ns, app.UID, 2)
	replicaSets, err := c.cs.AppsV1().ReplicaSets(ns).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(replicaSets.Items) != 1 || !controlledBy(&replicaSets.Items[0], deployment.UID) {
		t.Errorf("the Deployment has not one ReplicaSet: %d in the namespace", len(replicaSets.Items))
	}

	for _, replicas := range []int32{3, 1} {
		patch := fmt.Appendf(nil, `{"spec": {"replicas": %d}}`, replicas)
		if _, err := c.webapps.Namespace(ns).Patch(t.Context(), "web", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		op.WaitLog(t, fmt.Sprintf("[%s/web] Scaled the Deployment to %d replicas.", ns, replicas), 30*time.Second)
		waitRunning(t, c, ns, app.UID, replicas)
	}

	if err := c.webapps.Namespace(ns).Delete(t.Context(), "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	op.WaitLog(t, fmt.Sprintf("[%s/web] Retiring the WebApp web.", ns), 30*time.Second)
	waitFor(t, 60*time.Second, "the Deployment, its ReplicaSet and pods to be garbage-collected", func(ctx context.Context) (bool, error) {
		if _, err := c.cs.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			return false, err
		}
		rs, err := c.cs.AppsV1().ReplicaSets(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		pods, err := c.cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		return err == nil && len(rs.Items) == 0 && len(pods.Items) == 0, err
	})
	op.Stop(t, 15*time.Second)
}

// waitRunning waits until the WebApp's Deployment (owned by uid) wants n
// replicas and has them: n pods of its ReplicaSet, running and ready,
// and the WebApp's status says so. It returns the Deployment.
func waitRunning(t *testing.T, c clients, ns string, uid types.UID, n int32) *appsv1.Deployment {
	t.Helper()
	var deployment *appsv1.Deployment
	var seen string // the last state seen, for the failure
	err := cluster.WaitFor(t.Context(), 90*time.Second, func(ctx context.Context) (bool, error) {
		var err error
		deployment, err = c.cs.AppsV1().Deployments(ns).Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if !controlledBy(deployment, uid) {
			return false, fmt.Errorf("the Deployment is not controlled by the WebApp: %v", deployment.OwnerReferences)
		}
		pods, err := c.cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=web"})
		if err != nil {
			return false, err
		}
		ready := 0
		for _, p := range pods.Items {
			if p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning && podReady(&p) {
				ready++
			}
		}
		app, err := getWebApp(ctx, c, ns, "web")
		if err != nil {
			return false, err
		}
		seen = fmt.Sprintf("the Deployment wants %d replicas; %d pods, %d running and ready; the WebApp's status: replicas=%d readyReplicas=%d",
			*deployment.Spec.Replicas, len(pods.Items), ready, app.Status.Replicas, app.Status.ReadyReplicas)
		return *deployment.Spec.Replicas == n && len(pods.Items) == int(n) && ready == int(n) &&
			app.Status.Replicas == n && app.Status.ReadyReplicas == n, nil
	})
	if err != nil {
		t.Fatalf("waiting for %d ready pods of the Deployment, and the WebApp's status to say so: %v; last seen: %s", n, err, seen)
	}
	return deployment
}

func controlledBy(obj metav1.Object, uid types.UID) bool {
	ref := metav1.GetControllerOfNoCopy(obj)
	return ref != nil && ref.UID == uid
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
