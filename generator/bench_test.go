package generator

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kopf-go/kopf/generator/load"
)

// benchModule writes a module with one package of n handlers (changing
// and event handlers, with filters, half of them typed) into a temporary
// directory, requiring this checkout through a replace directive, and
// returns its directory.
func benchModule(tb testing.TB, n int) string {
	tb.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		tb.Fatal(err)
	}
	// testdata's go.mod lists everything kopf needs: reuse its requirements.
	gomod, err := os.ReadFile(filepath.Join("testdata", "go.mod"))
	if err != nil {
		tb.Fatal(err)
	}
	sum, err := os.ReadFile(filepath.Join("testdata", "go.sum"))
	if err != nil {
		tb.Fatal(err)
	}
	mod := strings.Replace(string(gomod), "module example.com/golden", "module example.com/bench", 1)
	mod = strings.Replace(mod, "replace github.com/kopf-go/kopf => ../..", "replace github.com/kopf-go/kopf => "+root, 1)
	dir := tb.TempDir()
	files := map[string]string{"go.mod": mod, "go.sum": string(sum)}

	var b strings.Builder
	b.WriteString(`package many

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Thing is a typed resource.
//
//kopf:resource example.com/v1/things
type Thing struct {
	metav1.TypeMeta   ` + "`json:\",inline\"`" + `
	metav1.ObjectMeta ` + "`json:\"metadata,omitempty\"`" + `
	Spec ThingSpec ` + "`json:\"spec\"`" + `
}

// ThingSpec is its spec.
type ThingSpec struct {
	Size  int               ` + "`json:\"size\"`" + `
	Notes map[string]string ` + "`json:\"notes,omitempty\"`" + `
}

func isBig(value any) bool { return value != nil }
`)
	for i := range n {
		res := "example.com/v1/things"
		if i%2 == 1 {
			res = fmt.Sprintf("example.com/v1/widgets%d", i%7)
		}
		switch i % 5 {
		case 0:
			fmt.Fprintf(&b, "\n//kopf:on.create %s labels={app: web, tier: PRESENT} retries=3\nfunc H%d(ctx context.Context, kw H%dKwargs) (any, error) { return nil, nil }\n", res, i, i)
		case 1:
			fmt.Fprintf(&b, "\n//kopf:on.update %s field=spec.size old=1 new=fn:isBig\nfunc H%d(ctx context.Context, kw H%dKwargs) (any, error) { return nil, nil }\n", res, i, i)
		case 2:
			fmt.Fprintf(&b, "\n//kopf:on.delete %s optional=true\nfunc H%d(ctx context.Context, kw H%dKwargs) error { return nil }\n", res, i, i)
		case 3:
			fmt.Fprintf(&b, "\n//kopf:on.field %s field=spec.notes value=PRESENT\nfunc H%d(ctx context.Context, kw H%dKwargs) (any, error) { return nil, nil }\n", res, i, i)
		case 4:
			fmt.Fprintf(&b, "\n//kopf:on.event %s annotations={\"example.com/x\": ABSENT}\nfunc H%d(ctx context.Context, kw H%dKwargs) error { return nil }\n", res, i, i)
		}
	}
	files["many/many.go"] = b.String()
	for name, content := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	return dir
}

// BenchmarkGenerate500 generates the code of a package of 500 handlers,
// checking that each run loads the packages once: one full load, at most
// one listing of imported packages' files, no other load.
func BenchmarkGenerate500(b *testing.B) {
	dir := benchModule(b, 500)
	ctx := context.Background()
	check := func(files []File, before load.Queries) {
		after := load.CountQueries()
		if loads := after.Loads - before.Loads; loads != 1 {
			b.Fatalf("%d full loads in one run, want 1", loads)
		}
		if listings := after.Listings - before.Listings; listings > 1 {
			b.Fatalf("%d listings in one run, want at most 1", listings)
		}
		if imports := after.Imports - before.Imports; imports != 0 {
			b.Fatalf("%d on-demand imports in one run, want 0", imports)
		}
		if len(files) != 1 || !strings.Contains(string(files[0].Want), "type H499Kwargs = kopf.") {
			b.Fatalf("unexpected output: %d files", len(files))
		}
	}
	// Warm the go command's caches, and check once outside the timing.
	before := load.CountQueries()
	files, _, err := Generate(ctx, Options{Dir: dir})
	if err != nil {
		b.Fatal(err)
	}
	check(files, before)
	b.ReportAllocs()
	for b.Loop() {
		before := load.CountQueries()
		files, _, err := Generate(ctx, Options{Dir: dir})
		if err != nil {
			b.Fatal(err)
		}
		check(files, before)
	}
}

// TestGenerate500 runs the benchmark's generation once as a test, so that
// `go test` checks it compiles and loads once.
func TestGenerate500(t *testing.T) {
	if testing.Short() {
		t.Skip("loads a package of 500 handlers")
	}
	dir := benchModule(t, 500)
	before := load.CountQueries()
	files, _, err := Generate(context.Background(), Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	after := load.CountQueries()
	if after.Loads-before.Loads != 1 || after.Listings-before.Listings > 1 || after.Imports != before.Imports {
		t.Errorf("queries: before %+v, after %+v; want one load", before, after)
	}
	if len(files) != 1 {
		t.Fatalf("%d files", len(files))
	}
	if _, err := Write(files); err != nil {
		t.Fatal(err)
	}
	// The generated code compiles.
	if out, err := goCmd(dir, "vet", "./..."); err != nil {
		t.Fatalf("go vet: %v\n%s", err, out)
	}
}

// goCmd runs the go command in dir.
func goCmd(dir string, args ...string) ([]byte, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	return cmd.CombinedOutput()
}
