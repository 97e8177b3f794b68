package main

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/kopf-go/kopf/envtest"
	"github.com/kopf-go/kopf/examples/apis/cache/v1alpha1"
	"github.com/kopf-go/kopf/kopftest"
)

// The memcached operator on a control plane with controllers (the
// deployment and replicaset controllers, the scheduler, kwok's node, the
// garbage collector): a Memcached gets its Deployment, whose ReplicaSet's
// pods run; Available and Progressing follow them with the generation
// reconciled; a new spec.size scales the Deployment; a size out of the
// CRD's bounds is refused by the API server; deleting the Memcached runs
// the finalizer operations, completes, and garbage-collects the
// Deployment.
func TestMemcached(t *testing.T) {
	ctx := context.Background()
	env := envtest.Start(t, envtest.WithCRDs("config/crd"), envtest.WithControllers())
	cs := kubernetes.NewForConfigOrDie(env.Config)
	op := kopftest.Start(t, env.Config, Register)
	memcacheds := kopftest.NewObjects(t, env.Config, v1alpha1.SchemeGroupVersion.WithResource("memcacheds"), "default")

	created := memcacheds.Create(map[string]any{
		"apiVersion": v1alpha1.SchemeGroupVersion.String(), "kind": "Memcached",
		"metadata": map[string]any{"name": "memcached-sample"},
		"spec":     map[string]any{"size": 1, "containerPort": 11211},
	})
	deployment := waitDeployment(t, cs, 1)
	if refs := deployment.OwnerReferences; len(refs) != 1 || refs[0].UID != created.GetUID() || refs[0].Controller == nil || !*refs[0].Controller {
		t.Fatalf("the Deployment's owner references are %+v, want the Memcached as its controller", refs)
	}
	waitPods(t, cs, deployment, 1)
	settled(t, memcacheds, 1)

	// A new size: the Deployment is scaled, the conditions follow.
	memcacheds.MergePatch("memcached-sample", map[string]any{"spec": map[string]any{"size": 3}})
	deployment = waitDeployment(t, cs, 3)
	waitPods(t, cs, deployment, 3)
	settled(t, memcacheds, 2)

	// The CRD's validation (+kubebuilder:validation:Maximum=3).
	dyn := dynamic.NewForConfigOrDie(env.Config).Resource(v1alpha1.SchemeGroupVersion.WithResource("memcacheds")).Namespace("default")
	_, err := dyn.Patch(ctx, "memcached-sample", types.MergePatchType, []byte(`{"spec": {"size": 4}}`), metav1.PatchOptions{})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.size") {
		t.Errorf("size 4: %v, want the API server's refusal of spec.size", err)
	}

	// Deletion: the finalizer operations run, then the Memcached goes and
	// its Deployment is garbage-collected.
	memcacheds.Delete("memcached-sample", 60*time.Second)
	op.WaitLog("[default/memcached-sample] Performing Finalizer Operations for Memcached before delete CR", 10*time.Second)
	kopftest.Eventually(t, 60*time.Second, "the Deployment garbage-collected", func(ctx context.Context) (bool, error) {
		_, err := cs.AppsV1().Deployments("default").Get(ctx, "memcached-sample", metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	kopftest.Eventually(t, 10*time.Second, "the Warning event Deleting", func(ctx context.Context) (bool, error) {
		events, err := cs.CoreV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: "reason=Deleting"})
		if err != nil {
			return false, err
		}
		for _, e := range events.Items {
			if e.Type == corev1.EventTypeWarning && e.Message == "Custom Resource memcached-sample is being deleted from the namespace default" {
				return true, nil
			}
		}
		return false, nil
	})
	if err := op.Stop(); err != nil {
		t.Errorf("the operator: %v", err)
	}
}

// waitDeployment waits for the Memcached's Deployment with replicas
// replicas and returns it.
func waitDeployment(t *testing.T, cs kubernetes.Interface, replicas int32) *appsv1.Deployment {
	t.Helper()
	var d *appsv1.Deployment
	kopftest.Eventually(t, 30*time.Second, "the Deployment with its replicas", func(ctx context.Context) (bool, error) {
		got, err := cs.AppsV1().Deployments("default").Get(ctx, "memcached-sample", metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		d = got
		return got.Spec.Replicas != nil && *got.Spec.Replicas == replicas, nil
	})
	return d
}

// waitPods waits until the Deployment's ReplicaSet (owned by it) has n
// running pods (owned by it).
func waitPods(t *testing.T, cs kubernetes.Interface, d *appsv1.Deployment, n int) {
	t.Helper()
	kopftest.Eventually(t, 60*time.Second, "the ReplicaSet's pods running", func(ctx context.Context) (bool, error) {
		sets, err := cs.AppsV1().ReplicaSets("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		owned := map[string]bool{}
		for _, rs := range sets.Items {
			if ref := metav1.GetControllerOf(&rs); ref != nil && ref.UID == d.UID && rs.Spec.Replicas != nil && *rs.Spec.Replicas > 0 {
				owned[string(rs.UID)] = true
			}
		}
		pods, err := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		running := 0
		for _, p := range pods.Items {
			if ref := metav1.GetControllerOf(&p); ref != nil && owned[string(ref.UID)] && p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
				running++
			}
		}
		return len(owned) == 1 && running == n, nil
	})
}

// settled waits until the Memcached's conditions say that its generation
// is reconciled: Available and not Progressing, observed at generation.
func settled(t *testing.T, memcacheds *kopftest.Objects, generation int64) {
	t.Helper()
	memcacheds.WaitFor("memcached-sample", 60*time.Second, func(o *unstructured.Unstructured) bool {
		var m v1alpha1.Memcached
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &m); err != nil || m.Generation != generation {
			return false
		}
		available := meta.FindStatusCondition(m.Status.Conditions, typeAvailable)
		progressing := meta.FindStatusCondition(m.Status.Conditions, typeProgressing)
		return available != nil && available.Status == metav1.ConditionTrue && available.ObservedGeneration == generation &&
			progressing != nil && progressing.Status == metav1.ConditionFalse && progressing.ObservedGeneration == generation
	})
}
