// Command memcached is the Go port of operator-sdk's tutorial operator,
// memcached-operator (testdata/go/v4/memcached-operator of
// operator-framework/operator-sdk), written with a level-triggered
// reconcile handler instead of a controller-runtime Reconciler: a
// Memcached (memcacheds.cache.example.com, package examples/apis/cache/v1alpha1) is run as
// a Deployment of memcached of its name, owned by it (deleting the
// Memcached garbage-collects the Deployment), whose replicas follow the
// Memcached's spec.size, and the Memcached's status.conditions say how far
// it got: Available, Progressing, and Degraded while it is being deleted.
//
// What differs from the original: the Deployment is applied server-side
// (kopf.Apply of an apply configuration adopted with kopf.Adopt) instead
// of got, created and updated; the conditions are set with kw.SetCondition
// (observedGeneration is the generation reconciled) and written by the
// runtime after the handler returns, instead of by status updates and
// re-fetches; the finalizer is Kopf's, held with finalize=true, instead of
// one added and removed by hand; and the Deployment's status changes
// re-run the handler (owns=), so Available waits for the replicas instead
// of following the creation.
//
//	memcached run -n NAMESPACE --standalone -v --kubeconfig ...
package main

//go:generate go tool kopf-gen --deepcopy --manifests=config . ../apis/cache/v1alpha1

import (
	"context"
	"fmt"
	"os"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"

	"github.com/kopf-go/kopf"
	"github.com/kopf-go/kopf/examples/apis/cache/v1alpha1"
)

// The types of the Memcached's conditions.
const (
	// typeAvailable says whether memcached serves: at least one instance
	// is available.
	typeAvailable = "Available"
	// typeProgressing says whether the Deployment is still getting to
	// spec.size available instances.
	typeProgressing = "Progressing"
	// typeDegraded is set while the Memcached is being deleted.
	typeDegraded = "Degraded"
)

// defaultImage is memcached's image when MEMCACHED_IMAGE is not set (the
// original's config/manager/manager.yaml sets it to this one).
const defaultImage = "memcached:1.6.26-alpine3.19"

// ReconcileMemcached makes the Memcached's Deployment what its spec says
// and reports the Deployment's state in the Memcached's conditions. It is
// called whenever the Memcached or its Deployment changes (the
// Deployment's status included), and, holding Kopf's finalizer, once more
// when the Memcached is deleted.
//
//kopf:on.reconcile cache.example.com/v1alpha1/memcacheds owns=deployments.apps finalize=true
//kopf:rbac groups=[apps] resources=[deployments] verbs=[create, patch]
func ReconcileMemcached(ctx context.Context, kw ReconcileMemcachedKwargs) (kopf.ReconcileResult, error) {
	m := kw.Object
	if kw.Deleting {
		return kopf.ReconcileResult{}, finalize(ctx, kw)
	}
	if len(m.Status.Conditions) == 0 {
		if err := setCondition(kw, typeAvailable, metav1.ConditionUnknown, "Reconciling", "Starting reconciliation"); err != nil {
			return kopf.ReconcileResult{}, err
		}
	}
	deployment := deploymentFor(m)
	if err := kopf.Adopt(deployment, kopf.OwnerOfBody(kw.Body)); err != nil {
		return kopf.ReconcileResult{}, err
	}
	stored, err := kopf.Apply(ctx, deployment)
	if err != nil {
		msg := fmt.Sprintf("Failed to create Deployment for the custom resource (%s): (%s)", m.Name, err)
		if cerr := setCondition(kw, typeAvailable, metav1.ConditionFalse, "Reconciling", msg); cerr != nil {
			return kopf.ReconcileResult{}, cerr
		}
		return kopf.ReconcileResult{}, err
	}
	return kopf.ReconcileResult{}, reportProgress(kw, stored)
}

