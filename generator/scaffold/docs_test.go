package scaffold

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestFirstOperatorDoc checks docs/first-operator.md against the scaffold
// it describes: every Go block is a verbatim part of a Go file that init
// renders for the page's kopf-gen init command (cmd/kopf-gen's TestInit
// and e2e/scaffold compile and run that scaffold), and the command is the
// one rendered here. The root module's TestDocsShowCompiledCode leaves the
// page to this test.
func TestFirstOperatorDoc(t *testing.T) {
	page, err := os.ReadFile("../../docs/first-operator.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(page)
	const command = "kopf-gen init widget-operator --module github.com/acme/widget-operator \\\n" +
		"    --group example.com --version v1alpha1 --kind Widget --kopf-replace kopf-go\n"
	if !strings.Contains(doc, command) {
		t.Errorf("the page does not scaffold with %q", command)
	}
	work := t.TempDir()
	o := Options{Dir: filepath.Join(work, "widget-operator"), Module: "github.com/acme/widget-operator",
		Group: "example.com", Version: "v1alpha1", Kind: "Widget", KopfReplace: filepath.Join(work, "kopf-go")}
	if err := os.Rename(fakeKopf(t), o.KopfReplace); err != nil {
		t.Fatal(err)
	}
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	files, err := Render(o)
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```go\n(.*?)```").FindAllStringSubmatch(doc, -1)
	if len(blocks) == 0 {
		t.Fatal("no Go block in the page")
	}
	for _, m := range blocks {
		found := false
		for name, content := range files {
			if strings.HasSuffix(name, ".go") && strings.Contains(string(content), m[1]) {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("docs/first-operator.md shows Go code that the scaffold does not have verbatim:\n%s", m[1])
		}
	}
	for _, want := range []string{"make test-e2e", "make cluster", "make run", "make deploy IMG=widget-operator:dev",
		"kubectl apply -f config/samples/widgets.yaml", "deployment/widget-operator"} {
		if !strings.Contains(doc, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if !strings.Contains(string(files["config/manager/deployment.yaml"]), "  name: widget-operator\n") {
		t.Error("the page's Deployment is not named widget-operator")
	}
}
