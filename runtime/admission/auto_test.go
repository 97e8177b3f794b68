package admission

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"k8s.io/client-go/rest"

	"github.com/kopf-go/kopf/runtime/registry"
	"github.com/kopf-go/kopf/runtime/settings"
)

// The API servers' certificates of local clusters, recognised as Kopf
// does.
func TestHostOfCertificate(t *testing.T) {
	for _, tc := range []struct {
		name string
		cert x509.Certificate
		want string
	}{
		{"k3s subject", x509.Certificate{Subject: pkix.Name{CommonName: "k3s"}}, K3dHost},
		{"k3s organisation", x509.Certificate{Subject: pkix.Name{CommonName: "kube-apiserver", Organization: []string{"k3s"}}}, K3dHost},
		{"k3s issuer", x509.Certificate{Subject: pkix.Name{CommonName: "kube-apiserver"}, Issuer: pkix.Name{CommonName: "k3s-server-ca@1700000000"}}, K3dHost},
		{"minikube subject", x509.Certificate{Subject: pkix.Name{CommonName: "minikube"}}, MinikubeHost},
		{"minikube issuer", x509.Certificate{Subject: pkix.Name{CommonName: "kube-apiserver"}, Issuer: pkix.Name{CommonName: "minikubeCA"}}, MinikubeHost},
		{"docker desktop", x509.Certificate{Subject: pkix.Name{CommonName: "kube-apiserver"}, DNSNames: []string{"kubernetes", "docker-for-desktop"}}, DockerDesktopHost},
		{"kind", x509.Certificate{Subject: pkix.Name{CommonName: "kube-apiserver"}, Issuer: pkix.Name{CommonName: "kubernetes"}, DNSNames: []string{"kind-control-plane", "localhost"}}, ""},
	} {
		if got := hostOfCertificate(&tc.cert); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// GuessHost reads /version once: a "+k3s" build is K3s's when the
// certificate says nothing.
func TestGuessHostByVersion(t *testing.T) {
	for version, want := range map[string]string{"v1.31.4+k3s1": K3dHost, "v1.35.4": ""} {
		srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/version" {
				http.NotFound(w, r)
				return
			}
			_, _ = io.WriteString(w, `{"major":"1","gitVersion":"`+version+`"}`)
		}))
		got, err := GuessHost(t.Context(), &rest.Config{Host: srv.URL, TLSClientConfig: rest.TLSClientConfig{Insecure: true}})
		srv.Close()
		if err != nil || got != want {
			t.Errorf("%s: %q, %v; want %q", version, got, err, want)
		}
	}
}

// An automatic server is the Service in a cluster, a local server outside
// (the plain one when the cluster is not recognised, or not reachable);
// the port is 9443 behind a Service, free (0 until listening) otherwise.
func TestServerSettingsAuto(t *testing.T) {
	unreachable := &rest.Config{Host: "https://127.0.0.1:1"}
	svc := &settings.WebhookService{Name: "mine", Namespace: "ops"}
	for _, tc := range []struct {
		name      string
		server    settings.WebhookServer
		inCluster bool
		wantSvc   string // "" for a local server
		wantHost  string
		wantPort  int
	}{
		{"auto in a cluster", settings.WebhookServer{Auto: true}, true, DefaultServiceName, "", DefaultPort},
		{"auto in a cluster, its Service", settings.WebhookServer{Auto: true, Service: svc, Port: 8443}, true, "mine", "", 8443},
		{"auto outside", settings.WebhookServer{Auto: true, Service: svc}, false, "", "", 0},
		{"auto outside, its host", settings.WebhookServer{Auto: true, Host: "operator.local", Port: 1234}, false, "", "operator.local", 1234},
		{"a plain server", settings.WebhookServer{}, true, "", "", 0},
		{"a Service", settings.WebhookServer{Service: svc}, false, "mine", "", DefaultPort},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := tc.inCluster
			ws := tc.server
			cfg := Config{Registry: registry.New(), Settings: &settings.Settings{Admission: settings.Admission{Server: &ws}}, InCluster: &in, RESTConfig: unreachable}
			got, err := serverSettings(t.Context(), cfg, slog.New(slog.DiscardHandler))
			if err != nil {
				t.Fatal(err)
			}
			svcName := ""
			if got.Service != nil {
				svcName = got.Service.Name
			}
			if got.Auto || svcName != tc.wantSvc || got.Host != tc.wantHost || got.Port != tc.wantPort {
				t.Errorf("got auto %v, service %q, host %q, port %d; want service %q, host %q, port %d", got.Auto, svcName, got.Host, got.Port, tc.wantSvc, tc.wantHost, tc.wantPort)
			}
		})
	}
}
