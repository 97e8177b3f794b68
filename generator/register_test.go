package generator

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestRegisterFile checks when a package of //kopf:resource types gets its
// scheme registration, and what it refuses.
func TestRegisterFile(t *testing.T) {
	const deepCopied = `
func (in *Widget) DeepCopyObject() runtime.Object { return in }
func (in *WidgetList) DeepCopyObject() runtime.Object { return in }
`
	const types = `package v1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

var _ runtime.Object

//kopf:resource example.com/v1/widgets
type Widget struct {
	metav1.TypeMeta   ` + "`json:\",inline\"`" + `
	metav1.ObjectMeta ` + "`json:\"metadata,omitempty\"`" + `
}

type WidgetList struct {
	metav1.TypeMeta ` + "`json:\",inline\"`" + `
	metav1.ListMeta ` + "`json:\"metadata,omitempty\"`" + `
	Items []Widget  ` + "`json:\"items\"`" + `
}
`
	tests := []struct {
		name     string
		src      string
		deepcopy bool
		want     []string // registered types, nil for no file
		err      string
	}{
		{name: "runtime objects", src: types + deepCopied, want: []string{"&Widget{}", "&WidgetList{}"}},
		{name: "not runtime objects", src: types},
		{name: "asked of DeepCopy", deepcopy: true, want: []string{"&Widget{}"},
			src: strings.Replace(types, "//kopf:resource", "// +kubebuilder:object:root=true\n//kopf:resource", 1)},
		{name: "asked, without --deepcopy",
			src: strings.Replace(types, "//kopf:resource", "// +kubebuilder:object:root=true\n//kopf:resource", 1)},
		{name: "registered by the package", src: types + deepCopied + "\nvar AddToScheme = func(*runtime.Scheme) error { return nil }\n"},
		{name: "a clash", src: types + deepCopied + "\nfunc Kind() {}\n",
			err: "v1/types.go:25:6: Kind is declared here and in the scheme registration"},
		{name: "two versions", src: types + deepCopied + `
//kopf:resource example.com/v2/gadgets
type Gadget struct{ Widget }
`, err: "v1/types.go:25:1: //kopf:resource: the scheme registration (zz_generated.register.go) is one group and version per package"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := testModule(t, map[string]string{"v1/types.go": tt.src})
			files, _, err := Generate(context.Background(), Options{Dir: dir, Patterns: []string{"./v1"}, DeepCopy: tt.deepcopy})
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var reg *File
			for i, f := range files {
				if filepath.Base(f.Path) == RegisterFileName && f.Want != nil {
					reg = &files[i]
				}
			}
			if tt.want == nil {
				if reg != nil {
					t.Fatalf("a registration was generated:\n%s", reg.Want)
				}
				return
			}
			if reg == nil {
				t.Fatal("no registration was generated")
			}
			var got []string
			for line := range strings.SplitSeq(string(reg.Want), "\n") {
				if l := strings.TrimSpace(line); strings.HasPrefix(l, "&") {
					got = append(got, strings.TrimSuffix(l, ","))
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("registered %v, want %v", got, tt.want)
			}
		})
	}
}
