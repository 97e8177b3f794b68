package admission

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/client-go/rest"

	"github.com/kopf-go/kopf/internal/testutil"
	"github.com/kopf-go/kopf/runtime/kwargs"
	"github.com/kopf-go/kopf/runtime/logging"
	"github.com/kopf-go/kopf/runtime/registry"
	"github.com/kopf-go/kopf/runtime/settings"
)

// writeCerts writes a new CA, certificate and key for 127.0.0.1 into dir.
func writeCerts(t *testing.T, dir string) []byte {
	t.Helper()
	sc := &secretCerts{hosts: []string{"127.0.0.1"}, validity: time.Hour, now: time.Now}
	data, err := sc.generate(nil)
	if err != nil {
		t.Fatal(err)
	}
	// Written aside and renamed, as a mounted Secret changes; the
	// certificate last, so that a reload which reads the new certificate
	// (read first) reads the new key and CA too.
	for _, f := range []struct{ name, key string }{{"ca.crt", secretCACert}, {"tls.key", secretTLSKey}, {"tls.crt", secretTLSCert}} {
		name, key := f.name, f.key
		tmp := filepath.Join(dir, "."+name)
		if err := os.WriteFile(tmp, data[key], 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	return data[secretCACert]
}

// TestStartWithCertFiles: the HTTPS server of Start answers reviews with
// the given certificate, and serves new files without a restart.
func TestStartWithCertFiles(t *testing.T) {
	dir := t.TempDir()
	ca := writeCerts(t, dir)
	reg := registry.New()
	if err := reg.AddWebhook(registry.WebhookHandler{ID: "check", Selector: examples, Kind: registry.WebhookValidating,
		Fn: func(context.Context, *kwargs.Admission) error { return NewError("no", 403) }}); err != nil {
		t.Fatal(err)
	}
	s := &settings.Settings{Admission: settings.Admission{Server: &settings.WebhookServer{
		Addr: "127.0.0.1", Port: freePortT(t),
		CertFile: filepath.Join(dir, "tls.crt"), KeyFile: filepath.Join(dir, "tls.key"), CAFile: filepath.Join(dir, "ca.crt"),
		CheckInterval: 20 * time.Millisecond,
	}}}
	srv, err := Start(t.Context(), Config{Registry: reg, Settings: s, Logger: slog.New(slog.DiscardHandler), RESTConfig: &rest.Config{Host: "https://127.0.0.1:1"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	if !bytes.Equal(srv.CABundle(), ca) {
		t.Error("the CA bundle is not the CA file")
	}
	if !strings.HasPrefix(srv.URL, "https://127.0.0.1:") {
		t.Errorf("URL = %s", srv.URL)
	}
	client := func(ca []byte) *http.Client {
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(ca)
		return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, DisableKeepAlives: true}}
	}
	resp, err := client(ca).Post(srv.URL+"/check", "application/json", strings.NewReader(review("CREATE", "", example, "")))
	if err != nil {
		t.Fatal(err)
	}
	var out admissionv1.AdmissionReview
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if out.Response == nil || out.Response.Allowed || out.Response.Result.Code != 403 {
		t.Fatalf("response: %+v", out.Response)
	}

	// New files: served within a few intervals, by the same server.
	ca2 := writeCerts(t, dir)
	deadline := time.Now().Add(5 * time.Second)
	for {
		resp, err := client(ca2).Post(srv.URL+"/check", "application/json", strings.NewReader(review("CREATE", "", example, "")))
		if err == nil {
			_ = resp.Body.Close()
			break
		}
		var unknown x509.UnknownAuthorityError
		if !errors.As(err, &unknown) && !strings.Contains(err.Error(), "certificate") {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the new certificate is not served: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !bytes.Equal(srv.CABundle(), ca2) {
		t.Error("the CA bundle is not the new CA file")
	}
}

func TestStartWithoutServer(t *testing.T) {
	reg := registry.New()
	if _, err := Start(t.Context(), Config{Registry: reg, Settings: &settings.Settings{}}); err != nil {
		t.Errorf("no webhooks: %v", err)
	}
	if err := reg.AddWebhook(registry.WebhookHandler{ID: "check", Selector: examples, Kind: registry.WebhookValidating,
		Fn: func(context.Context, *kwargs.Admission) error { return nil }}); err != nil {
		t.Fatal(err)
	}
	outside := false
	if _, err := Start(t.Context(), Config{Registry: reg, Settings: &settings.Settings{}, InCluster: &outside}); !errors.Is(err, ErrNoServer) {
		t.Errorf("webhooks and no server outside of a cluster: %v, want ErrNoServer", err)
	}
}

func freePortT(t *testing.T) int {
	t.Helper()
	ln, err := (&net.ListenConfig{}).Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// TestStartWithTheAPIServerDown: the operator starts (as it does without
// webhooks); the certificate is made once the API server answers.
func TestStartWithTheAPIServerDown(t *testing.T) {
	reg := registry.New()
	if err := reg.AddWebhook(registry.WebhookHandler{ID: "check", Selector: examples, Kind: registry.WebhookValidating,
		Fn: func(context.Context, *kwargs.Admission) error { return nil }}); err != nil {
		t.Fatal(err)
	}
	var logs testutil.Buffer
	s := &settings.Settings{Admission: settings.Admission{
		Server:  &settings.WebhookServer{Addr: "127.0.0.1", Port: freePortT(t), CheckInterval: time.Hour},
		Managed: "auto.kopf.dev",
	}}
	srv, err := Start(t.Context(), Config{Registry: reg, Settings: s, Logger: logging.New(&logs, logging.Plain, slog.LevelDebug),
		RESTConfig: &rest.Config{Host: "https://127.0.0.1:1", Timeout: 2 * time.Second}})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	defer srv.Stop()
	if srv.CABundle() != nil {
		t.Error("a CA bundle without an API server")
	}
	if !strings.Contains(logs.String(), "The webhook certificate cannot be made yet:") {
		t.Errorf("the log:\n%s", logs.String())
	}
}

// TestStartWithHandlersOnly: Config.Handlers start the server without
// webhook handlers, are served at <root>/<name> next to the webhooks,
// and ClientConfig and OnCABundle tell how the API server reaches them.
func TestStartWithHandlersOnly(t *testing.T) {
	dir := t.TempDir()
	ca := writeCerts(t, dir)
	s := &settings.Settings{Admission: settings.Admission{Server: &settings.WebhookServer{
		Addr: "127.0.0.1", Port: freePortT(t), Path: "/hooks",
		CertFile: filepath.Join(dir, "tls.crt"), KeyFile: filepath.Join(dir, "tls.key"), CAFile: filepath.Join(dir, "ca.crt"),
		CheckInterval: 20 * time.Millisecond,
	}}}
	extra := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte("extra at " + r.URL.Path)) })
	srv, err := Start(t.Context(), Config{Registry: registry.New(), Settings: s, Logger: slog.New(slog.DiscardHandler),
		RESTConfig: &rest.Config{Host: "https://127.0.0.1:1"}, Handlers: map[string]http.Handler{"convert": extra}})
	if err != nil || srv == nil {
		t.Fatalf("Start: %v, %v", srv, err)
	}
	t.Cleanup(srv.Stop)
	cc := srv.ClientConfig("convert")
	if cc.URL == nil || *cc.URL != srv.URL+"/convert" || !bytes.Equal(cc.CABundle, ca) || cc.Service != nil {
		t.Errorf("client config: %+v (server at %s)", cc, srv.URL)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, DisableKeepAlives: true}}
	for path, want := range map[string]string{"/hooks/convert": "extra at /hooks/convert", "/hooks/other": `No webhook handler "other" serves`} {
		resp, err := client.Post("https://"+srv.Addr.String()+path, "application/json", strings.NewReader(review("CREATE", "", example, "")))
		if err != nil {
			t.Fatal(err)
		}
		var body bytes.Buffer
		_, _ = body.ReadFrom(resp.Body)
		_ = resp.Body.Close()
		if !strings.Contains(body.String(), want) {
			t.Errorf("POST %s: %d %q, want %q", path, resp.StatusCode, body.String(), want)
		}
	}
	changed := make(chan []byte, 1)
	srv.OnCABundle(func(b []byte) {
		select {
		case changed <- b:
		default:
		}
	})
	ca2 := writeCerts(t, dir)
	select {
	case got := <-changed:
		if !bytes.Equal(got, ca2) {
			t.Error("OnCABundle: not the new CA")
		}
	case <-time.After(5 * time.Second):
		t.Error("OnCABundle: not called for a new CA")
	}
}
