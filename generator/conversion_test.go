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

// gadget is an API package declaring Gadget in one version, and Other.
func gadget(version, marks string) string {
	return "// Package " + version + " is a version.\npackage " + version + "\n\n// Gadget is a gadget.\n//\n" + marks +
		"//kopf:resource ex.dev/" + version + "/Gadget\ntype Gadget struct{}\n\n// Other is another kind.\n//\n//kopf:resource ex.dev/" + version + "/Other\ntype Other struct{}\n"
}

const conversionsSrc = `package p

import (
	"context"

	"example.com/m/v1"
	"example.com/m/v1alpha1"
	"example.com/m/v1beta1"
)

//kopf:conversion
func GadgetV1alpha1ToV1(src *v1alpha1.Gadget, dst *v1.Gadget) error { return nil }

//kopf:conversion
func GadgetV1ToV1alpha1(src *v1.Gadget, dst *v1alpha1.Gadget) error { return nil }

//kopf:conversion
func Again(src *v1.Gadget, dst *v1alpha1.Gadget) error { return nil }

//kopf:conversion
func Spokes(src *v1alpha1.Gadget, dst *v1beta1.Gadget) error { return nil }

//kopf:conversion
func OneWay(src *v1beta1.Gadget, dst *v1.Gadget) error { return nil }

//kopf:conversion
func Kinds(src *v1alpha1.Gadget, dst *v1.Other) error { return nil }

//kopf:conversion
func Same(src *v1.Gadget, dst *v1.Gadget) error { return nil }

//kopf:conversion
func NoHub(src *v1alpha1.Other, dst *v1.Other) error { return nil }

//kopf:conversion
func Three(src *v1alpha1.Gadget, dst *v1.Gadget, more int) error { return nil }

//kopf:conversion
func Untyped(src *v1alpha1.Gadget, dst map[string]any) error { return nil }

//kopf:conversion
func Results(src *v1alpha1.Gadget, dst *v1.Gadget) {}

//kopf:conversion
//kopf:on.create ex
func Both(src *v1alpha1.Gadget, dst *v1.Gadget) error { return nil }

var _ context.Context
`

