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

	"github.com/kopf-go/kopf/generator/manifests"
)

// testModule writes a module example.com/ops (requiring this checkout)
// with the given files into a temporary directory.
func testModule(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := benchModule(t, 0)
	if err := os.RemoveAll(filepath.Join(dir, "many")); err != nil {
		t.Fatal(err)
	}
	for name, content := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const widgetTypes = `// Package v1alpha1 is an API package.
//
// +k8s:deepcopy-gen=package
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Widget is a widget.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name=Size,type=integer,JSONPath=.spec.size
// +kubebuilder:selectablefield:JSONPath=.spec.color
//
//kopf:resource example.com/v1alpha1/widgets
type Widget struct {
	metav1.TypeMeta   ` + "`json:\",inline\"`" + `
	metav1.ObjectMeta ` + "`json:\"metadata,omitempty\"`" + `

	Spec WidgetSpec ` + "`json:\"spec\"`" + `
}

// WidgetSpec is the spec: validation rules (CEL) and one-of markers of
// controller-tools reach the CRD as they are.
//
// +kubebuilder:validation:XValidation:rule="self.size <= 10 || self.color == 'red'",message="only red widgets are larger than 10"
// +kubebuilder:validation:AtMostOneOf=owner;team
type WidgetSpec struct {
	// Size is the size.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:default=3
	Size int32 ` + "`json:\"size,omitempty\"`" + `
	// Color is one of a few.
	// +kubebuilder:validation:Enum=red;blue
	Color string ` + "`json:\"color\"`" + `
	// Extra is free-form.
	// +kubebuilder:pruning:PreserveUnknownFields
	Extra runtime.RawExtension ` + "`json:\"extra,omitempty\"`" + `
	// Labels are copied.
	Labels map[string]string ` + "`json:\"labels,omitempty\"`" + `
	// Owner is a person (or Team is; not both).
	Owner string ` + "`json:\"owner,omitempty\"`" + `
	// Team is a team.
	Team string ` + "`json:\"team,omitempty\"`" + `
	// Name cannot change once set.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="name is immutable"
	Name string ` + "`json:\"name,omitempty\"`" + `
}
`

const widgetHandlers = `package ops

import (
	"context"

	_ "example.com/bench/api/v1alpha1"
)

//kopf:on.create widgets
func Create(ctx context.Context, kw CreateKwargs) (any, error) { return kw.Object.Spec.Size, nil }

//kopf:on.delete example.com/v1alpha1/widgets
func Delete(ctx context.Context, kw DeleteKwargs) error { return nil }

//kopf:on.event v1/pods
func Pods(ctx context.Context, kw PodsKwargs) error { return nil }

//kopf:on.update apps/deployments field=spec.replicas
func Deployments(ctx context.Context, kw DeploymentsKwargs) (any, error) { return nil, nil }

//kopf:daemon v1/configmaps
//kopf:daemon widgets id=watch
func Watch(ctx context.Context, kw WatchKwargs) error { <-kw.Stopped.Done(); return nil }

//kopf:timer v1/configmaps interval=60
func Tick(ctx context.Context, kw TickKwargs) error { return nil }

// Activities serve no resource: they need no rule.
//
//kopf:on.startup
//kopf:on.probe
func Start(ctx context.Context, kw StartKwargs) error { return nil }
`

// TestManifests generates the role, the CRD and the DeepCopy methods of a
// module, compares them with testdata/manifests/ (go test -update rewrites
// them), and checks that the result compiles and verifies, that orphans
// are removed and that hand-written files are never overwritten.
func TestManifests(t *testing.T) {
	if testing.Short() {
		t.Skip("loads packages with controller-tools")
	}
	ctx := context.Background()
	dir := testModule(t, map[string]string{
		"api/v1alpha1/types.go": widgetTypes,
		"ops/ops.go":            widgetHandlers,
	})
	opts := Options{Dir: dir, Manifests: "config", DeepCopy: true}
	files, _, err := Generate(ctx, opts)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	var names []string
	for _, f := range files {
		rel, _ := filepath.Rel(dir, f.Path)
		names = append(names, filepath.ToSlash(rel))
	}
	want := []string{"api/v1alpha1/zz_generated.deepcopy.go", "api/v1alpha1/zz_generated.register.go", "config/crd/example.com_widgets.yaml", "config/rbac/role.yaml", "ops/zz_generated.kopf.go"}
	if !reflect.DeepEqual(names, want) {
		t.Fatalf("files %v, want %v", names, want)
	}
	golden := map[string]string{
		"config/crd/example.com_widgets.yaml":   "testdata/manifests/example.com_widgets.yaml",
		"config/rbac/role.yaml":                 "testdata/manifests/role.yaml",
		"api/v1alpha1/zz_generated.deepcopy.go": "testdata/manifests/zz_generated.deepcopy.go.golden",
		"api/v1alpha1/zz_generated.register.go": "testdata/manifests/zz_generated.register.go.golden",
	}
	for _, f := range files {
		rel, _ := filepath.Rel(dir, f.Path)
		g, ok := golden[filepath.ToSlash(rel)]
		if !ok {
			continue
		}
		if *update {
			if err := os.WriteFile(g, f.Want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		wantContent, err := os.ReadFile(g)
		if err != nil {
			t.Fatal(err)
		}
		if string(f.Want) != string(wantContent) {
			d, _ := Diff(File{Path: f.Path, Have: wantContent, Want: f.Want}, rel)
			t.Errorf("%s differs from %s (go test -update rewrites it):\n%s", rel, g, d)
		}
	}
	if _, err := Write(files); err != nil {
		t.Fatal(err)
	}
	if out, err := goCmd(dir, "vet", "./..."); err != nil {
		t.Fatalf("go vet of the generated code: %v\n%s", err, out)
	}
	// The CRD's selectable field (in its golden file) is declared to the runtime.
	if ops := readFile(t, filepath.Join(dir, "ops/zz_generated.kopf.go")); !strings.Contains(ops, `Fields:   []string{"spec.color"}`) {
		t.Errorf("the handlers' registration does not declare spec.color selectable:\n%s", ops)
	}
	again, _, err := Generate(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range again {
		if !f.UpToDate() {
			t.Errorf("%s is not up to date after writing it", f.Path)
		}
	}

	// Without the marker, the CRD is an orphan; without DeepCopy markers,
	// so is the DeepCopy file.
	types := filepath.Join(dir, "api/v1alpha1/types.go")
	src := strings.Replace(widgetTypes, "//kopf:resource example.com/v1alpha1/widgets", "// No longer a resource.", 1)
	src = strings.ReplaceAll(src, "+k8s:deepcopy-gen", "+nothing")
	if err := os.WriteFile(types, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "ops/ops.go"), []byte("package ops\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	files, _, err = Generate(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	var removed []string
	for _, f := range files {
		rel, _ := filepath.Rel(dir, f.Path)
		if f.Want == nil {
			removed = append(removed, filepath.ToSlash(rel))
		}
	}
	if want := []string{"api/v1alpha1/zz_generated.deepcopy.go", "api/v1alpha1/zz_generated.register.go", "config/crd/example.com_widgets.yaml", "ops/zz_generated.kopf.go"}; !reflect.DeepEqual(removed, want) {
		t.Errorf("orphans %v, want %v", removed, want)
	}

	// A file that is not marked as generated is never overwritten.
	if err := os.WriteFile(filepath.Join(dir, "config/rbac/role.yaml"), []byte("# mine\nkind: ClusterRole\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err = Generate(ctx, opts)
	var list scanner.ErrorList
	if !errors.As(err, &list) || len(list) != 1 || !strings.HasSuffix(list[0].Error(), "config/rbac/role.yaml:1:1: role.yaml is not marked as generated (no \"Code generated ... DO NOT EDIT.\" line at the top); refusing to overwrite it") {
		t.Errorf("overwriting a hand-written role: %v", err)
	}
}

// TestManifestErrors checks every error of manifests and DeepCopy
// generation: positioned, exact, and all of one run together.
func TestManifestErrors(t *testing.T) {
	if testing.Short() {
		t.Skip("loads packages with controller-tools")
	}
	const handler = "package ops\n\nimport \"context\"\n\n//kopf:on.create %s\nfunc F(ctx context.Context, kw FKwargs) error { return nil }\n"
	typed := func(extra, marker, body string) string {
		return "package v1\n\nimport metav1 \"k8s.io/apimachinery/pkg/apis/meta/v1\"\n\n" + extra +
			"// T is typed.\n//\n" + marker + "\ntype T struct {\n\tmetav1.TypeMeta   `json:\",inline\"`\n\tmetav1.ObjectMeta `json:\"metadata,omitempty\"`\n" + body + "}\n"
	}
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  string
	}{{
		name:  "no group",
		files: map[string]string{"ops/ops.go": strings.Replace(handler, "%s", "kopfexamples", 1)},
		want:  "ops/ops.go:5:18: resource: cannot tell the API group of kopfexamples for the RBAC rules: write it with its group (group/kopfexamples, group/version/kopfexamples, or v1/kopfexamples for the core group), or declare its Go type with //kopf:resource\n",
	}, {
		name:  "a kind",
		files: map[string]string{"ops/ops.go": strings.Replace(handler, "%s", "kopf.dev/v1/KopfExample", 1)},
		want:  "ops/ops.go:5:18: resource: RBAC rules name resources by their plural, and KopfExample looks like a kind: write the plural (e.g. kopfexamples), or declare its Go type with //kopf:resource\n",
	}, {
		name: "several typed resources",
		files: map[string]string{
			"ops/ops.go": strings.Replace(handler, "%s", "things", 1),
			"a/v1/t.go":  typed("", "//kopf:resource a.example.com/v1/things", ""),
			"b/v1/t.go":  typed("", "//kopf:resource b.example.com/v1/things", ""),
		},
		want: "ops/ops.go:5:18: resource: things names several typed resources of this run: a.example.com/v1/things (T), b.example.com/v1/things (T); add the group and version\n",
	}, {
		name: "group and version differ in a package",
		files: map[string]string{"api/v1/t.go": typed("", "//kopf:resource example.com/v1/things", "") +
			"\n// U is typed too.\n//\n//kopf:resource example.com/v2/others\ntype U struct {\n\tmetav1.TypeMeta `json:\",inline\"`\n}\n"},
		want: "api/v1/t.go:15:1: //kopf:resource: CRDs are generated per package, so the typed resources of one package must share their group and version: U is example.com/v2, but T at line 7 is example.com/v1\n",
	}, {
		name:  "groupName disagrees",
		files: map[string]string{"api/v1/t.go": "// +groupName=other.example.com\n" + typed("", "//kopf:resource example.com/v1/things", "")},
		want:  "api/v1/t.go:8:1: //kopf:resource names example.com/v1, but the package's +groupName/+versionName markers say other.example.com/v1; make them agree (or drop them)\n",
	}, {
		name:  "kind is not the type",
		files: map[string]string{"api/v1/t.go": typed("", "//kopf:resource example.com/v1/Thing", "")},
		want:  "api/v1/t.go:7:1: //kopf:resource names the kind Thing, but the type is T: CRD generation takes the kind from the type's name; rename the type or name the plural\n",
	}, {
		name:  "plural disagrees",
		files: map[string]string{"api/v1/t.go": typed("", "// +kubebuilder:resource:path=stuff\n//kopf:resource example.com/v1/things", "")},
		want:  "api/v1/t.go:8:1: //kopf:resource names the plural things, but +kubebuilder:resource:path says stuff; make them agree\n",
	}, {
		name:  "interface values",
		files: map[string]string{"api/v1/t.go": typed("", "//kopf:resource example.com/v1/things", "\tSpec map[string]any `json:\"spec\"`\n\tMore []interface{} `json:\"more\"`\n")},
		want: "api/v1/t.go:11:18: field T.Spec: a CRD schema cannot describe any values; to keep any JSON there, mark the field with +kubebuilder:validation:Schemaless, +kubebuilder:validation:Type=object and +kubebuilder:pruning:PreserveUnknownFields, or use runtime.RawExtension\n" +
			"api/v1/t.go:12:9: field T.More: a CRD schema cannot describe interface{} values; to keep any JSON there, mark the field with +kubebuilder:validation:Schemaless, +kubebuilder:validation:Type=object and +kubebuilder:pruning:PreserveUnknownFields, or use runtime.RawExtension\n",
	}, {
		name:  "bad kubebuilder marker",
		files: map[string]string{"api/v1/t.go": typed("", "//kopf:resource example.com/v1/things", "\t// +kubebuilder:validation:MaxLength=many\n\tName string `json:\"name\"`\n")},
		want:  "api/v1/t.go:11:2: expected integer, got \"many\" (at <input>:1:1)\n",
	}, {
		name:  "DeepCopy of interfaces",
		files: map[string]string{"api/v1/t.go": "// +k8s:deepcopy-gen=package\n" + typed("", "// Not a resource.", "\tData map[string]any `json:\"data\"`\n")},
		want:  "api/v1/t.go:12:18: field T.Data: DeepCopy methods cannot copy any values; for free-form JSON use runtime.RawExtension (with +kubebuilder:pruning:PreserveUnknownFields) or apiextensionsv1.JSON, or exclude T with +k8s:deepcopy-gen=false\n",
	}, {
		name: "all at once",
		files: map[string]string{
			"ops/ops.go":  strings.Replace(handler, "%s", "kopfexamples", 1),
			"api/v1/t.go": typed("", "//kopf:resource example.com/v1/Thing", ""),
		},
		want: "api/v1/t.go:7:1: //kopf:resource names the kind Thing, but the type is T: CRD generation takes the kind from the type's name; rename the type or name the plural\n" +
			"ops/ops.go:5:18: resource: cannot tell the API group of kopfexamples for the RBAC rules: write it with its group (group/kopfexamples, group/version/kopfexamples, or v1/kopfexamples for the core group), or declare its Go type with //kopf:resource\n",
	}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := testModule(t, tc.files)
			_, _, err := Generate(context.Background(), Options{Dir: dir, Manifests: "config", DeepCopy: true})
			var list scanner.ErrorList
			if !errors.As(err, &list) {
				t.Fatalf("got %v, want a scanner.ErrorList", err)
			}
			var got strings.Builder
			for _, e := range list {
				pos := e.Pos
				if rel, err := filepath.Rel(dir, pos.Filename); err == nil {
					pos.Filename = filepath.ToSlash(rel)
				}
				got.WriteString(pos.String() + ": " + e.Msg + "\n")
			}
			if got.String() != tc.want {
				t.Errorf("got:\n%s\nwant:\n%s", got.String(), tc.want)
			}
		})
	}
}

// TestRoleName checks the name of the role: from the module by default.
func TestRoleName(t *testing.T) {
	if testing.Short() {
		t.Skip("loads packages")
	}
	dir := testModule(t, map[string]string{"ops/ops.go": "package ops\n"})
	for _, tc := range []struct{ name, want string }{{"", "bench-operator"}, {"custom.role", "custom.role"}} {
		files, _, err := Generate(context.Background(), Options{Dir: dir, Manifests: "out", RoleName: tc.name})
		if err != nil {
			t.Fatal(err)
		}
		if len(files) != 1 || !strings.Contains(string(files[0].Want), "\n  name: "+tc.want+"\nrules: []\n") {
			t.Errorf("role name %q: %d files\n%s", tc.name, len(files), files[0].Want)
		}
		if !manifests.IsGenerated(files[0].Want) {
			t.Error("the role is not marked as generated")
		}
	}
}
