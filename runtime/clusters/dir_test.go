package clusters_test

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/kopf-go/kopf/internal/testutil"
	"github.com/kopf-go/kopf/runtime/clusters"
	"github.com/kopf-go/kopf/runtime/clusters/clusterstest"
)

// kubeconfig is a kubeconfig whose current context is the server's, with
// a CA file relative to the kubeconfig's directory.
func kubeconfig(server string) string {
	return fmt.Sprintf(`apiVersion: v1
kind: Config
clusters:
- name: c
  cluster: {server: %q, certificate-authority: ca.crt}
users:
- name: u
  user: {token: secret}
contexts:
- name: ctx
  context: {cluster: c, user: u}
current-context: ctx
`, server)
}

func write(t *testing.T, dir, file, content string) {
	t.Helper()
	// Written aside and renamed, as a tool (or a volume's swap) would.
	tmp := filepath.Join(dir, "."+file+".tmp")
	if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, file)); err != nil {
		t.Fatal(err)
	}
}

func hosts(want map[string]string) func(map[string]*rest.Config) bool {
	return func(got map[string]*rest.Config) bool {
		if len(got) != len(want) {
			return false
		}
		for n, h := range want {
			if c, ok := got[n]; !ok || c.Host != h {
				return false
			}
		}
		return true
	}
}

func TestKubeconfigDir(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "ca.crt", "not checked until a connection") // its kubeconfigs' CA file; a cluster of its own, "ca", too: skipped
	write(t, dir, "prod-eu.yaml", kubeconfig("https://eu"))
	write(t, dir, "prod-us", kubeconfig("https://us"))
	write(t, dir, "broken.yaml", "clusters: [oops")
	write(t, dir, "nocontext.kubeconfig", "apiVersion: v1\nkind: Config\n")
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "sub"), "nested.yaml", kubeconfig("https://nested"))
	var log testutil.Buffer
	sink := &clusterstest.Sink{}
	run(t, clusters.KubeconfigDir(dir, clusters.DirOptions{Interval: 20 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(&log, nil))}), sink)

	sink.Await(t, wait, "the two good files engaged", hosts(map[string]string{"prod-eu": "https://eu", "prod-us": "https://us"}))
	if ca := sink.Engaged()["prod-eu"].CAFile; ca != filepath.Join(dir, "ca.crt") {
		t.Errorf("the CA file is %q: want it relative to the directory", ca)
	}
	for _, file := range []string{"broken.yaml", "nocontext.kubeconfig", "ca.crt"} {
		if !strings.Contains(log.String(), "The kubeconfig file "+filepath.Join(dir, file)+" is skipped: ") {
			t.Errorf("%s is not logged as skipped:\n%s", file, log.String())
		}
	}

	t.Run("added", func(t *testing.T) {
		write(t, dir, "staging.yml", kubeconfig("https://staging"))
		sink.Await(t, wait, "staging engaged", hosts(map[string]string{"prod-eu": "https://eu", "prod-us": "https://us", "staging": "https://staging"}))
	})
	t.Run("changed", func(t *testing.T) {
		write(t, dir, "prod-eu.yaml", kubeconfig("https://eu2"))
		sink.Await(t, wait, "prod-eu engaged again", hosts(map[string]string{"prod-eu": "https://eu2", "prod-us": "https://us", "staging": "https://staging"}))
	})
	t.Run("broken while engaged: kept", func(t *testing.T) {
		before := len(sink.Records())
		write(t, dir, "staging.yml", "{{{")
		deadline := time.Now().Add(wait)
		for !strings.Contains(log.String(), "staging.yml is skipped") {
			if time.Now().After(deadline) {
				t.Fatalf("the broken file is not logged:\n%s", log.String())
			}
			time.Sleep(10 * time.Millisecond)
		}
		if n := len(sink.Records()); n != before {
			t.Fatalf("a broken file changed the engagements: %v", sink.Records()[before:])
		}
		write(t, dir, "staging.yml", kubeconfig("https://staging2"))
		sink.Await(t, wait, "staging engaged again", hosts(map[string]string{"prod-eu": "https://eu2", "prod-us": "https://us", "staging": "https://staging2"}))
	})
	t.Run("removed", func(t *testing.T) {
		if err := os.Remove(filepath.Join(dir, "prod-us")); err != nil {
			t.Fatal(err)
		}
		sink.Await(t, wait, "prod-us disengaged", hosts(map[string]string{"prod-eu": "https://eu2", "staging": "https://staging2"}))
	})
	t.Run("bad files logged once", func(t *testing.T) {
		if n := strings.Count(log.String(), "broken.yaml is skipped"); n != 1 {
			t.Errorf("broken.yaml logged %d times", n)
		}
	})
}

func TestKubeconfigDirThatCannotBeRead(t *testing.T) {
	err := clusters.KubeconfigDir(filepath.Join(t.TempDir(), "absent"), clusters.DirOptions{}).Run(t.Context(), &clusterstest.Sink{})
	if err == nil {
		t.Fatal("no error for a directory that does not exist")
	}
}
