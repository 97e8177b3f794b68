package operator

import (
	"context"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/kopf-go/kopf/runtime/body"
	"github.com/kopf-go/kopf/runtime/kwargs"
	"github.com/kopf-go/kopf/runtime/registry"
	"github.com/kopf-go/kopf/runtime/resources"
)

// A child maps to its owner by its controller ownerReference, if that
// names the reconciled resource (its group and kind, any version).
func TestControllerOwner(t *testing.T) {
	res := resources.Resource{Group: "kopf.dev", Version: "v1", Plural: "kopfexamples", Kind: "KopfExample", Namespaced: true}
	ref := func(apiVersion, kind string, controller bool) map[string]any {
		return map[string]any{"apiVersion": apiVersion, "kind": kind, "name": "owner", "controller": controller}
	}
	child := func(refs ...any) body.Body {
		return body.Body{"metadata": map[string]any{"namespace": "ns", "name": "c", "ownerReferences": refs}}
	}
	for _, tt := range []struct {
		name string
		b    body.Body
		want []string
	}{
		{"controller", child(ref("kopf.dev/v1", "KopfExample", true)), []string{"ns/owner"}},
		{"another version", child(ref("kopf.dev/v2", "KopfExample", true)), []string{"ns/owner"}},
		{"not the controller", child(ref("kopf.dev/v1", "KopfExample", false)), nil},
		{"another kind's controller", child(ref("apps/v1", "Deployment", true), ref("kopf.dev/v1", "KopfExample", false)), nil},
		{"another group", child(ref("other.dev/v1", "KopfExample", true)), nil},
		{"none", body.Body{"metadata": map[string]any{"name": "c"}}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := controllerOwner(res, tt.b); !slices.Equal(got, tt.want) {
				t.Errorf("controllerOwner = %v, want %v", got, tt.want)
			}
		})
	}
	cluster := resources.Resource{Version: "v1", Plural: "nodes", Kind: "Node"}
	if got := controllerOwner(cluster, child(ref("v1", "Node", true))); !slices.Equal(got, []string{"owner"}) {
		t.Errorf("a cluster-scoped owner of the core group: %v", got)
	}
}

// The routes of the owned and watched resources are grouped by resource,
// in registration order, each with its handler and its map.
func TestReconcileRoutes(t *testing.T) {
	reg := registry.New()
	fn := registry.ReconcileFunc(func(context.Context, kwargs.Reconcile) (registry.ReconcileResult, error) {
		return registry.ReconcileResult{}, nil
	})
	sel := resources.Selector{Group: "kopf.dev", Name: "kopfexamples"}
	cms := resources.Selector{Version: "v1", Name: "configmaps", Core: true}
	deps := resources.Selector{Group: "apps", Name: "deployments"}
	mapFn := func(context.Context, body.Body) []types.NamespacedName { return nil }
	for _, h := range []registry.ReconcileHandler{
		{ID: "a", Selector: sel, Fn: fn, Owns: []resources.Selector{cms, deps}},
		{ID: "b", Selector: sel, Fn: fn, Watches: []registry.Watch{{Selector: cms, Map: mapFn}}},
	} {
		if err := reg.AddReconcile(h); err != nil {
			t.Fatal(err)
		}
	}
	order, routes := reconcileRoutes(reg, resources.Resource{Group: "kopf.dev", Version: "v1", Plural: "kopfexamples"})
	if !slices.Equal(order, []resources.Selector{cms, deps}) {
		t.Errorf("order = %v", order)
	}
	got := routes[cms]
	if len(got) != 2 || got[0].id != "a" || got[0].verb != "owned" || got[0].fn != nil || got[1].id != "b" || got[1].verb != "watched" || got[1].fn == nil {
		t.Errorf("routes of configmaps = %+v", got)
	}
}
