package cluster

import (
	"fmt"
	"os"
	"testing"

	"github.com/kopf-go/kopf/envtest"
)

// Main runs the tests of m against one control plane that they share, as
// a TestMain does: it starts the control plane with envtest's options,
// calls setup with it (to apply CRDs, say, and keep it in a package
// variable), runs the tests, stops the control plane, and returns the
// code for os.Exit. When the control plane does not start or setup fails,
// it says so on stderr, runs no test, and returns 1.
func Main(m *testing.M, setup func(*Cluster) error, opts ...envtest.Option) int {
	c, err := StartDetached(opts...)
	if err != nil {
		fmt.Fprintf(os.Stderr, "starting the control plane: %v\n", err)
		return 1
	}
	if err := setup(c); err != nil {
		_ = c.Stop()
		fmt.Fprintf(os.Stderr, "setting up the control plane: %v\n", err)
		return 1
	}
	code := m.Run()
	if err := c.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "stopping the control plane: %v\n", err)
	}
	return code
}
