package deployed

import (
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	kopfadmission "github.com/kopf-go/kopf/runtime/admission"
)

// scrapeMetrics checks the metrics as the Deployment serves them (its port
// named metrics, HTTPS by default, behind the API server's reviews, which
// the operator sends with its ServiceAccount's token and the scaffold's
// metrics-auth ClusterRole): no token 401; the operator's own token, which
// the metrics-reader ClusterRole is not bound to, 403; an admin's 200.
func (r *run) scrapeMetrics(op *operator) {
	r.t.Helper()
	var port int
	for _, p := range op.container.Ports {
		if p.Name == "metrics" {
			port = op.ports[p.ContainerPort]
		}
	}
	if port == 0 {
		r.t.Fatal("the Deployment's container serves no port named metrics in its arguments")
	}
	url := fmt.Sprintf("https://127.0.0.1:%d/metrics", port)
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	for _, c := range []struct {
		who, token string
		want       int
	}{
		{"no token", "", http.StatusUnauthorized},
		{"the operator's token", r.d.token(r), http.StatusForbidden},
		{"an admin's token", shared.Token(), http.StatusOK},
	} {
		req, err := http.NewRequestWithContext(r.t.Context(), http.MethodGet, url, nil)
		if err != nil {
			r.t.Fatal(err)
		}
		if c.token != "" {
			req.Header.Set("Authorization", "Bearer "+c.token)
		}
		resp, err := client.Do(req)
		if err != nil {
			r.t.Fatalf("GET %s with %s: %v", url, c.who, err)
		}
		body, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != c.want {
			line, _, _ := strings.Cut(string(body), "\n")
			r.t.Errorf("GET /metrics with %s: %d %q, want %d", c.who, resp.StatusCode, line, c.want)
		}
	}
}

// token is the ServiceAccount's token in the operator's kubeconfig.
func (d *deployment) token(r *run) string {
	cfg, err := clientcmd.BuildConfigFromFlags("", d.kubeconfig)
	if err != nil {
		r.t.Fatal(err)
	}
	return cfg.BearerToken
}

// checkCertSecretAccess checks what the generated RBAC allows on the
// webhooks' certificate Secret (its private keys), as the API server
// decides (SubjectAccessReview): the operator's ServiceAccount may get and
// update that one Secret, and create Secrets (RBAC cannot restrict a
// create by name), but not read any other, nor list or watch them; another
// ServiceAccount of the namespace may do nothing with it.
func (r *run) checkCertSecretAccess() {
	r.t.Helper()
	cs := kubernetes.NewForConfigOrDie(shared.Config)
	other := "system:serviceaccount:" + namespace + ":default"
	secret := kopfadmission.DefaultCertSecret
	for _, c := range []struct {
		user, verb, name string
		want             bool
	}{
		{r.d.user(), "get", secret, true},
		{r.d.user(), "update", secret, true},
		{r.d.user(), "create", "", true},
		{r.d.user(), "get", "another-secret", false},
		{r.d.user(), "update", "another-secret", false},
		{r.d.user(), "delete", secret, false},
		{r.d.user(), "list", "", false},
		{r.d.user(), "watch", "", false},
		{other, "get", secret, false},
		{other, "list", "", false},
	} {
		sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User: c.user, Groups: []string{"system:serviceaccounts", "system:serviceaccounts:" + namespace, "system:authenticated"},
			ResourceAttributes: &authorizationv1.ResourceAttributes{Namespace: namespace, Verb: c.verb, Resource: "secrets", Name: c.name},
		}}
		res, err := cs.AuthorizationV1().SubjectAccessReviews().Create(r.t.Context(), sar, metav1.CreateOptions{})
		if err != nil {
			r.t.Fatal(err)
		}
		if res.Status.Allowed != c.want {
			r.t.Errorf("%s may %s secrets %q: %v, want %v (%s)", c.user, c.verb, c.name, res.Status.Allowed, c.want, res.Status.Reason)
		}
	}
	// The operator made its certificate there, with those permissions.
	s, err := cs.CoreV1().Secrets(namespace).Get(r.t.Context(), secret, metav1.GetOptions{})
	if err != nil || len(s.Data["tls.key"]) == 0 || len(s.Data["ca.key"]) == 0 {
		r.t.Errorf("the certificate Secret %s: %v, want the keys tls.key and ca.key", secret, err)
	}
}
