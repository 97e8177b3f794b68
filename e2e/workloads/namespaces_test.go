package workloads_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kopf-go/kopf/e2e/cluster"
)

// webapps are the WebApps of the namespace tests.
var webapps = []string{"app-1", "app-2"}

// A namespace is deleted while the operator runs: the namespace
// controller deletes its WebApps, the operator's deletion handlers run
// and release its finalizers, and the namespace disappears.
func TestNamespaceDeletedWhileOperatorRuns(t *testing.T) {
	t.Parallel()
	c := newClients()
	ns := namespace(t, c, "deleted-while-running")
	op := startOperator(t, ns, "deployop")
	populate(t, c, ns)

	deleteNamespace(t, c, ns)
	for _, name := range webapps {
		op.WaitLog(t, fmt.Sprintf("[%s/%s] Retiring the WebApp %s.", ns, name, name), 60*time.Second)
	}
	waitGone(t, c, ns, 120*time.Second)
	op.Stop(t, 15*time.Second)
}

// A namespace is deleted while the operator is down: it waits, Terminating
// with its WebApps held by kopf-go's finalizer (the namespace controller
// says so in its conditions), their Deployments and pods already gone;
// once the operator starts, its deletion handlers run and the namespace
// disappears.
func TestNamespaceWaitsForOperator(t *testing.T) {
	t.Parallel()
	c := newClients()
	ns := namespace(t, c, "deleted-while-down")
	op := startOperator(t, ns, "deployop-1")
	populate(t, c, ns)
	op.Stop(t, 15*time.Second)

	deleteNamespace(t, c, ns)
	var last *corev1.Namespace
	waitFor(t, 60*time.Second, "the namespace to report kopf-go's finalizers remaining", func(ctx context.Context) (bool, error) {
		var err error
		last, err = c.cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, cond := range last.Status.Conditions {
			if cond.Type == corev1.NamespaceFinalizersRemaining && cond.Status == corev1.ConditionTrue &&
				strings.Contains(cond.Message, finalizer) {
				return true, nil
			}
		}
		return false, nil
	})
	if last.Status.Phase != corev1.NamespaceTerminating {
		t.Errorf("the namespace is %s, want Terminating", last.Status.Phase)
	}
	waitFor(t, 60*time.Second, "the namespace's Deployments and pods to be deleted", func(ctx context.Context) (bool, error) {
		deployments, err := c.cs.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		pods, err := c.cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		return err == nil && len(deployments.Items) == 0 && len(pods.Items) == 0, err
	})
	for _, name := range webapps {
		app, err := getWebApp(t.Context(), c, ns, name)
		if err != nil {
			t.Fatalf("the WebApp %s, held by the finalizer: %v", name, err)
		}
		if app.DeletionTimestamp == nil || !slices.Contains(app.Finalizers, finalizer) {
			t.Errorf("the WebApp %s is not being deleted, held by the finalizer: deletionTimestamp %v, finalizers %v", name, app.DeletionTimestamp, app.Finalizers)
		}
	}

	op2 := startOperator(t, ns, "deployop-2")
	for _, name := range webapps {
		op2.WaitLog(t, fmt.Sprintf("[%s/%s] Retiring the WebApp %s.", ns, name, name), 60*time.Second)
	}
	waitGone(t, c, ns, 120*time.Second)
	op2.Stop(t, 15*time.Second)
}

// populate creates the WebApps in the namespace and waits until the
// operator has handled them: their finalizer is on, their pod runs and
// their status says so.
func populate(t *testing.T, c clients, ns string) {
	t.Helper()
	for _, name := range webapps {
		createWebApp(t, c, ns, name, 1)
	}
	for _, name := range webapps {
		waitFor(t, 60*time.Second, fmt.Sprintf("the WebApp %s to be handled, its pod ready", name), func(ctx context.Context) (bool, error) {
			app, err := getWebApp(ctx, c, ns, name)
			if err != nil {
				return false, err
			}
			return slices.Contains(app.Finalizers, finalizer) && app.Status.ReadyReplicas == 1, nil
		})
	}
}

func deleteNamespace(t *testing.T, c clients, ns string) {
	t.Helper()
	if err := c.cs.CoreV1().Namespaces().Delete(t.Context(), ns, metav1.DeleteOptions{}); err != nil {
		t.Fatalf("deleting the namespace %s: %v", ns, err)
	}
}

// waitGone waits until the namespace no longer exists.
func waitGone(t *testing.T, c clients, ns string, timeout time.Duration) {
	t.Helper()
	last := &corev1.Namespace{}
	err := cluster.WaitFor(t.Context(), timeout, func(ctx context.Context) (bool, error) {
		got, err := c.cs.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return true, nil
		} else if err == nil {
			last = got
		}
		return false, err
	})
	if err != nil {
		t.Fatalf("the namespace %s is not gone in %s: %v; last seen: %+v", ns, timeout, err, last.Status)
	}
}
