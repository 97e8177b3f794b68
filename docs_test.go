package kopf_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// docsWithOwnTests are the pages whose Go blocks are checked otherwise
// (settings.md shows a main function that ExampleMain compiles in another
// form; embedding.md is checked by TestEmbeddingDocShowsExampleRun;
// first-operator.md shows the scaffold of kopf-gen init, checked by
// generator/scaffold's TestFirstOperatorDoc).
var docsWithOwnTests = map[string]bool{"settings.md": true, "embedding.md": true, "first-operator.md": true}

var goBlock = regexp.MustCompile("(?s)```go\n(.*?)```")

// Every Go block of a page in docs/ is a verbatim part of code that
// compiles: a test file of this package (examples_docs_test.go holds most)
// or a Go file under examples/ (generated code included), so
// that a page cannot drift from the API it shows.
func TestDocsShowCompiledCode(t *testing.T) {
	files, err := filepath.Glob("*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	// The examples' Go files at any depth: the operators, their typed API
	// (examples/apis) and its generated clients (examples/generated).
	err = filepath.WalkDir("examples", func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".go") {
			files = append(files, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	var sources []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sources = append(sources, string(data))
	}
	pages, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, page := range pages {
		if docsWithOwnTests[filepath.Base(page)] {
			continue
		}
		doc, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range goBlock.FindAllStringSubmatch(string(doc), -1) {
			checked++
			block := m[1]
			found := false
			for _, src := range sources {
				if strings.Contains(src, block) {
					found = true
					break
				}
			}
			if !found {
				t.Errorf("%s shows Go code that no compiled file has verbatim:\n%s", page, block)
			}
		}
	}
	if checked == 0 {
		t.Error("no Go block found in docs/: is the pattern wrong?")
	}
}

// docs/README.md indexes every page of docs/, and README.md links it.
func TestDocsIndexListsEveryPage(t *testing.T) {
	index, err := os.ReadFile("docs/README.md")
	if err != nil {
		t.Fatal(err)
	}
	pages, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, page := range pages {
		name := filepath.Base(page)
		if name != "README.md" && !strings.Contains(string(index), "("+name+")") {
			t.Errorf("docs/README.md does not link %s", name)
		}
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "(docs/README.md)") {
		t.Error("README.md does not link docs/README.md")
	}
}
