package kopf_test

// The marker's code of docs/reconcile.md ("The marker"), compiled here;
// ReconcileSiteKwargs stands for what kopf-gen generates beside it.

import (
	"context"

	"k8s.io/apimachinery/pkg/types"

	"github.com/kopf-go/kopf"
)

// ReconcileSite is reconcileSite written with the marker: kopf-gen
// registers it as registerSite does by hand.
//
//kopf:on.reconcile kopf.dev/v1/kopfexamples owns=v1/configmaps watches=v1/secrets map=siteOfSecret resync=10m finalize=true
func ReconcileSite(ctx context.Context, kw ReconcileSiteKwargs) (kopf.ReconcileResult, error) {
	if kw.Deleting {
		return kopf.ReconcileResult{}, nil
	}
	// ... create or update the children from kw.Spec, read their state ...
	return kopf.ReconcileResult{}, nil
}

// siteOfSecret maps a Secret to the site named by its label "site".
func siteOfSecret(ctx context.Context, secret kopf.Body) []types.NamespacedName {
	site := secret.Meta().Labels()["site"]
	if site == "" {
		return nil
	}
	return []types.NamespacedName{{Namespace: secret.Meta().Namespace(), Name: site}}
}

// ReconcileSiteKwargs is what kopf-gen generates for ReconcileSite.
type ReconcileSiteKwargs = kopf.ReconcileKwargs

var _ = ReconcileSite
