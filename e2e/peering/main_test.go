// Package peering tests Kopf's peering and kopf-go's Lease election on a
// real control plane: pausing by priority between two operators, a
// peering object written as a Python Kopf peer writes it (the wire
// format's literal values), the HA failover of two replicas by SIGKILL,
// and the freeze and resume commands of the operator binary; and, beside
// a real Python Kopf (kopfPython), pausing by priority both ways and the
// hand-over of objects from Kopf to kopf-go and back.
package peering

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/kopf-go/kopf"
	"github.com/kopf-go/kopf/e2e/cluster"
	"github.com/kopf-go/kopf/e2e/internal/proc"
	"github.com/kopf-go/kopf/envtest"
	"github.com/kopf-go/kopf/runtime/cli"
)

var (
	examples  = schema.GroupVersionResource{Group: "kopf.dev", Version: "v1", Resource: "kopfexamples"}
	peerings  = schema.GroupVersionResource{Group: "kopf.dev", Version: "v1", Resource: "kopfpeerings"}
	namespace = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	selector  = kopf.Selector{Group: "kopf.dev", Version: "v1", Name: "kopfexamples"}
)

// shared is the control plane, with the KopfExample and the peering CRDs.
var shared *cluster.Cluster

func TestMain(m *testing.M) {
	flag.Parse()
	code := cluster.Main(m, func(c *cluster.Cluster) error {
		if err := applyCRDs(c.Config); err != nil {
			return fmt.Errorf("applying the CRDs: %w", err)
		}
		shared = c
		return nil
	})
	_ = operator.Remove()
	os.Exit(code)
}

// applyCRDs applies examples/crd.yaml and the CRDs of examples/peering.yaml
// (Kopf's peering.yaml; its default objects are left out: each test makes
// the peering object of its own).
func applyCRDs(cfg *rest.Config) error {
	root, err := cluster.RepoRoot()
	if err != nil {
		return err
	}
	crd, err := os.ReadFile(filepath.Join(root, "examples", "crd.yaml"))
	if err != nil {
		return err
	}
	peering, err := os.ReadFile(filepath.Join(root, "examples", "peering.yaml"))
	if err != nil {
		return err
	}
	var crds [][]byte
	for doc := range strings.SplitSeq(string(peering), "\n---") {
		if strings.Contains(doc, "kind: CustomResourceDefinition") {
			crds = append(crds, []byte(doc))
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := envtest.Apply(ctx, cfg, bytes.Join(append([][]byte{crd}, crds...), []byte("\n---\n"))); err != nil {
		return err
	}
	return nil
}

func client(t *testing.T) *dynamic.DynamicClient {
	t.Helper()
	dyn, err := dynamic.NewForConfig(shared.Config)
	if err != nil {
		t.Fatal(err)
	}
	return dyn
}

// newNamespace creates a namespace of the test's own: the prefix and a
// suffix that differs from run to run (go test -count).
func newNamespace(t *testing.T, prefix string) string {
	t.Helper()
	ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"generateName": prefix + "-"}}}
	got, err := client(t).Resource(namespace).Create(context.Background(), ns, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return got.GetName()
}

// newPeering creates the KopfPeering name in ns.
func newPeering(t *testing.T, ns, name string) {
	t.Helper()
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "kopf.dev/v1", "kind": "KopfPeering", "metadata": map[string]any{"name": name, "namespace": ns}}}
	if _, err := client(t).Resource(peerings).Namespace(ns).Create(context.Background(), obj, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// peeringStatus is the raw JSON of the peering object's status.
func peeringStatus(t *testing.T, ns, name string) map[string]any {
	t.Helper()
	obj, err := client(t).Resource(peerings).Namespace(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	status, _, _ := unstructured.NestedMap(obj.Object, "status")
	return status
}

// patchPeering merge-patches the peering's status as another peer does.
func patchPeering(t *testing.T, ns, name, patch string) {
	t.Helper()
	if _, err := client(t).Resource(peerings).Namespace(ns).Patch(context.Background(), name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

// peered are the options of an in-process operator that takes part in
// the peering name of ns with a priority and an identity (kopftest runs
// standalone by default).
func peered(ns, name string, priority int, id string) []kopf.Option {
	return []kopf.Option{
		kopf.WithNamespaces(ns),
		func(o *cli.Options) { o.Standalone = false },
		kopf.WithPeering(name),
		kopf.WithPriority(priority),
		kopf.WithSettings(func(s *kopf.Settings) {
			s.Peering.Identity = id
			s.Peering.LeaseDuration, s.Peering.RenewDeadline, s.Peering.RetryPeriod = 3*time.Second, 2*time.Second, 500*time.Millisecond
		}),
	}
}

func example(name string) map[string]any {
	return map[string]any{"apiVersion": "kopf.dev/v1", "kind": "KopfExample", "metadata": map[string]any{"name": name}, "spec": map[string]any{"field": "value"}}
}

// waitFor polls cond until it holds, failing the test after timeout.
func waitFor(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// start runs bin with args, its output into logPath, in the test's
// environment without the operator's variables (cleanEnv) and with env.
func start(t *testing.T, bin, logPath string, env []string, args ...string) *proc.Process {
	t.Helper()
	return proc.Start(t, bin, proc.Options{Log: logPath, Env: append(cleanEnv(), env...), Args: args})
}

// cleanEnv is the test's environment without the variables that would
// change an operator's identity or its Lease's namespace.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "POD_ID=") && !strings.HasPrefix(kv, "POD_NAMESPACE=") && !strings.HasPrefix(kv, "KOPF_") {
			env = append(env, kv)
		}
	}
	return env
}

// operator is ./operator, built once per test run.
var operator = &proc.Binary{Pkg: "./operator"}

// binary is the path of ./operator's binary.
func binary(t *testing.T) string {
	t.Helper()
	return operator.Path(t)
}

// kubeconfig writes the cluster's admin kubeconfig into the test's
// directory.
func kubeconfig(t *testing.T) string {
	t.Helper()
	return shared.Kubeconfig(t, t.TempDir())
}
