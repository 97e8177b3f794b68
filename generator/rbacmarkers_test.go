package generator

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// rbacDoc and rbacOps are a package whose handlers make API calls of
// their own, declared with both rbac markers: //kopf:rbac on the package
// clause and on functions, +kubebuilder:rbac where controller-gen reads it.
const rbacDoc = `// Package ops makes children.
//
//kopf:rbac groups=[""] resources=[secrets] resourceNames=[widget-credentials] verbs=[get]
package ops
`

const rbacOps = `package ops

import "context"

// +kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups=apps,resources=deployments/status,verbs=get
// +kubebuilder:rbac:groups=core,resources=pods,verbs=list;watch
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get,namespace=kube-system
// +kubebuilder:rbac:urls=/metrics,verbs=get

// Pods creates the children of pods.
//
//kopf:on.event v1/pods
//kopf:rbac groups=[""] resources=[pods, services] verbs=[create, get]
//kopf:rbac groups=[batch] resources=[jobs, cronjobs] verbs=[get, list]
func Pods(ctx context.Context, kw PodsKwargs) error { return nil }

// Reconcile is no handler: its markers give rules only.
//
//kopf:rbac groups=[apps] resources=[deployments] verbs=[get, list]
//kopf:rbac urls=["/healthz", "/metrics"] verbs=[get]
//kopf:rbac groups=[core] resources=[configmaps] verbs=[list, watch] namespace=kube-system
//kopf:rbac groups=[""] resources=[events] verbs=[create]
//kopf:rbac groups=[apps] resources=[statefulsets] verbs=[get] namespace=apps
func Reconcile(ctx context.Context) error { return nil }

// helper's doc comment is no place for controller-gen's markers:
// +kubebuilder:rbac:groups=apps,resources=replicasets,verbs=get
func helper() {}
`

// TestRBACMarkers generates the role of a package with rbac markers and
// compares it with testdata/manifests/rbac/role.yaml (go test -update
// rewrites it): the markers' rules merged as controller-gen merges them,
// without what the runtime's rules grant, namespaced ones in Roles; the
// misplaced +kubebuilder:rbac marker is a warning and grants nothing.
func TestRBACMarkers(t *testing.T) {
	if testing.Short() {
		t.Skip("loads packages")
	}
	dir := testModule(t, map[string]string{"ops/doc.go": rbacDoc, "ops/ops.go": rbacOps})
	files, warnings, err := Generate(context.Background(), Options{Dir: dir, Manifests: "config", Peering: true})
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	want := filepath.Join(dir, "ops", "ops.go") + ":28:1: +kubebuilder:rbac here is not read: controller-gen and kopf-gen read it at package level only: in the package's doc comment or in a comment group of its own outside declarations (above a function's doc comment, with a blank line between them), not in a doc comment; or write //kopf:rbac in the doc comment of the handler"
	if len(warnings) != 1 || warnings[0].Error() != want {
		t.Errorf("warnings = %v, want %q", warnings, want)
	}
	var role []byte
	for _, f := range files {
		if strings.HasSuffix(filepath.ToSlash(f.Path), "config/rbac/role.yaml") {
			role = f.Want
		}
	}
	const golden = "testdata/manifests/rbac/role.yaml"
	if *update {
		if err := os.WriteFile(golden, role, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	have, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if string(have) != string(role) {
		d, _ := Diff(File{Path: golden, Have: have, Want: role}, golden)
		t.Errorf("the role differs from %s (go test -update rewrites it):\n%s", golden, d)
	}
}
