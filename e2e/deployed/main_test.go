// Package deployed runs the examples' operators as they are deployed, with
// only the RBAC that kopf-gen generates for them: for each example, the
// manifests of a `kopf-gen init` scaffold named after it (its
// ServiceAccount, ClusterRoleBinding, Deployment with its probes, and the
// webhooks' RoleBinding) plus what `kopf-gen generate --manifests` writes
// into the same config/ directory from the example's markers (the CRD, the
// ClusterRole, with --peering where the example peers; the webhooks'
// Service and Role) are applied server-side to a real kube-apiserver,
// which validates every object. The example's binary then runs with the
// Deployment's arguments and a kubeconfig that holds nothing but the
// server, its CA and a token of the ServiceAccount (TokenRequest), through
// the example's scenario (the steps of its own end-to-end test, in
// examples/NN-*/main_test.go). A request that RBAC refuses fails the test
// with the permission it lacked, and so does a 403 in the operator's log.
//
// The API server's audit log tells which of the granted permissions (verb,
// group, resource) each operator used; the test logs the used and the
// unused ones per example (docs/testing.md says what the test proves and
// how an operator's own test does the same).
package deployed

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/kopf-go/kopf/e2e/cluster"
	"github.com/kopf-go/kopf/envtest"
)

// The shared state of the package's test: set by TestMain.
var (
	// shared is the control plane, with the audit log of the service
	// accounts' requests (audit).
	shared *cluster.Cluster
	// audit is the path of the API server's audit log.
	audit string
	// bins holds kopf-gen and the examples' binaries (named as their
	// directories), built once.
	bins string
	// root is the repository's root directory.
	root string
)

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	var err error
	if root, err = cluster.RepoRoot(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	tmp, err := os.MkdirTemp("", "e2e-deployed-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(tmp)
	bins = filepath.Join(tmp, "bin")
	if err := build(bins); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	policy := filepath.Join(tmp, "audit-policy.yaml")
	if err := os.WriteFile(policy, []byte(auditPolicy), 0o600); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	audit = filepath.Join(tmp, "audit.log")
	return cluster.Main(m, func(c *cluster.Cluster) error {
		shared = c
		return nil
	},
		envtest.WithAPIServerFlag("audit-policy-file", policy),
		envtest.WithAPIServerFlag("audit-log-path", audit),
	)
}

// build builds kopf-gen and the examples' operators into dir, in one go
// build each.
func build(dir string) error {
	if err := cluster.BuildKopfGen(root, filepath.Join(dir, "kopf-gen")); err != nil {
		return err
	}
	pkgs := make([]string, 0, len(examples))
	for _, ex := range examples {
		pkgs = append(pkgs, "./"+ex.dir)
	}
	return goBuild(filepath.Join(root, "examples"), dir+"/", pkgs...)
}

func goBuild(moduleDir, out string, pkgs ...string) error {
	cmd := exec.Command("go", append([]string{"build", "-o", out}, pkgs...)...)
	cmd.Dir = moduleDir
	if data, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %v in %s: %w\n%s", pkgs, moduleDir, err, data)
	}
	return nil
}
