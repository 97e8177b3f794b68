// Package reconcile serves resources with level-triggered handlers
// (//kopf:on.reconcile): untyped and typed, with owned and watched
// resources, mapped or by ownerReferences.
package reconcile

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/kopf-go/kopf"
)

// ReconcileExample keeps the children of a KopfExample in shape; a change
// of one of its Deployments or Pods re-runs it.
//
//kopf:on.reconcile kopf.dev/v1/kopfexamples owns=[deployments.apps, v1/pods] finalize=true resync=10m backoff=2s
func ReconcileExample(ctx context.Context, kw ReconcileExampleKwargs) (kopf.ReconcileResult, error) {
	if kw.Deleting {
		return kopf.ReconcileResult{}, nil
	}
	return kopf.ReconcileResult{RequeueAfter: time.Minute}, nil
}

// ReconcileDeployment is re-run for the Deployments that byConfig names
// when a ConfigMap changes.
//
//kopf:on.reconcile deployments.apps watches=v1/configmaps map=byConfig labels={app: web} when=isActive id=deployments param=p
func ReconcileDeployment(ctx context.Context, kw ReconcileDeploymentKwargs) error {
	_ = kw.Object.Spec.Replicas
	return nil
}

// ReconcileService is re-run for the owners of changed Endpoints and
// Secrets (by their ownerReferences).
//
//kopf:on.reconcile v1/services watches=[v1/endpoints, v1/secrets]
func ReconcileService(ctx context.Context, kw ReconcileServiceKwargs) error {
	return nil
}

// byConfig names the Deployment of a ConfigMap's "deployment" label.
func byConfig(ctx context.Context, obj kopf.Body) []types.NamespacedName {
	name := obj.Meta().Labels()["deployment"]
	if name == "" {
		return nil
	}
	return []types.NamespacedName{{Namespace: obj.Meta().Namespace(), Name: name}}
}

func isActive(kw ReconcileDeploymentKwargs) bool { return !kw.Object.Spec.Paused }
