// Package fleetsplit checks the cluster providers that need a real API
// server: KubeconfigSecrets (Secrets added, changed, relabelled, deleted)
// and Shared (two replicas in one process, each with its own recording
// sink, splitting six clusters; one cut off and healed, one killed: every
// cluster served by exactly one replica at any time).
package fleetsplit

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kopf-go/kopf/e2e/cluster"
	"github.com/kopf-go/kopf/runtime/clusters"
	"github.com/kopf-go/kopf/runtime/clusters/clusterstest"
)

const wait = 30 * time.Second

func kubeconfig(server string) []byte {
	return fmt.Appendf(nil, `apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: %q}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: x, context: {cluster: c, user: u}}]
current-context: x
`, server)
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

// run runs p on sink until the test ends or the returned stop is called.
func run(t *testing.T, ctx context.Context, p clusters.Provider, sink clusters.Sink) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- p.Run(ctx, sink) }()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(wait):
			t.Errorf("Run did not return within %s of its context's end", wait)
		}
	}
	t.Cleanup(stop)
	return stop
}

func TestKubeconfigSecrets(t *testing.T) {
	c := cluster.Start(t)
	ctx := t.Context()
	secrets := kubernetes.NewForConfigOrDie(c.Config).CoreV1().Secrets("default")
	put := func(name string, labels, annotations map[string]string, data []byte) {
		t.Helper()
		s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels, Annotations: annotations}, Data: map[string][]byte{"kubeconfig": data}}
		if old, err := secrets.Get(ctx, name, metav1.GetOptions{}); err == nil {
			s.ResourceVersion = old.ResourceVersion
			_, err = secrets.Update(ctx, s, metav1.UpdateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			return
		}
		if _, err := secrets.Create(ctx, s, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	fleet := map[string]string{"fleet": "yes"}
	put("prod", fleet, nil, kubeconfig("https://prod"))
	put("other", nil, nil, kubeconfig("https://other")) // not selected

	sink := &clusterstest.Sink{}
	run(t, ctx, clusters.KubeconfigSecrets(c.Config, "default", "fleet=yes", clusters.SecretOptions{}), sink)
	sink.Await(t, wait, "prod engaged", hosts(map[string]string{"prod": "https://prod"}))

	put("staging-secret", fleet, map[string]string{clusters.NameAnnotation: "staging"}, kubeconfig("https://staging"))
	sink.Await(t, wait, "staging added, named by its annotation", hosts(map[string]string{"prod": "https://prod", "staging": "https://staging"}))

	put("prod", fleet, nil, kubeconfig("https://prod2"))
	sink.Await(t, wait, "prod changed: engaged again", hosts(map[string]string{"prod": "https://prod2", "staging": "https://staging"}))

	before := len(sink.Records())
	put("prod", fleet, nil, []byte("{{{ not a kubeconfig"))
	put("broken", fleet, nil, []byte("{{{"))
	put("other", fleet, nil, kubeconfig("https://other")) // selected now: the sync after the bad ones
	sink.Await(t, wait, "other labelled: engaged; the bad ones skipped", hosts(map[string]string{"prod": "https://prod2", "staging": "https://staging", "other": "https://other"}))
	for _, r := range sink.Records()[before:] {
		if r.Name != "other" {
			t.Errorf("a bad kubeconfig changed the engagement of %s", r.Name)
		}
	}

	put("other", nil, nil, kubeconfig("https://other"))
	sink.Await(t, wait, "other unlabelled: disengaged", hosts(map[string]string{"prod": "https://prod2", "staging": "https://staging"}))
	if err := secrets.Delete(ctx, "staging-secret", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	sink.Await(t, wait, "staging deleted: disengaged", hosts(map[string]string{"prod": "https://prod2"}))
}

func TestKubeconfigSecretsThatCannotBeListed(t *testing.T) {
	err := clusters.KubeconfigSecrets(&rest.Config{Host: "https://127.0.0.1:1"}, "default", "", clusters.SecretOptions{}).Run(t.Context(), &clusterstest.Sink{})
	if err == nil {
		t.Fatal("no error when the Secrets cannot be listed")
	}
}
