package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const widgetV1alpha1 = `// Package v1alpha1 is the first version of widgets.
//
// +k8s:deepcopy-gen=package
package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Widget is a widget.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
//
//kopf:resource example.com/v1alpha1/widgets
type Widget struct {
	metav1.TypeMeta   ` + "`json:\",inline\"`" + `
	metav1.ObjectMeta ` + "`json:\"metadata,omitempty\"`" + `

	Spec WidgetSpec ` + "`json:\"spec\"`" + `
}

// WidgetSpec is the spec of a Widget.
type WidgetSpec struct {
	Colors []string ` + "`json:\"colors\"`" + `
}
`

const widgetOperator = `package main

import (
	"context"

	"example.com/m/api/v1alpha1"
)

//kopf:on.create example.com/v1alpha1/widgets
func Create(ctx context.Context, kw CreateKwargs) error { _ = kw.Object.Spec.Colors; return nil }

var _ = v1alpha1.Widget{}

func main() {}
`

// TestAddVersion adds v1 to an API package of one version: the new
// package (renamed, its marker in v1, not the storage version), the
// source marked as the storage version, the conversions' stubs in the
// operator's package; then generation succeeds (a CRD of both versions
// with the Webhook strategy) and the module builds.
func TestAddVersion(t *testing.T) {
	if testing.Short() {
		t.Skip("generates and builds a module")
	}
	dir := chdirModule(t, map[string]string{
		"api/v1alpha1/types.go":          widgetV1alpha1,
		"api/v1alpha1/types_test.go":     "package v1alpha1\n",
		"api/v1alpha1/zz_generated.x.go": "package v1alpha1\n",
		"main.go":                        widgetOperator,
	})
	code, stdout, stderr := kopfGen(t, "add-version", "./api/v1alpha1", "v1")
	if code != 0 {
		t.Fatalf("add-version: %d\n%s%s", code, stdout, stderr)
	}
	for _, want := range []string{
		"wrote api/v1/types.go\n",
		"wrote conversion_widget_v1.go\n",
		"marked v1alpha1.Widget +kubebuilder:storageversion in api/v1alpha1/types.go: the API server goes on storing Widget v1alpha1\n",
		"The storage version stays v1alpha1",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("add-version said:\n%s\nwant %q in it", stdout, want)
		}
	}
	v1 := readFile(t, filepath.Join(dir, "api/v1/types.go"))
	for _, want := range []string{"package v1\n", "//kopf:resource example.com/v1/widgets\n", "// Package v1 is the first version"} {
		if !strings.Contains(v1, want) {
			t.Errorf("api/v1/types.go lacks %q:\n%s", want, v1)
		}
	}
	if strings.Contains(v1, "storageversion") {
		t.Errorf("the new version is marked as the storage version:\n%s", v1)
	}
	if src := readFile(t, filepath.Join(dir, "api/v1alpha1/types.go")); !strings.Contains(src, "// +kubebuilder:storageversion\n//\n//kopf:resource example.com/v1alpha1/widgets\n") {
		t.Errorf("the source is not marked as the storage version:\n%s", src)
	}
	for _, name := range []string{"api/v1/types_test.go", "api/v1/zz_generated.x.go", "api/v1/doc.go"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			t.Errorf("%s was written", name)
		}
	}
	if stub := readFile(t, filepath.Join(dir, "conversion_widget_v1.go")); !strings.Contains(stub, "TODO") ||
		!strings.Contains(stub, "func WidgetV1alpha1ToV1(src *v1alpha1.Widget, dst *v1.Widget) error {") ||
		!strings.Contains(stub, "func WidgetV1ToV1alpha1(src *v1.Widget, dst *v1alpha1.Widget) error {") {
		t.Errorf("conversion stubs:\n%s", stub)
	}

	// Nothing is overwritten.
	if code, _, stderr := kopfGen(t, "add-version", "./api/v1alpha1", "v1"); code == 0 || !strings.Contains(stderr, "api/v1 exists already") {
		t.Errorf("add-version again: %d %s", code, stderr)
	}

	if code, stdout, stderr := kopfGen(t, "generate", "--deepcopy", "--manifests=config", "./..."); code != 0 {
		t.Fatalf("generate: %d\n%s%s", code, stdout, stderr)
	}
	if crd := readFile(t, filepath.Join(dir, "config/crd/example.com_widgets.yaml")); !strings.Contains(crd, "strategy: Webhook") ||
		!strings.Contains(crd, "name: v1alpha1\n") || !strings.Contains(crd, "storage: true") {
		t.Errorf("CRD:\n%s", crd)
	}
	if out, err := exec.Command("go", "vet", "./...").CombinedOutput(); err != nil {
		t.Fatalf("go vet: %v\n%s", err, out)
	}
}

// TestAddVersionRefuses checks the arguments that add-version refuses.
func TestAddVersionRefuses(t *testing.T) {
	chdirModule(t, map[string]string{"api/v1alpha1/types.go": widgetV1alpha1, "main.go": widgetOperator, "empty/e.go": "package empty\n"})
	for _, tc := range []struct{ args, want string }{
		{"./api/v1alpha1 version2", `"version2" is not a Kubernetes version name`},
		{"./api/v1alpha1 v1alpha1", "api/v1alpha1 exists already"},
		{"./empty v1", "empty declares no //kopf:resource type"},
	} {
		code, _, stderr := kopfGen(t, append([]string{"add-version"}, strings.Fields(tc.args)...)...)
		if code == 0 || !strings.Contains(stderr, tc.want) {
			t.Errorf("add-version %s: %d %q, want %q", tc.args, code, stderr, tc.want)
		}
	}
}

// A source package without the package DeepCopy marker gets a doc.go in
// the new version that has it, with the group; the source's own storage
// marker stays where it is, and the copy has none.
func TestAddVersionWritesDocGo(t *testing.T) {
	src := strings.Replace(widgetV1alpha1, "// +k8s:deepcopy-gen=package\n", "", 1)
	src = strings.Replace(src, "//kopf:resource example.com/v1alpha1/widgets", "// +kubebuilder:storageversion\n//\n//kopf:resource example.com/v1alpha1/widgets", 1)
	dir := chdirModule(t, map[string]string{"api/v1alpha1/types.go": src, "main.go": widgetOperator})
	code, stdout, stderr := kopfGen(t, "add-version", "./api/v1alpha1", "v1beta1")
	if code != 0 {
		t.Fatalf("add-version: %d\n%s%s", code, stdout, stderr)
	}
	if strings.Contains(stdout, "marked v1alpha1.Widget") {
		t.Errorf("add-version marked a storage version again:\n%s", stdout)
	}
	want := "// Package v1beta1 is the v1beta1 version of the API group example.com.\n//\n// +k8s:deepcopy-gen=package\n// +groupName=example.com\npackage v1beta1\n"
	if doc := readFile(t, filepath.Join(dir, "api/v1beta1/doc.go")); doc != want {
		t.Errorf("doc.go:\n%s\nwant:\n%s", doc, want)
	}
	if got := readFile(t, filepath.Join(dir, "api/v1beta1/types.go")); strings.Contains(got, "storageversion") || !strings.Contains(got, "//kopf:resource example.com/v1beta1/widgets\n") {
		t.Errorf("the copy:\n%s", got)
	}
	if got := readFile(t, filepath.Join(dir, "api/v1alpha1/types.go")); got != src {
		t.Errorf("the source changed:\n%s", got)
	}
}