// reportProgress sets Available and Progressing from the Deployment's
// status as the API server stored it.
func reportProgress(kw ReconcileMemcachedKwargs, stored *unstructured.Unstructured) error {
	m := kw.Object
	available, _, _ := unstructured.NestedInt64(stored.Object, "status", "availableReplicas")
	updated, _, _ := unstructured.NestedInt64(stored.Object, "status", "updatedReplicas")
	replicas, _, _ := unstructured.NestedInt64(stored.Object, "status", "replicas")
	observed, _, _ := unstructured.NestedInt64(stored.Object, "status", "observedGeneration")
	size := int64(m.Spec.Size)
	done := observed >= stored.GetGeneration() && available == size && updated == size && replicas == size
	if available > 0 {
		msg := fmt.Sprintf("Deployment for custom resource (%s) with %d replicas created successfully", m.Name, size)
		if err := setCondition(kw, typeAvailable, metav1.ConditionTrue, "Reconciling", msg); err != nil {
			return err
		}
	} else {
		msg := fmt.Sprintf("Deployment for custom resource (%s) has no available replicas yet", m.Name)
		if err := setCondition(kw, typeAvailable, metav1.ConditionFalse, "Reconciling", msg); err != nil {
			return err
		}
	}
	if done {
		return setCondition(kw, typeProgressing, metav1.ConditionFalse, "Reconciled",
			fmt.Sprintf("%d of %d replicas available", available, size))
	}
	return setCondition(kw, typeProgressing, metav1.ConditionTrue, "Resizing",
		fmt.Sprintf("%d of %d replicas available", available, size))
}

// finalize is the original's finalizer operations: the Degraded
// condition and a Warning event; the Deployment is garbage-collected by
// its owner reference.
func finalize(ctx context.Context, kw ReconcileMemcachedKwargs) error {
	m := kw.Object
	kw.Logger.Info("Performing Finalizer Operations for Memcached before delete CR")
	if err := setCondition(kw, typeDegraded, metav1.ConditionUnknown, "Finalizing",
		fmt.Sprintf("Performing finalizer operations for the custom resource: %s ", m.Name)); err != nil {
		return err
	}
	kopf.Warn(ctx, kw.Body, "Deleting", fmt.Sprintf("Custom Resource %s is being deleted from the namespace %s", m.Name, m.Namespace))
	return setCondition(kw, typeDegraded, metav1.ConditionTrue, "Finalizing",
		fmt.Sprintf("Finalizer operations for custom resource %s name were successfully accomplished", m.Name))
}

// setCondition sets one condition of the Memcached's status, with the
// generation reconciled as its observedGeneration.
func setCondition(kw ReconcileMemcachedKwargs, typ string, status metav1.ConditionStatus, reason, msg string) error {
	_, err := kw.SetCondition(metav1.Condition{Type: typ, Status: status, Reason: reason, Message: msg})
	return err
}

// deploymentFor returns the apply configuration of a Memcached's
// Deployment, as the original's deploymentForMemcached returns its
// Deployment (its namespace and owner reference come from kopf.Adopt).
func deploymentFor(m *v1alpha1.Memcached) *appsv1ac.DeploymentApplyConfiguration {
	image := imageForMemcached()
	labels := labelsForMemcached(m.Name, image)
	return appsv1ac.Deployment(m.Name, "").WithSpec(appsv1ac.DeploymentSpec().
		WithReplicas(m.Spec.Size).
		WithSelector(metav1ac.LabelSelector().WithMatchLabels(labels)).
		WithTemplate(corev1ac.PodTemplateSpec().WithLabels(labels).WithSpec(corev1ac.PodSpec().
			WithSecurityContext(corev1ac.PodSecurityContext().WithRunAsNonRoot(true).
				WithSeccompProfile(corev1ac.SeccompProfile().WithType(corev1.SeccompProfileTypeRuntimeDefault))).
			WithContainers(corev1ac.Container().
				WithImage(image).
				WithName("memcached").
				WithImagePullPolicy(corev1.PullIfNotPresent).
				WithSecurityContext(corev1ac.SecurityContext().WithRunAsNonRoot(true).WithRunAsUser(1001).
					WithAllowPrivilegeEscalation(false).
					WithCapabilities(corev1ac.Capabilities().WithDrop("ALL"))).
				WithPorts(corev1ac.ContainerPort().WithContainerPort(m.Spec.ContainerPort).WithName("memcached")).
				WithCommand("memcached", "-m=64", "-o", "modern", "-v")))))
}

// labelsForMemcached returns the labels that select a Memcached's pods.
func labelsForMemcached(name, image string) map[string]string {
	tag := ""
	if i := strings.LastIndexByte(image, ':'); i >= 0 {
		tag = image[i+1:]
	}
	return map[string]string{
		"app.kubernetes.io/name":       "Memcached",
		"app.kubernetes.io/instance":   name,
		"app.kubernetes.io/version":    tag,
		"app.kubernetes.io/part-of":    "memcached-operator",
		"app.kubernetes.io/created-by": "controller-manager",
	}
}

// imageForMemcached is memcached's image: MEMCACHED_IMAGE, or defaultImage.
func imageForMemcached() string {
	if image, ok := os.LookupEnv("MEMCACHED_IMAGE"); ok && image != "" {
		return image
	}
	return defaultImage
}

func main() {
	os.Exit(kopf.Main(Register))
}
