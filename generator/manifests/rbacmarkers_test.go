package manifests

import (
	"go/ast"
	"go/parser"
	"go/token"
	"reflect"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"
	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/controller-tools/pkg/genall"
	"sigs.k8s.io/controller-tools/pkg/loader"
	ctmarkers "sigs.k8s.io/controller-tools/pkg/markers"
	"sigs.k8s.io/controller-tools/pkg/rbac"

	"github.com/kopf-go/kopf/generator/markers"
	"github.com/kopf-go/kopf/generator/model"
)

// controllerGen returns the rules that controller-gen generates for the
// +kubebuilder:rbac markers of a package's doc comment, by namespace.
func controllerGen(t *testing.T, marks []string) map[string][]rbacv1.PolicyRule {
	t.Helper()
	src := "// +" + strings.Join(marks, "\n// +") + "\npackage p\n"
	f, err := parser.ParseFile(token.NewFileSet(), "p.go", src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	reg := &ctmarkers.Registry{}
	if err := (rbac.Generator{}).RegisterMarkers(reg); err != nil {
		t.Fatal(err)
	}
	pkg := &loader.Package{Package: &packages.Package{ID: "p", Syntax: []*ast.File{f}}}
	objs, err := rbac.GenerateRoles(&genall.GenerationContext{Collector: &ctmarkers.Collector{Registry: reg}, Roots: []*loader.Package{pkg}}, "r")
	if err != nil || len(pkg.Errors) > 0 {
		t.Fatalf("controller-gen: %v %v", err, pkg.Errors)
	}
	out := map[string][]rbacv1.PolicyRule{}
	for _, o := range objs {
		switch o := o.(type) {
		case rbacv1.ClusterRole:
			out[""] = o.Rules
		case rbacv1.Role:
			out[o.Namespace] = o.Rules
		}
	}
	return out
}

// kopfGen returns the rules that kopf-gen merges from the same markers,
// with nothing granted by the runtime, by namespace.
func kopfGen(t *testing.T, marks []string) map[string][]rbacv1.PolicyRule {
	t.Helper()
	p := &model.Package{}
	for _, m := range marks {
		r, err := markers.ParseKubebuilderRBAC("+" + m)
		if err != nil {
			t.Fatal(err)
		}
		p.RBAC = append(p.RBAC, &model.RBACRule{Rule: r})
	}
	out := map[string][]rbacv1.PolicyRule{}
	for ns, rules := range markerRules([]*model.Package{p}, func(_, _, _ string) bool { return false }) {
		for _, r := range rules {
			out[ns] = append(out[ns], r.ToRule())
		}
	}
	return out
}

// TestMergeAsControllerGen checks that kopf-gen merges the rules of rbac
// markers exactly as controller-gen does, against controller-tools'
// rbac.GenerateRoles itself.
func TestMergeAsControllerGen(t *testing.T) {
	tests := []struct {
		name  string
		marks []string
	}{
		{"kubebuilder's tutorial", []string{
			"kubebuilder:rbac:groups=batch.tutorial.kubebuilder.io,resources=cronjobs,verbs=get;list;watch;create;update;patch;delete",
			"kubebuilder:rbac:groups=batch.tutorial.kubebuilder.io,resources=cronjobs/status,verbs=get;update;patch",
			"kubebuilder:rbac:groups=batch.tutorial.kubebuilder.io,resources=cronjobs/finalizers,verbs=update",
			"kubebuilder:rbac:groups=batch,resources=jobs,verbs=get;list;watch;create;update;patch;delete",
			"kubebuilder:rbac:groups=batch,resources=jobs/status,verbs=get",
		}},
		{"verbs of one resource", []string{
			"kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;list",
			"kubebuilder:rbac:groups=apps,resources=deployments,verbs=watch;get",
		}},
		{"resources of one group", []string{
			"kubebuilder:rbac:groups=core,resources=pods;services,verbs=get",
			"kubebuilder:rbac:groups=\"\",resources=configmaps,verbs=get",
			"kubebuilder:rbac:groups=\"\",resources=secrets,verbs=get;list",
		}},
		{"groups of one resource", []string{
			"kubebuilder:rbac:groups=apps,resources=scales,verbs=get",
			"kubebuilder:rbac:groups=extensions,resources=scales,verbs=get",
			"kubebuilder:rbac:groups=apps;extensions;apps,resources=other,verbs=get",
		}},
		{"urls", []string{
			"kubebuilder:rbac:urls=/metrics,verbs=get",
			"kubebuilder:rbac:urls=/healthz;/livez,verbs=get",
			"kubebuilder:rbac:urls=/logs/*,verbs=get;post",
		}},
		{"names", []string{
			"kubebuilder:rbac:groups=\"\",resources=secrets,resourceNames=a;b,verbs=get",
			"kubebuilder:rbac:groups=\"\",resources=secrets,resourceNames=b;a,verbs=update",
			"kubebuilder:rbac:groups=\"\",resources=configmaps,resourceNames=a;b,verbs=get;update",
		}},
		{"star", []string{
			"kubebuilder:rbac:groups=apps,resources=deployments,verbs=get;*",
			"kubebuilder:rbac:groups=*,resources=*,verbs=list",
		}},
		{"namespaces", []string{
			"kubebuilder:rbac:groups=apps,resources=deployments,verbs=get,namespace=b",
			"kubebuilder:rbac:groups=apps,resources=deployments,verbs=list,namespace=a",
			"kubebuilder:rbac:groups=apps,resources=statefulsets,verbs=list,namespace=a",
			"kubebuilder:rbac:groups=apps,resources=deployments,verbs=list",
		}},
		{"mixed", []string{
			"kubebuilder:rbac:groups=apps;batch,resources=x,verbs=get",
			"kubebuilder:rbac:groups=apps,resources=x,verbs=list",
			"kubebuilder:rbac:groups=batch,resources=y,verbs=get",
			"kubebuilder:rbac:groups=apps,resources=y;z,verbs=get",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want, got := controllerGen(t, tt.marks), kopfGen(t, tt.marks)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("kopf-gen merged\n%+v\ncontroller-gen\n%+v", got, want)
			}
		})
	}
}

