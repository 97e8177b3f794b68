package cluster_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kopf-go/kopf/e2e/cluster"
)

// The control plane starts, serves the API with its version, accepts a CRD
// and stops without leaving its processes behind.
func TestControlPlane(t *testing.T) {
	ctx := context.Background()
	c := cluster.Start(t)
	cs := kubernetes.NewForConfigOrDie(c.Config)
	v, err := cs.Discovery().ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	if v.GitVersion != "v"+cluster.KubernetesVersion {
		t.Errorf("server version %q, want v%s", v.GitVersion, cluster.KubernetesVersion)
	}
	if _, err := cs.CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{}); err != nil {
		t.Errorf("the default namespace: %v", err)
	}
	root, err := cluster.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	crd, err := os.ReadFile(filepath.Join(root, "examples", "crd.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cluster.Apply(ctx, c.Config, crd); err != nil {
		t.Fatal(err)
	}
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := c.WriteKubeconfig(kubeconfig); err != nil {
		t.Fatal(err)
	}
	// The kubeconfig works for another client (kubectl, when installed).
	if path, err := exec.LookPath("kubectl"); err == nil {
		out, err := exec.Command(path, "--kubeconfig", kubeconfig, "get", "crd", "kopfexamples.kopf.dev", "-o", "name").CombinedOutput()
		if err != nil || !strings.Contains(string(out), "kopfexamples.kopf.dev") {
			t.Errorf("kubectl with the written kubeconfig: %v: %s", err, out)
		}
	}
	pids := controlPlanePIDs(t)
	if len(pids) == 0 {
		t.Fatalf("no etcd or kube-apiserver process is found while running")
	}
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		if _, err := os.Stat(filepath.Join("/proc", pid)); err == nil {
			t.Errorf("process %s is still running after Stop", pid)
		}
	}
}

// controlPlanePIDs lists this process's etcd and kube-apiserver children.
func controlPlanePIDs(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Skip("no /proc to inspect processes")
	}
	self := strings.TrimSpace(strings.Split(readFile("/proc/self/stat"), " ")[0])
	var out []string
	for _, e := range entries {
		stat := readFile(filepath.Join("/proc", e.Name(), "stat"))
		fields := strings.Fields(stat)
		if len(fields) < 4 || fields[3] != self {
			continue
		}
		if strings.Contains(stat, "(etcd)") || strings.Contains(stat, "(kube-apiserver)") {
			out = append(out, e.Name())
		}
	}
	return out
}

func readFile(path string) string {
	data, _ := os.ReadFile(path)
	return string(data)
}
