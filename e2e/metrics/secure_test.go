package metrics

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	certutil "k8s.io/client-go/util/cert"

	"github.com/kopf-go/kopf"
	"github.com/kopf-go/kopf/envtest"
	"github.com/kopf-go/kopf/kopftest"
)

// The metrics served by default (over HTTPS, behind the API server's
// TokenReview and SubjectAccessReview) answer a request without a token
// 401, one with a token that the API server does not know 401, the token
// of a ServiceAccount that RBAC does not allow to get /metrics 403, and
// that of one bound to a metrics-reader ClusterRole (nonResourceURLs
// /metrics, get) 200 with the page; only /metrics is served. With given
// certificate files, the server presents their certificate.
func TestSecureMetrics(t *testing.T) {
	env := envtest.Start(t, envtest.WithCRDs(filepath.Join("..", "..", "examples", "crd.yaml")))
	cs := kubernetes.NewForConfigOrDie(env.Config)
	ns := namespace(t, env.Config, "secure-metrics")
	denied, allowed := saToken(t, cs, ns, "denied"), saToken(t, cs, ns, "allowed")
	grantMetricsReader(t, cs, ns, "allowed")

	dir := t.TempDir()
	certPEM, keyPEM, err := certutil.GenerateSelfSignedCertKey("127.0.0.1", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"tls.crt": certPEM, "tls.key": keyPEM} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(certPEM)

	for _, tt := range []struct {
		name   string
		opts   []kopf.Option
		client *http.Client
	}{
		{"self-signed", nil, &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}},
		{"given certificate", []kopf.Option{kopf.WithMetricsCert(dir)}, &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			addr := freeAddress(t)
			op := kopftest.Start(t, env.Config, register, append(tt.opts, kopf.WithNamespaces(ns), kopf.WithMetrics(addr))...)
			op.WaitLog(fmt.Sprintf("Serving the metrics on https://%s/metrics.", addr), 10*time.Second)
			for _, c := range []struct {
				what, path, token string
				want              int
			}{
				{"no token", "/metrics", "", http.StatusUnauthorized},
				{"an unknown token", "/metrics", "not-a-token", http.StatusUnauthorized},
				{"a token without the permission", "/metrics", denied, http.StatusForbidden},
				{"a token with the permission", "/metrics", allowed, http.StatusOK},
				{"another path", "/debug/pprof/", allowed, http.StatusNotFound},
			} {
				status, body := get(t, tt.client, "https://"+addr+c.path, c.token)
				if status != c.want {
					t.Errorf("%s: GET %s = %d %q, want %d", c.what, c.path, status, firstLine(body), c.want)
				}
				if c.want == http.StatusOK && !strings.Contains(body, "\ngo_goroutines ") {
					t.Errorf("%s: the page has no go_goroutines:\n%s", c.what, firstLine(body))
				}
			}
			// Plain HTTP is refused: the server speaks TLS only (it answers
			// 400, or the connection is reset before the answer is read).
			if resp, err := http.Get("http://" + addr + "/metrics"); err == nil {
				_ = resp.Body.Close()
				if resp.StatusCode != http.StatusBadRequest {
					t.Errorf("plain HTTP to the HTTPS server: %s, want 400", resp.Status)
				}
			}
		})
	}
}

// The plain mode, an explicit choice, serves the page to anyone.
func TestPlainMetrics(t *testing.T) {
	env := envtest.Start(t, envtest.WithCRDs(filepath.Join("..", "..", "examples", "crd.yaml")))
	ns := namespace(t, env.Config, "plain-metrics")
	addr := freeAddress(t)
	op := kopftest.Start(t, env.Config, register, kopf.WithNamespaces(ns), kopf.WithMetrics(addr), kopf.WithPlainMetrics())
	op.WaitLog(fmt.Sprintf("Serving the metrics on http://%s/metrics.", addr), 10*time.Second)
	if status, body := get(t, http.DefaultClient, "http://"+addr+"/metrics", ""); status != http.StatusOK || !strings.Contains(body, "\ngo_goroutines ") {
		t.Errorf("GET /metrics without a token = %d %q, want 200 and the page", status, firstLine(body))
	}
}

// saToken creates a ServiceAccount and returns a token of it
// (TokenRequest), as a scraper in the cluster has one.
func saToken(t *testing.T, cs kubernetes.Interface, ns, name string) string {
	t.Helper()
	ctx := context.Background()
	if _, err := cs.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	expiry := int64(3600)
	tr, err := cs.CoreV1().ServiceAccounts(ns).CreateToken(ctx, name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &expiry}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return tr.Status.Token
}

// grantMetricsReader binds the ServiceAccount to a ClusterRole that allows
// get on /metrics, as the scaffold's metrics-reader is bound to
// Prometheus's.
func grantMetricsReader(t *testing.T, cs kubernetes.Interface, ns, sa string) {
	t.Helper()
	ctx := context.Background()
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: ns + "-metrics-reader"},
		Rules: []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}}}
	if _, err := cs.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: ns + "-metrics-reader"},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa, Namespace: ns}}}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// get GETs url with the bearer token (none if empty).
func get(t *testing.T, c *http.Client, url, token string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body)
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
