package generator

import (
	"context"
	"errors"
	"go/scanner"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestReconcileErrors checks the errors of //kopf:on.reconcile markers,
// with their positions: signatures, owned and watched resources, map= and
// a package with index functions.
func TestReconcileErrors(t *testing.T) {
	if testing.Short() {
		t.Skip("loads packages")
	}
	const imports = "package p\n\nimport (\n\t\"context\"\n\n\t\"github.com/kopf-go/kopf\"\n\t\"k8s.io/apimachinery/pkg/types\"\n)\n\n"
	dir := module(t, map[string]string{
		// Line numbers count from 1 at "package p"; imports is 9 lines.
		"rec/rec.go": imports + `//kopf:on.reconcile ex
func Any(ctx context.Context, kw AnyKwargs) (any, error) { return nil, nil }

//kopf:on.reconcile ex
func Ptr(ctx context.Context, kw *PtrKwargs) error { return nil }

//kopf:on.reconcile ex owns=[deploymnets, v1/pods] watches=* map=byName
func Owns(ctx context.Context, kw OwnsKwargs) error { return nil }

//kopf:on.reconcile ex map=byName
func NoWatches(ctx context.Context, kw NoWatchesKwargs) error { return nil }

//kopf:on.reconcile ex watches=v1/configmaps map=wrongMap
//kopf:on.reconcile other watches=v1/configmaps map=byNmae
//kopf:on.reconcile third watches=v1/configmaps map=notFunc
func Maps(ctx context.Context, kw MapsKwargs) (kopf.ReconcileResult, error) { return kopf.ReconcileResult{}, nil }

//kopf:on.reconcile ex
//kopf:on.create ex
func Mixed(ctx context.Context, kw MixedKwargs) error { return nil }

//kopf:on.reconcile ex
//kopf:on.reconcile ex
func Twice(ctx context.Context, kw TwiceKwargs) error { return nil }

func byName(ctx context.Context, obj kopf.Body) []types.NamespacedName { return nil }
func wrongMap(ctx context.Context, obj *kopf.Body) []types.NamespacedName { return nil }

var notFunc = 1
`,
		"idx/idx.go": imports + `//kopf:index ex
func ByName(ctx context.Context, kw ByNameKwargs) (map[string]string, error) { return nil, nil }

//kopf:on.reconcile ex
func Rec(ctx context.Context, kw RecKwargs) error { return nil }

var _ types.UID
var _ kopf.Body
`,
	})
	t.Setenv("GOFLAGS", "-mod=mod "+os.Getenv("GOFLAGS"))
	_, _, err := Generate(context.Background(), Options{Dir: dir})
	var list scanner.ErrorList
	if !errors.As(err, &list) {
		t.Fatalf("Generate: %v, want a scanner.ErrorList", err)
	}
	sig := func(name, what string) string {
		return "handler " + name + " has the wrong signature: " + what + "; want func " + name + "(ctx context.Context, kw " + name +
			"Kwargs) (kopf.ReconcileResult, error) or func " + name + "(ctx context.Context, kw " + name + "Kwargs) error"
	}
	want := []string{
		"idx/idx.go:14:6: handler Rec: //kopf:on.reconcile handlers are not supported yet in a package with index functions (ByName at line 11); move the index functions or the reconciler to another package",
		"rec/rec.go:11:45: " + sig("Any", "it returns (any, error)"),
		"rec/rec.go:14:34: " + sig("Ptr", "the second parameter is *PtrKwargs, not PtrKwargs"),
		"rec/rec.go:16:30: owns: deploymnets is not a resource that kopf-gen knows; did you mean deployments?",
		"rec/rec.go:16:60: watches: name a resource, not *: the runtime watches these resources to find the objects to reconcile",
		"rec/rec.go:19:24: map= needs watches=: it maps the watched objects to the objects to reconcile (owned objects are found by their ownerReferences)",
		"rec/rec.go:22:50: map: wrongMap has the wrong signature func(ctx context.Context, obj *kopf.Body) []types.NamespacedName; want func(ctx context.Context, obj kopf.Body) []types.NamespacedName (k8s.io/apimachinery/pkg/types)",
		"rec/rec.go:23:53: map: no function byNmae in package p; did you mean byName?",
		"rec/rec.go:24:53: map: notFunc is a variable, not a function; want a function func(ctx context.Context, obj kopf.Body) []types.NamespacedName",
		"rec/rec.go:28:1: //kopf:on.create cannot share a function with //kopf:on.reconcile markers: each kind of handler takes kwargs of its own; use a separate function",
		"rec/rec.go:32:1: duplicate //kopf:on.reconcile: handler id \"twice\" is already registered for ex at line 31; set a distinct id=",
	}
	var got []string
	for _, e := range list {
		got = append(got, strings.TrimPrefix(e.Error(), dir+string(filepath.Separator)))
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// reconcileOps reconciles resources that own and watch others, some of
// which other handlers serve too.
const reconcileOps = `package ops

import (
	"context"

	"github.com/kopf-go/kopf"
	"k8s.io/apimachinery/pkg/types"
)

//kopf:on.reconcile cache.example.com/v1alpha1/memcacheds owns=[deployments.apps, v1/services] finalize=true
func Memcached(ctx context.Context, kw MemcachedKwargs) error { return nil }

//kopf:on.reconcile v1/services watches=[v1/configmaps, v1/secrets] map=byName
func Service(ctx context.Context, kw ServiceKwargs) error { return nil }

//kopf:on.event v1/secrets
func Secret(ctx context.Context, kw SecretKwargs) error { return nil }

//kopf:on.create deployments.apps
func Deployment(ctx context.Context, kw DeploymentKwargs) error { return nil }

func byName(ctx context.Context, obj kopf.Body) []types.NamespacedName { return nil }
`

// TestReconcileRole generates the role of a package with reconcile
// handlers and compares it with testdata/manifests/reconcile/role.yaml
// (go test -update rewrites it): get, list and watch on the owned and
// watched resources (get added to the rules of those that handlers
// serve), list, watch and patch on the reconciled ones.
func TestReconcileRole(t *testing.T) {
	if testing.Short() {
		t.Skip("loads packages")
	}
	dir := testModule(t, map[string]string{"ops/ops.go": reconcileOps})
	files, _, err := Generate(context.Background(), Options{Dir: dir, Manifests: "config"})
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	role := []byte(roleOf(files))
	const golden = "testdata/manifests/reconcile/role.yaml"
	if *update {
		if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
			t.Fatal(err)
		}
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
