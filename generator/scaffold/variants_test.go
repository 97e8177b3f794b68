package scaffold

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// variantFiles are the files that differ between the variants of a kind:
// scope, spec and status.
var variantFiles = []string{
	"api/v1alpha1/types.go", "internal/handlers/handlers.go", "internal/handlers/handlers_test.go",
	"internal/handlers/webhooks.go", "internal/handlers/webhooks_test.go",
	"config/samples/widgets.yaml", "test/e2e/e2e_test.go",
}

// TestRenderVariants renders the files of a kind that depend on its scope,
// spec and status for each variant, with webhooks, and compares them with
// testdata/<variant>/ (go test -update rewrites them). TestInitVariants of
// cmd/kopf-gen builds, vets, verifies and unit-tests a scaffold of a
// variant.
func TestRenderVariants(t *testing.T) {
	for _, tc := range []struct {
		name             string
		scope            string
		noSpec, noStatus bool
	}{
		{name: "namespaced"},
		{name: "cluster", scope: "cluster"},
		{name: "cluster-nostatus", scope: "Cluster", noStatus: true},
		{name: "nospec-nostatus", noSpec: true, noStatus: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := valid(t.TempDir())
			o.KopfVersion, o.Webhooks = "v0.3.1", true
			o.Scope, o.NoSpec, o.NoStatus = tc.scope, tc.noSpec, tc.noStatus
			if err := o.Validate(); err != nil {
				t.Fatal(err)
			}
			files, err := Render(o)
			if err != nil {
				t.Fatal(err)
			}
			for _, name := range variantFiles {
				golden := filepath.Join("testdata", tc.name, filepath.FromSlash(name))
				if *update {
					if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(golden, files[name], 0o644); err != nil {
						t.Fatal(err)
					}
					continue
				}
				want, err := os.ReadFile(golden)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(files[name], want) {
					t.Errorf("%s differs from %s (go test -update rewrites it):\n%s", name, golden, files[name])
				}
			}
		})
	}
}
