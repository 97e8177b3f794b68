package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// replacedTypes replaces the spec and status of the scaffold's types.go,
// dropping the types Greeting and UpdateResult (whose apply configurations
// become orphans), and the handlers that used them.
func replacedTypes(t *testing.T, dir string) {
	t.Helper()
	path := filepath.Join(dir, "api", "v1alpha1", "types.go")
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(src)
	from, to := strings.Index(s, "// WidgetSpec is"), strings.Index(s, "// WidgetList is")
	if from < 0 || to < from {
		t.Fatalf("%s has no WidgetSpec before WidgetList:\n%s", path, s)
	}
	s = s[:from] + "// WidgetSpec is the desired state.\ntype WidgetSpec struct {\n\tSize int `json:\"size,omitempty\"`\n}\n\n" +
		"// WidgetStatus is the observed state.\ntype WidgetStatus struct {\n\tCreate map[string]string `json:\"create,omitempty\"`\n}\n\n" + s[to:]
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	handlers := "package handlers\n\nimport (\n\t\"context\"\n)\n\n//kopf:on.create widgets.example.com\nfunc Create(ctx context.Context, kw CreateKwargs) error { return nil }\n"
	for _, name := range []string{"handlers.go", "handlers_test.go"} {
		if err := os.Remove(filepath.Join(dir, "internal", "handlers", name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "internal", "handlers", "handlers.go"), []byte(handlers), 0o644); err != nil {
		t.Fatal(err)
	}
}

// checkReplacedTypes: after the types of the scaffold in dir (TestInit's,
// whose bin/kopf-gen its make kopf-gen built) are replaced by others, one
// `make generate` brings the generated files in line (removing the apply
// configurations of the types that are gone) and `make verify` passes; go
// generate ./... alone used to fail once, on the files that kopf-gen had
// just removed (issue 28).
func checkReplacedTypes(t *testing.T, dir string) {
	t.Helper()
	orphan := filepath.Join(dir, "pkg", "generated", "applyconfiguration", "api", "v1alpha1", "greeting.go")
	if _, err := os.Stat(orphan); err != nil {
		t.Fatalf("the scaffold has no apply configuration of Greeting: %v", err)
	}
	replacedTypes(t, dir)
	goIn(t, dir, nil, "make", "generate")
	if _, err := os.Stat(orphan); !os.IsNotExist(err) {
		t.Errorf("make generate left %s: %v", orphan, err)
	}
	goIn(t, dir, nil, "make", "verify")
}
