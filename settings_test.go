package kopf_test

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/kopf-go/kopf"
)

// docs/settings.md documents every setting: each exported field of each
// group of kopf.Settings appears there as `Group.Field`, so the page stays
// complete when a setting is added.
func TestSettingsAreDocumented(t *testing.T) {
	data, err := os.ReadFile("docs/settings.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	groups := reflect.TypeFor[kopf.Settings]()
	for i := range groups.NumField() {
		group := groups.Field(i)
		if !group.IsExported() {
			continue
		}
		if group.Type.Kind() != reflect.Struct {
			t.Errorf("kopf.Settings.%s is not a group of settings", group.Name)
			continue
		}
		if !strings.Contains(doc, "## "+group.Name+" ") {
			t.Errorf("docs/settings.md has no section for the group %s", group.Name)
		}
		for j := range group.Type.NumField() {
			field := group.Type.Field(j)
			if !field.IsExported() {
				continue
			}
			if name := "`" + group.Name + "." + field.Name + "`"; !strings.Contains(doc, name) {
				t.Errorf("docs/settings.md does not document %s", name)
			}
		}
	}
}

// docs/embedding.md shows ExampleRun exactly as example_test.go compiles
// it.
func TestEmbeddingDocShowsExampleRun(t *testing.T) {
	src, err := os.ReadFile("example_test.go")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile("docs/embedding.md")
	if err != nil {
		t.Fatal(err)
	}
	start := strings.Index(string(src), "func ExampleRun() {")
	end := strings.Index(string(src[start:]), "\n}\n")
	if start < 0 || end < 0 {
		t.Fatal("no ExampleRun in example_test.go")
	}
	if example := string(src[start : start+end+3]); !strings.Contains(string(doc), example) {
		t.Errorf("docs/embedding.md does not show ExampleRun as it is:\n%s", example)
	}
}
