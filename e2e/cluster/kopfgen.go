package cluster

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
)

// BuildKopfGen builds kopf-gen from the checkout at root (its cmd/kopf-gen)
// into the file out. When root's bin/kopf-gen is there (`make kopf-gen`
// builds it, and make test does before the tests), out starts as a copy of
// it: go build then finds out current by its build ID instead of linking
// kopf-gen again (about 10 s of CPU), or links a new one if the checkout
// changed since.
func BuildKopfGen(root, out string) error {
	if err := CopyExecutable(filepath.Join(root, "bin", "kopf-gen"), out); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	cmd := exec.Command("go", "build", "-o", out, ".")
	cmd.Dir = filepath.Join(root, "cmd", "kopf-gen")
	if data, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build of kopf-gen in %s: %w\n%s", cmd.Dir, err, data)
	}
	return nil
}

// CopyExecutable copies the file from into the file to (mode 0755),
// creating to's directory.
func CopyExecutable(from, to string) error {
	src, err := os.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return err
	}
	dst, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(dst, src); err != nil {
		dst.Close()
		return fmt.Errorf("copying %s to %s: %w", from, to, err)
	}
	return dst.Close()
}
