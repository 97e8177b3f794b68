package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestHelp builds the command and asks for its usage: the flags must parse
// (controller-runtime, imported through envtest, registers a global
// -kubeconfig flag at init, and redefining it panics).
func TestHelp(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "cluster")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Env = os.Environ()
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "-h").CombinedOutput()
	if err != nil && !strings.Contains(err.Error(), "exit status 0") {
		// flag.ExitOnError exits with 0 on -h since Go 1.15.
		t.Fatalf("cluster -h: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "-kubeconfig") || strings.Contains(string(out), "panic") {
		t.Fatalf("cluster -h printed:\n%s", out)
	}
}
