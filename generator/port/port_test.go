package port

import (
	"context"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kopf-go/kopf/generator/scaffold"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata/")

// requirePython returns the python3 to parse with; without one, the test
// is skipped, or fails under CI=true.
func requirePython(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"/usr/bin/python3", "python3"} {
		if exe, err := exec.LookPath(p); err == nil {
			return exe
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("no python3: kopf-gen port's tests need it (CI has Debian's)")
	}
	t.Skip("no python3 on PATH")
	return ""
}

// TestGolden ports testdata/<case>/*.py (with its crd.yaml) and compares
// the handlers, the memo and the API types with the golden files
// (-update rewrites them).
func TestGolden(t *testing.T) {
	python := requirePython(t)
	cases, _ := filepath.Glob("testdata/*")
	for _, dir := range cases {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			pys, _ := filepath.Glob(filepath.Join(dir, "*.py"))
			crds, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
			kopf, _ := filepath.Abs("../..")
			res, err := Port(context.Background(), Options{Python: python, Files: pys, CRDs: crds,
				Scaffold: scaffold.Options{Dir: t.TempDir(), Module: "example.com/golden", KopfReplace: kopf}})
			if err != nil {
				t.Fatal(err)
			}
			for name, data := range res.Files {
				if !strings.HasPrefix(name, "internal/handlers/") && !strings.HasPrefix(name, "api/") || strings.HasSuffix(name, "pyport.go") {
					continue
				}
				golden := filepath.Join(dir, "golden", filepath.FromSlash(name)+".golden")
				if *update {
					if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(golden, data, 0o644); err != nil {
						t.Fatal(err)
					}
					continue
				}
				want, err := os.ReadFile(golden)
				if err != nil {
					t.Fatalf("%v (run go test -update)", err)
				}
				if string(want) != string(data) {
					t.Errorf("%s differs from %s (run go test -update and review the diff)", name, golden)
				}
			}
		})
	}
}

// TestNoPython: a missing interpreter is named, with the version needed.
func TestNoPython(t *testing.T) {
	_, err := ParseFile(context.Background(), "no-such-python3", "testdata/all/operator.py")
	if err == nil || !strings.Contains(err.Error(), "Python 3.8 or newer") {
		t.Errorf("error %v, want one that names the version needed", err)
	}
}
