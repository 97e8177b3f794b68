package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// portPython is the interpreter that kopf-gen port's tests parse with:
// Debian's /usr/bin/python3, else python3 on PATH; without one the test
// skips, or fails under CI=true.
func portPython(t *testing.T) string {
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

// TestPortBuilds ports each golden case of generator/port/testdata (the
// same input as the golden test, which compares the files) and takes the
// output through what its user does: the generation that port runs itself
// (the markers parsed as kopf-gen parses them), go build, go vet (unused
// imports, wrong types) and the unit tests (the handlers register), then
// kopf-gen verify. A golden file that does not compile fails here.
func TestPortBuilds(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a ported repository (go mod tidy, go build, kopf-gen)")
	}
	python := portPython(t)
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	cases, _ := filepath.Glob(filepath.Join(root, "generator", "port", "testdata", "*"))
	for _, src := range cases {
		t.Run(filepath.Base(src), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "ported")
			args := []string{"port", "--python", python, "--out", dir, "--module", "example.com/ported", "--kopf-replace", root}
			crds, _ := filepath.Glob(filepath.Join(src, "*.yaml"))
			for _, c := range crds {
				args = append(args, "--crd", c)
			}
			pys, _ := filepath.Glob(filepath.Join(src, "*.py"))
			code, out, errOut := kopfGen(t, append(args, pys...)...)
			if code != 0 {
				t.Fatalf("kopf-gen port: exit %d\n%s\n%s", code, out, errOut)
			}
			goIn(t, dir, nil, "go", "build", "./...")
			goIn(t, dir, nil, "go", "vet", "./...")
			out = goIn(t, dir, noControlPlane(t), "go", "test", "-count=1", "./internal/...")
			if !strings.Contains(out, "ok  \texample.com/ported/internal/handlers") {
				t.Errorf("the handlers' unit test did not pass:\n%s", out)
			}
			t.Chdir(dir)
			if code, out, errOut := kopfGen(t, "verify", "--manifests=config", "--kustomize", "--chart=dist/chart", "--deepcopy", "--clients=pkg/generated"); code != 0 {
				t.Errorf("kopf-gen verify: exit %d\n%s\n%s", code, out, errOut)
			}
		})
	}
}
