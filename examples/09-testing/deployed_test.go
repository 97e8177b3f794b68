package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kopf-go/kopf/envtest"
	"github.com/kopf-go/kopf/kopftest"
)

// serviceAccount is a ServiceAccount of the operator, bound to the
// ClusterRole that kopf-gen generates with --role-name testing-operator,
// as a scaffold's config/rbac/service_account.yaml and role_binding.yaml.
const serviceAccount = `apiVersion: v1
kind: ServiceAccount
metadata: {name: testing-operator, namespace: default}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: testing-operator}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: testing-operator}
subjects: [{kind: ServiceAccount, name: testing-operator, namespace: default}]
`

// TestAsDeployed is TestResourceLifecycle with the generated role only:
// the operator runs with a token of a ServiceAccount bound to the role
// that kopf-gen writes for this package, as docs/testing.md shows for a
// scaffold's test; a refused request is "forbidden" in its log.
func TestAsDeployed(t *testing.T) {
	env := envtest.Start(t, envtest.WithCRDs("../crd.yaml"))
	dir := t.TempDir()
	// The role of the handlers here, with the Go type of their resource.
	gen := exec.Command("go", "tool", "kopf-gen", "generate", "--manifests", dir, "--role-name", "testing-operator", ".", "../apis/kopf/v1")
	if out, err := gen.CombinedOutput(); err != nil {
		t.Fatalf("kopf-gen: %v\n%s", err, out)
	}
	accountFile := filepath.Join(dir, "service_account.yaml")
	if err := os.WriteFile(accountFile, []byte(serviceAccount), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := asServiceAccount(t, env, "default", "testing-operator", filepath.Join(dir, "rbac", "role.yaml"), accountFile)

	op := kopftest.StartCommand(t, cfg, []string{"run", "--all-namespaces", "--verbose", "--standalone"}, Register)
	obj, err := os.ReadFile("../obj.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := env.Apply(t.Context(), obj); err != nil {
		t.Fatal(err)
	}
	op.WaitOutcome(kopftest.Match{Name: "kopf-example-1", Handler: "create_fn", Result: kopftest.Succeeded}, 10*time.Second)
	kopftest.NewObjects(t, env.Config, kopfexamples, "default").Delete("kopf-example-1", 10*time.Second)
	if err := op.Stop(); err != nil {
		t.Fatalf("the operator failed: %v", err)
	}
	if strings.Contains(op.Logs(), "forbidden") {
		t.Errorf("a request was refused:\n%s", op.Logs())
	}
}

// asServiceAccount applies the manifests (the operator's role, its
// ServiceAccount and their binding) and returns a configuration that holds
// nothing but a token of the ServiceAccount (TokenRequest): an operator run
// with it has the role's permissions only.
func asServiceAccount(t *testing.T, env *envtest.Environment, namespace, name string, manifests ...string) *rest.Config {
	t.Helper()
	for _, file := range manifests {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if err := env.Apply(t.Context(), data); err != nil {
			t.Fatal(err)
		}
	}
	token, err := kubernetes.NewForConfigOrDie(env.Config).CoreV1().ServiceAccounts(namespace).
		CreateToken(t.Context(), name, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return &rest.Config{Host: env.Config.Host, BearerToken: token.Status.Token,
		TLSClientConfig: rest.TLSClientConfig{CAData: env.Config.CAData}}
}
