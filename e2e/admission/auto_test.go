package admission

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kopf-go/kopf"
	"github.com/kopf-go/kopf/kopftest"
)

// TestAutoServer: the automatic server (kopf.WebhookAutoServer) outside a
// cluster, with envtest's API server on this machine: not a recognised
// local cluster, so the plain local server, on a free port of every
// interface, reached at 127.0.0.1; the API server calls it.
func TestAutoServer(t *testing.T) {
	t.Setenv("KUBERNETES_SERVICE_HOST", "") // outside a cluster, whatever runs the test
	env := startEnv(t)
	refuse := kopf.AdmissionFunc(func(context.Context, kopf.AdmissionKwargs) error {
		return kopf.NewAdmissionError("The automatic server refuses it.", 400)
	})
	op := kopftest.Start(t, env.Config, func(r *kopf.Registry) error {
		return r.AddWebhook(kopf.WebhookHandler{ID: "refuse", Kind: kopf.WebhookValidating, Selector: examples, Fn: refuse})
	}, kopf.WithWebhookServer(kopf.WebhookAutoServer(kopf.WebhookServer{})), kopf.WithManagedWebhooks(managed))
	op.WaitReady(60 * time.Second)
	if !strings.Contains(op.Logs(), "Cluster detection failed, running a simple local server.") {
		t.Errorf("no cluster detection is logged:\n%s", op.Logs())
	}
	cfg, err := kubernetes.NewForConfigOrDie(env.Config).AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(t.Context(), managed, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Webhooks) != 1 || cfg.Webhooks[0].ClientConfig.URL == nil {
		t.Fatalf("the webhooks: %+v", cfg.Webhooks)
	}
	u, err := url.Parse(*cfg.Webhooks[0].ClientConfig.URL)
	if err != nil || u.Hostname() != "127.0.0.1" || u.Port() == "" || u.Port() == "9443" || u.Path != "/refuse" {
		t.Errorf("the webhook's URL: %s (%v), want https://127.0.0.1:<a free port>/refuse", *cfg.Webhooks[0].ClientConfig.URL, err)
	}
	_, err = client(t, env.Config, nil).Namespace("default").Create(t.Context(), example("auto", nil, nil), metav1.CreateOptions{})
	if err == nil || !strings.Contains(err.Error(), "The automatic server refuses it.") {
		t.Errorf("creating an object: %v, want the handler's refusal", err)
	}
}