// TestConversionErrors checks every error of //kopf:conversion functions,
// with its position, in one run.
func TestConversionErrors(t *testing.T) {
	files := map[string]string{
		"p/p.go":        conversionsSrc,
		"v1/t.go":       gadget("v1", "// +kubebuilder:storageversion\n//\n"),
		"v1alpha1/t.go": gadget("v1alpha1", ""),
		"v1beta1/t.go":  gadget("v1beta1", ""),
	}
	dir := module(t, files)
	t.Setenv("GOFLAGS", "-mod=mod "+os.Getenv("GOFLAGS"))
	_, _, err := Generate(context.Background(), Options{Dir: dir})
	var list scanner.ErrorList
	if !errors.As(err, &list) {
		t.Fatalf("Generate: %v, want a scanner.ErrorList", err)
	}
	var got []string
	for _, e := range list {
		got = append(got, strings.TrimPrefix(e.Error(), dir+string(filepath.Separator)))
	}
	want := []string{}
	for _, d := range []struct{ file, at, msg string }{
		{"p/p.go", "Again(", "conversion Again converts Gadget v1 to v1alpha1, as GadgetV1ToV1alpha1 at line 15 does already"},
		{"p/p.go", "Spokes(", "conversion Spokes converts v1alpha1 to v1beta1: conversions go through the hub v1 (the storage version); write v1alpha1 to v1 and v1 to v1beta1 instead"},
		{"p/p.go", "*v1.Other) error { return nil }\n\n//kopf:conversion\nfunc Same", "conversion Kinds converts between two kinds, ex.dev/v1alpha1/Gadget (v1alpha1.Gadget) and ex.dev/v1/Other (v1.Other): a conversion converts one kind between two of its versions"},
		{"p/p.go", "*v1.Gadget) error { return nil }\n\n//kopf:conversion\nfunc NoHub", "conversion Same converts Gadget to its own version v1: a conversion converts between two versions"},
		{"p/p.go", "NoHub(", "conversion NoHub: Other has no storage version among v1, v1alpha1 and v1beta1; mark the version that the API server stores with +kubebuilder:storageversion, and convert to and from it"},
		{"p/p.go", "(src *v1alpha1.Gadget, dst *v1.Gadget, more int)", "conversion Three has the wrong signature: it has 3 parameters; want func Three(src *A, dst *B) error, where A and B are the //kopf:resource types of two versions of one kind"},
		{"p/p.go", "map[string]any", "conversion Untyped has the wrong signature: the second parameter is map[string]any, not a pointer to a //kopf:resource type; want func Untyped(src *A, dst *B) error, where A and B are the //kopf:resource types of two versions of one kind"},
		{"p/p.go", ") {}", "conversion Results has the wrong signature: it returns nothing; want func Results(src *A, dst *B) error, where A and B are the //kopf:resource types of two versions of one kind"},
		{"p/p.go", "//kopf:on.create ex", "//kopf:on.create cannot share a function with //kopf:conversion: a conversion function is no handler; use a separate function"},
		{"v1beta1/t.go", "//kopf:resource ex.dev/v1beta1/Gadget", "Gadget v1beta1 converts to the hub v1 (OneWay) but not from it: every spoke needs both directions; add a //kopf:conversion func(src *v1.Gadget, dst *v1beta1.Gadget) error"},
	} {
		want = append(want, diag{d.at, d.msg}.where(t, d.file, files[d.file]))
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// gadgetVersion is an API package (with DeepCopy) declaring Gadget in one
// version, whose spec has the field named field.
func gadgetVersion(version, marks, field string) string {
	return "// Package " + version + " is a version of Gadget.\n//\n// +k8s:deepcopy-gen=package\npackage " + version + `

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// Gadget is a gadget.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
` + marks + `//kopf:resource example.com/` + version + `/Gadget
type Gadget struct {
	metav1.TypeMeta   ` + "`json:\",inline\"`" + `
	metav1.ObjectMeta ` + "`json:\"metadata,omitempty\"`" + `

	Spec GadgetSpec ` + "`json:\"spec\"`" + `
}

// GadgetSpec is the spec of a Gadget.
type GadgetSpec struct {
	` + strings.ToUpper(field[:1]) + field[1:] + " []string `json:\"" + field + "\"`" + `
}
`
}

const storage = "// +kubebuilder:storageversion\n"

const gadgetConversions = `package ops

import (
	"example.com/bench/api/v1"
	"example.com/bench/api/v1alpha1"
)

//kopf:conversion
func GadgetV1alpha1ToV1(src *v1alpha1.Gadget, dst *v1.Gadget) error {
	dst.Spec.Colors = src.Spec.Colours
	return nil
}

//kopf:conversion
func GadgetV1ToV1alpha1(src *v1.Gadget, dst *v1alpha1.Gadget) error {
	dst.Spec.Colours = src.Spec.Colors
	return nil
}
`

// TestVersionManifests generates the manifests of a kind in two versions
// with conversions: one CRD of both versions with the Webhook strategy,
// the webhooks' Service and Role, the rule of the CRD in the role; the
// code compiles. Equal schemas need no conversion and get none.
func TestVersionManifests(t *testing.T) {
	if testing.Short() {
		t.Skip("loads packages with controller-tools")
	}
	ctx := context.Background()
	dir := testModule(t, map[string]string{
		"api/v1alpha1/types.go": gadgetVersion("v1alpha1", "", "colours"),
		"api/v1/types.go":       gadgetVersion("v1", storage, "colors"),
		"ops/conversions.go":    gadgetConversions,
	})
	opts := Options{Dir: dir, Manifests: "config", DeepCopy: true}
	files, _, err := Generate(ctx, opts)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	byName := map[string][]byte{}
	for _, f := range files {
		rel, _ := filepath.Rel(dir, f.Path)
		byName[filepath.ToSlash(rel)] = f.Want
	}
	for name, golden := range map[string]string{
		"config/crd/example.com_gadgets.yaml": "testdata/manifests/versions/example.com_gadgets.yaml",
		"config/rbac/role.yaml":               "testdata/manifests/versions/role.yaml",
		"ops/zz_generated.kopf.go":            "testdata/manifests/versions/zz_generated.kopf.go.golden",
	} {
		if *update {
			if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(golden, byName[name], 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if want := readFile(t, golden); string(byName[name]) != want {
			d, _ := Diff(File{Path: name, Have: []byte(want), Want: byName[name]}, name)
			t.Errorf("%s differs from %s (go test -update rewrites it):\n%s", name, golden, d)
		}
	}
	for _, name := range []string{"config/webhook/service.yaml", "config/rbac/webhook_role.yaml"} {
		if byName[name] == nil {
			t.Errorf("no %s with conversions", name)
		}
	}
	if _, err := Write(files); err != nil {
		t.Fatal(err)
	}
	if out, err := goCmd(dir, "vet", "./..."); err != nil {
		t.Fatalf("go vet of the generated code: %v\n%s", err, out)
	}

	// Equal schemas: no conversion, no webhook.
	if err := os.Remove(filepath.Join(dir, "ops/conversions.go")); err != nil {
		t.Fatal(err)
	}
	writeTestFile(t, filepath.Join(dir, "api/v1alpha1/types.go"), gadgetVersion("v1alpha1", "", "colors"))
	files, _, err = Generate(ctx, opts)
	if err != nil {
		t.Fatalf("Generate with equal schemas: %v", err)
	}
	for _, f := range files {
		rel, _ := filepath.Rel(dir, f.Path)
		switch rel := filepath.ToSlash(rel); {
		case rel == "config/crd/example.com_gadgets.yaml" && (strings.Contains(string(f.Want), "conversion:") || !strings.Contains(string(f.Want), "name: v1alpha1")):
			t.Errorf("CRD of equal versions:\n%s", f.Want)
		case strings.HasPrefix(rel, "config/webhook/") && f.Want != nil:
			t.Errorf("%s planned without conversions", rel)
		}
	}
}

// TestVersionErrors checks the errors of a kind's versions, found with
// its CRD, and of a version package without its doc.go.
func TestVersionErrors(t *testing.T) {
	if testing.Short() {
		t.Skip("loads packages with controller-tools")
	}
	noDoc := strings.Replace(gadgetVersion("v1", storage, "colors"), "// +k8s:deepcopy-gen=package\n", "", 1)
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  string
	}{{
		name: "no storage version",
		files: map[string]string{
			"api/v1alpha1/types.go": gadgetVersion("v1alpha1", "", "colors"),
			"api/v1/types.go":       gadgetVersion("v1", "", "colors"),
		},
		want: "api/v1/types.go:11:1: Gadget has 2 versions (v1, v1alpha1) and none is its storage version: mark the type of the version that the API server stores with +kubebuilder:storageversion\n" +
			"api/v1alpha1/types.go:11:1: Gadget has 2 versions (v1, v1alpha1) and none is its storage version: mark the type of the version that the API server stores with +kubebuilder:storageversion\n",
	}, {
		name: "two storage versions",
		files: map[string]string{
			"api/v1alpha1/types.go": gadgetVersion("v1alpha1", storage, "colors"),
			"api/v1/types.go":       gadgetVersion("v1", storage, "colors"),
		},
		want: "api/v1alpha1/types.go:12:1: Gadget v1alpha1 is marked +kubebuilder:storageversion, as v1 at types.go:12:1 is: a kind has one storage version, the hub of its conversions\n",
	}, {
		name: "schemas differ without conversions",
		files: map[string]string{
			"api/v1alpha1/types.go": gadgetVersion("v1alpha1", "", "colours"),
			"api/v1/types.go":       gadgetVersion("v1", storage, "colors"),
		},
		want: "api/v1alpha1/types.go:11:1: Gadget v1alpha1's schema differs from the storage version v1's, and no //kopf:conversion converts between them: the API server would convert by dropping the fields that the other version lacks; write both conversions (v1alpha1 to v1 and back; kopf-gen add-version writes their stubs), or make the schemas equal\n",
	}, {
		name: "a version without conversions",
		files: map[string]string{
			"api/v1alpha1/types.go": gadgetVersion("v1alpha1", "", "colours"),
			"api/v1beta1/types.go":  gadgetVersion("v1beta1", "", "colors"),
			"api/v1/types.go":       gadgetVersion("v1", storage, "colors"),
			"ops/conversions.go":    gadgetConversions,
		},
		want: "api/v1beta1/types.go:11:1: Gadget v1beta1 has no //kopf:conversion to and from the storage version, though other versions of Gadget have: the API server converts every version of a kind through its webhook\n",
	}, {
		name: "a version package without doc.go",
		files: map[string]string{
			"api/v1alpha1/types.go": gadgetVersion("v1alpha1", "", "colours"),
			"api/v1/types.go":       noDoc,
			"ops/conversions.go":    gadgetConversions,
		},
		want: "api/v1/types.go:16:7: field Gadget.Spec: the DeepCopy methods of Gadget would call GadgetSpec.DeepCopyInto, which nothing generates: package v1 asks for DeepCopy methods type by type (it has no doc.go with the package's marker); add a doc.go with \"// +k8s:deepcopy-gen=package\" above \"package v1\" (kopf-gen add-version writes one), or mark GadgetSpec with +k8s:deepcopy-gen=true\n",
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
