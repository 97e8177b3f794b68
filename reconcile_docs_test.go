package kopf_test

// The code of docs/reconcile.md, compiled here.

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/kopf-go/kopf"
)

// reconcileSite keeps a site's children in line with its spec; a
// ConfigMap of the site's (or its status) changing runs it again.
func reconcileSite(ctx context.Context, kw kopf.ReconcileKwargs) (kopf.ReconcileResult, error) {
	if kw.Deleting {
		return kopf.ReconcileResult{}, nil // clean up outside the cluster; nil releases the object
	}
	kw.Logger.Info("reconciling", "trigger", kw.Trigger, "retry", kw.Retry)
	// ... create or update the children from kw.Spec, read their state ...
	kw.Patch.Status()["phase"] = "Ready"
	return kopf.ReconcileResult{RequeueAfter: time.Minute}, nil // or the zero value
}

// registerSite registers reconcileSite for KopfExamples, owning
// ConfigMaps and watching Secrets mapped to their sites by a label.
func registerSite(r *kopf.Registry) error {
	return r.AddReconcile(kopf.ReconcileHandler{
		ID:       "reconcile_site",
		Selector: kopf.Selector{Group: "kopf.dev", Version: "v1", Name: "kopfexamples"},
		Fn:       kopf.ReconcileFunc(reconcileSite),
		Owns:     []kopf.Selector{{Version: "v1", Name: "configmaps", Core: true}},
		Watches: []kopf.Watch{{
			Selector: kopf.Selector{Version: "v1", Name: "secrets", Core: true},
			Map: func(ctx context.Context, secret kopf.Body) []types.NamespacedName {
				site := secret.Meta().Labels()["site"]
				if site == "" {
					return nil
				}
				return []types.NamespacedName{{Namespace: secret.Meta().Namespace(), Name: site}}
			},
		}},
		Resync:   10 * time.Minute,
		Finalize: true,
	})
}

var _ = registerSite
