// Command deployop is the operator that e2e/workloads runs as a process:
// a WebApp (webapps.e2e.kopf.dev, package api/v1) is run as a Deployment
// of its own, adopted (kopf.Adopt: deleting the WebApp garbage-collects
// the Deployment), scaled with the WebApp's spec.replicas, and the
// Deployment's readiness is read back into the WebApp's status. Its
// deletion handler keeps kopf-go's finalizer on every WebApp.
//
//	deployop run -n NAMESPACE --standalone -v --kubeconfig ...
package main

//go:generate kopf-gen --deepcopy --manifests=config

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/kopf-go/kopf"
	v1 "github.com/kopf-go/kopf/e2e/workloads/internal/deployop/api/v1"
)

// managedBy is the value of the label app.kubernetes.io/managed-by of the
// Deployments this operator makes, which its event handler selects.
const managedBy = "deployop"

// Deploy creates the WebApp's Deployment, of the WebApp's name, adopted.
//
//kopf:on.create e2e.kopf.dev/v1/webapps
//kopf:rbac groups=[apps] resources=[deployments] verbs=[create]
func Deploy(ctx context.Context, kw DeployKwargs) (any, error) {
	labels := map[string]string{"app.kubernetes.io/name": kw.Name, "app.kubernetes.io/managed-by": managedBy}
	deployment := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: kw.Name, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: &kw.Object.Spec.Replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: kw.Object.Spec.Image,
					Command: kw.Object.Spec.Command, Args: kw.Object.Spec.Args}}},
			},
		},
	}
	if err := kopf.Adopt(deployment, kopf.OwnerOfKind(kw.Object, v1.SchemeGroupVersion.WithKind("WebApp"))); err != nil {
		return nil, err
	}
	client, err := kopf.Client(ctx, kubernetes.NewForConfig)
	if err != nil {
		return nil, err
	}
	created, err := client.AppsV1().Deployments(kw.Namespace).Create(ctx, deployment, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("creating the Deployment: %w", err)
	}
	return map[string]any{"deployment": created.Name}, nil
}

// Scale sets the Deployment's replicas to the WebApp's new spec.replicas.
//
//kopf:on.update e2e.kopf.dev/v1/webapps field=spec.replicas
//kopf:rbac groups=[apps] resources=[deployments] verbs=[patch]
func Scale(ctx context.Context, kw ScaleKwargs) (any, error) {
	client, err := kopf.Client(ctx, kubernetes.NewForConfig)
	if err != nil {
		return nil, err
	}
	patch, err := json.Marshal(map[string]any{"spec": map[string]any{"replicas": kw.Object.Spec.Replicas}})
	if err != nil {
		return nil, err
	}
	if _, err := client.AppsV1().Deployments(kw.Namespace).Patch(ctx, kw.Name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return nil, fmt.Errorf("scaling the Deployment: %w", err)
	}
	kw.Logger.Info(fmt.Sprintf("Scaled the Deployment to %d replicas.", kw.Object.Spec.Replicas))
	return map[string]any{"replicas": kw.Object.Spec.Replicas}, nil
}

// Retire lets a deleted WebApp go: the garbage collector deletes its
// Deployment, and the Deployment's ReplicaSets and pods.
//
//kopf:on.delete e2e.kopf.dev/v1/webapps
func Retire(ctx context.Context, kw RetireKwargs) error {
	kw.Logger.Info(fmt.Sprintf("Retiring the WebApp %s.", kw.Name))
	return nil
}

// Report copies the readiness of this operator's Deployments into their
// WebApps' status: status.replicas and status.readyReplicas.
//
//kopf:on.event apps/v1/deployments labels={app.kubernetes.io/managed-by: deployop}
func Report(ctx context.Context, kw ReportKwargs) error {
	owner := metav1.GetControllerOf(kw.Object)
	if kw.Type == "DELETED" || owner == nil || owner.Kind != "WebApp" {
		return nil
	}
	client, err := kopf.Client(ctx, dynamic.NewForConfig)
	if err != nil {
		return err
	}
	status := kw.Object.Status
	patch, err := json.Marshal(map[string]any{"status": map[string]any{"replicas": status.Replicas, "readyReplicas": status.ReadyReplicas}})
	if err != nil {
		return err
	}
	webapps := client.Resource(v1.SchemeGroupVersion.WithResource("webapps")).Namespace(kw.Namespace)
	_, err = webapps.Patch(ctx, owner.Name, types.MergePatchType, patch, metav1.PatchOptions{}, "status")
	if apierrors.IsNotFound(err) {
		return nil // the WebApp is gone; the garbage collector deletes the Deployment
	} else if err != nil {
		return fmt.Errorf("reporting to the WebApp %s: %w", owner.Name, err)
	}
	return nil
}

func main() {
	os.Exit(kopf.Main(Register))
}