// TestSubtract checks that the rules of markers leave out what the
// runtime's rules grant, verb by verb, in every group of the rule.
func TestSubtract(t *testing.T) {
	w := &roleWriter{}
	w.rule("", []string{"pods"}, "list", "watch")
	w.rule("", []string{"events"}, "create")
	w.rule("apps", []string{"deployments", "deployments/status"}, "list", "watch", "patch")
	w.rule("kopf.dev", []string{"*"}, "list", "watch")
	tests := []struct {
		name string
		rule rbac.Rule
		want *rbac.Rule // nil: all granted already
	}{
		{"all granted", rbac.Rule{Groups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"watch", "list"}}, nil},
		{"some granted", rbac.Rule{Groups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list", "delete"}},
			&rbac.Rule{Groups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "delete"}}},
		{"by name too", rbac.Rule{Groups: []string{"apps"}, Resources: []string{"deployments"}, ResourceNames: []string{"x"}, Verbs: []string{"patch"}}, nil},
		{"a namespace too", rbac.Rule{Groups: []string{""}, Resources: []string{"events"}, Verbs: []string{"create"}, Namespace: "ops"}, nil},
		{"a wildcard of the runtime", rbac.Rule{Groups: []string{"kopf.dev"}, Resources: []string{"kopfexamples"}, Verbs: []string{"list", "get"}},
			&rbac.Rule{Groups: []string{"kopf.dev"}, Resources: []string{"kopfexamples"}, Verbs: []string{"get"}}},
		{"in one group of two", rbac.Rule{Groups: []string{"", "apps"}, Resources: []string{"pods"}, Verbs: []string{"list"}},
			&rbac.Rule{Groups: []string{"", "apps"}, Resources: []string{"pods"}, Verbs: []string{"list"}}},
		{"a wildcard verb", rbac.Rule{Groups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"*"}},
			&rbac.Rule{Groups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"*"}}},
		{"urls", rbac.Rule{URLs: []string{"/metrics"}, Verbs: []string{"get"}},
			&rbac.Rule{URLs: []string{"/metrics"}, Verbs: []string{"get"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.rule
			if got := subtract(&r, w.covers); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}
