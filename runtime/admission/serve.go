package admission

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	admissionregv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	admissionregv1client "k8s.io/client-go/kubernetes/typed/admissionregistration/v1"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"

	"github.com/kopf-go/kopf/runtime/kwargs"
	"github.com/kopf-go/kopf/runtime/leases"
	"github.com/kopf-go/kopf/runtime/registry"
	"github.com/kopf-go/kopf/runtime/resources"
	"github.com/kopf-go/kopf/runtime/settings"
)

// Defaults of settings.WebhookServer.
const (
	DefaultPort          = 9443
	DefaultServiceName   = "kopf-webhooks"
	DefaultCertSecret    = "kopf-webhook-cert"
	DefaultCertValidity  = 90 * 24 * time.Hour
	DefaultCheckInterval = time.Minute
)

// The hosts of Kopf's presets of WebhookServer (WebhookK3dServer,
// WebhookMinikubeServer, WebhookDockerDesktopServer): the name by which
// pods of such a cluster reach the machine that runs it.
const (
	K3dHost           = "host.k3d.internal"
	MinikubeHost      = "host.minikube.internal"
	DockerDesktopHost = "host.docker.internal"
)

// serviceAccountNamespace is where a pod finds its namespace.
const serviceAccountNamespace = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// Config is what Start needs.
type Config struct {
	Registry *registry.Registry
	Settings *settings.Settings
	Logger   *slog.Logger
	// RESTConfig reaches the API server: for the certificate Secret, the
	// managed configurations and the replicas' leases.
	RESTConfig *rest.Config
	// Discover returns the cluster's resources (for the managed
	// configurations' rules and for matching handlers' selectors).
	Discover func(ctx context.Context) ([]resources.Resource, error)
	// Memo and Context are the Handler's.
	Memo    kwargs.Memo
	Context func(context.Context) context.Context
	// InCluster says whether the operator runs in a cluster (nil: whether
	// KUBERNETES_SERVICE_HOST is set): the default server is then a
	// Service.
	InCluster *bool
}

// Server is a running admission webhook server.
type Server struct {
	// URL is the server's root as the API server reaches it (for a local
	// server), "" for a Service.
	URL string
	// Addr is the listening address.
	Addr  net.Addr
	certs *certStore
	stop  func()
}

// CABundle returns the CA bundle that verifies the server's certificate.
func (s *Server) CABundle() []byte { return s.certs.CABundle() }

// Stop stops the server: the managed configurations are cleaned up (see
// the package doc), then the listener closed and the requests in flight
// given 5 s to finish.
func (s *Server) Stop() { s.stop() }

// ErrNoServer is Start's error when there are webhook handlers and no
// server is configured outside of a cluster (Kopf's wording).
var ErrNoServer = errors.New("Admission handlers exist, but no admission server/tunnel is configured in `settings.admission.server`. More: https://docs.kopf.dev/en/stable/admission/")

// Start starts the HTTPS server of the registry's webhook handlers as
// settings.Admission says, with its certificate (generated and kept in a
// Secret, or read from files) renewed or reloaded in the background, and,
// with settings.Admission.Managed, the managed webhook configurations; it
// returns once the server listens and the configurations are applied
// once. It returns nil and no error if the registry has no webhook
// handlers.
func Start(ctx context.Context, cfg Config) (*Server, error) {
	if !cfg.Registry.HasWebhooks() {
		return nil, nil
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.Default()
	}
	adm := cfg.Settings.Admission
	inCluster := os.Getenv("KUBERNETES_SERVICE_HOST") != ""
	if cfg.InCluster != nil {
		inCluster = *cfg.InCluster
	}
	var ws settings.WebhookServer
	switch {
	case adm.Server != nil:
		ws = *adm.Server
	case inCluster:
		ws = settings.WebhookServer{Service: &settings.WebhookService{Name: DefaultServiceName}}
	default:
		return nil, ErrNoServer
	}
	podNamespace := "default"
	if data, err := os.ReadFile(serviceAccountNamespace); err == nil && strings.TrimSpace(string(data)) != "" {
		podNamespace = strings.TrimSpace(string(data))
	}
	if ws.Port == 0 {
		ws.Port = DefaultPort
	}
	if ws.Service != nil {
		svc := *ws.Service
		if svc.Namespace == "" {
			svc.Namespace = podNamespace
		}
		if svc.Port == 0 {
			svc.Port = 443
		}
		ws.Service = &svc
	}
	if ws.CertNamespace == "" {
		ws.CertNamespace = podNamespace
		if ws.Service != nil {
			ws.CertNamespace = ws.Service.Namespace
		}
	}
	if ws.CertSecret == "" {
		ws.CertSecret = DefaultCertSecret
		if adm.Managed != "" {
			ws.CertSecret = adm.Managed + "-cert"
		}
	}
	if ws.CertValidity <= 0 {
		ws.CertValidity = DefaultCertValidity
	}
	if ws.CheckInterval <= 0 {
		ws.CheckInterval = DefaultCheckInterval
	}
	host := ws.Host
	if host == "" {
		host = accessible(ws.Addr)
	}
	hosts := []string{host}
	if a := accessible(ws.Addr); a != host {
		hosts = append(hosts, a)
	}
	if s := ws.Service; s != nil {
		hosts = []string{s.Name + "." + s.Namespace + ".svc", s.Name + "." + s.Namespace + ".svc.cluster.local", s.Name + "." + s.Namespace, s.Name}
	}
	hosts = append(hosts, ws.ExtraSANs...)

	hc, err := rest.HTTPClientFor(cfg.RESTConfig)
	if err != nil {
		return nil, fmt.Errorf("creating the HTTP client: %w", err)
	}
	core, err := corev1client.NewForConfigAndClient(cfg.RESTConfig, hc)
	if err != nil {
		return nil, err
	}

	bg, cancelBG := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	fail := func(err error) (*Server, error) {
		cancelBG()
		wg.Wait()
		return nil, err
	}

	// The certificate, and its renewal or reloading.
	store := &certStore{}
	if ws.CertFile != "" || ws.KeyFile != "" {
		fc := &fileCerts{certFile: ws.CertFile, keyFile: ws.KeyFile, caFile: ws.CAFile}
		kp, _, err := fc.load()
		if err != nil {
			return fail(err)
		}
		store.set(kp)
		logger.Debug("Using a provided certificate for HTTPS.")
		wg.Add(1)
		go func() {
			defer wg.Done()
			every(bg, ws.CheckInterval, func() {
				kp, changed, err := fc.load()
				switch {
				case err != nil:
					logger.Error(fmt.Sprintf("The webhook certificate cannot be reloaded: %s", err))
				case changed:
					store.set(kp)
					logger.Info("Reloaded the webhook certificate: its files have changed.")
				}
			})
		}()
	} else {
		sc := &secretCerts{client: core, namespace: ws.CertNamespace, name: ws.CertSecret, hosts: hosts, validity: ws.CertValidity, logger: logger, now: time.Now}
		// The API server may be unreachable at start, as the operator
		// allows: the certificate is then made as soon as it answers (the
		// server refuses TLS handshakes meanwhile); only a refusal by
		// RBAC fails the operator.
		kp, err := sc.ensure(ctx)
		switch {
		case apierrors.IsForbidden(err):
			return fail(err)
		case err != nil:
			logger.Error(fmt.Sprintf("The webhook certificate cannot be made yet: %s", err))
		default:
			store.set(kp)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			retry := time.Second
			for {
				wait := ws.CheckInterval
				if store.cur.Load() == nil {
					wait, retry = min(retry, ws.CheckInterval), retry*2
				}
				select {
				case <-bg.Done():
					return
				case <-time.After(wait):
				}
				kp, err := sc.ensure(bg)
				if err != nil {
					if bg.Err() == nil {
						logger.Error(fmt.Sprintf("The webhook certificate cannot be checked for renewal: %s", err))
					}
					continue
				}
				if store.set(kp) {
					logger.Info(fmt.Sprintf("Serving the renewed webhook certificate, valid until %s.", kp.leaf.NotAfter.Format(time.RFC3339)))
				}
			}
		}()
	}

	// The server.
	handler := &Handler{
		Registry:        cfg.Registry,
		Root:            ws.Path,
		Logger:          logger,
		Memo:            cfg.Memo,
		Context:         cfg.Context,
		Timeout:         ws.Timeout,
		MaxRequestBytes: ws.MaxRequestBytes,
	}
	var resolved atomic.Pointer[[]resources.Resource]
	handler.Resources = func() []resources.Resource {
		if p := resolved.Load(); p != nil {
			return *p
		}
		return nil
	}
	if cfg.Discover != nil {
		if found, err := cfg.Discover(ctx); err == nil {
			resolved.Store(&found)
		} else {
			logger.Debug(fmt.Sprintf("The resources cannot be discovered for the webhooks: %s", err))
		}
	}
	timeout := ws.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(ws.Addr, strconv.Itoa(ws.Port)))
	if err != nil {
		return fail(fmt.Errorf("listening for webhooks: %w", err))
	}
	srv := &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       timeout + 10*time.Second,
		WriteTimeout:      timeout + 10*time.Second,
		IdleTimeout:       90 * time.Second,
		TLSConfig: &tls.Config{
			MinVersion:     tls.VersionTLS12,
			GetCertificate: store.GetCertificate,
			// Kopf's sslpeer: the API server's client certificate, if
			// it presents one; not verified (authentication is the
			// API server's business).
			ClientAuth: tls.RequestClientCert,
		},
		ErrorLog: slog.NewLogLogger(logger.Handler(), slog.LevelDebug),
	}
	served := make(chan struct{})
	go func() {
		defer close(served)
		if err := srv.ServeTLS(ln, "", ""); err != nil && !errors.Is(err, http.ErrServerClosed) {
			logger.Error(fmt.Sprintf("The webhook server has failed: %s", err))
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	logger.Debug(fmt.Sprintf("Listening for webhooks at %s", buildURL("https", "*", port, ws.Path)))
	s := &Server{Addr: ln.Addr(), certs: store}
	clientConfig := func() admissionregv1.WebhookClientConfig {
		cc := admissionregv1.WebhookClientConfig{CABundle: store.CABundle()}
		if svc := ws.Service; svc != nil {
			path := ws.Path
			port := svc.Port
			cc.Service = &admissionregv1.ServiceReference{Namespace: svc.Namespace, Name: svc.Name, Path: &path, Port: &port}
		} else {
			u := s.URL
			cc.URL = &u
		}
		return cc
	}
	if ws.Service == nil {
		s.URL = buildURL("https", host, port, ws.Path)
		logger.Debug(fmt.Sprintf("Accessing the webhooks at %s", s.URL))
	}

	var mgr *manager
	if adm.Managed != "" {
		arc, err := admissionregv1client.NewForConfigAndClient(cfg.RESTConfig, hc)
		if err != nil {
			_ = srv.Close()
			<-served
			return fail(err)
		}
		coord, err := coordinationv1client.NewForConfigAndClient(cfg.RESTConfig, hc)
		if err != nil {
			_ = srv.Close()
			<-served
			return fail(err)
		}
		mgr = &manager{
			name:         adm.Managed,
			registry:     cfg.Registry,
			configs:      arc,
			leases:       coord,
			namespace:    ws.CertNamespace,
			identity:     replicaIdentity(cfg.Settings),
			discover:     cfg.Discover,
			clientConfig: clientConfig,
			interval:     ws.CheckInterval,
			logger:       logger,
			wake:         make(chan struct{}, 1),
			onFound:      func(found []resources.Resource) { resolved.Store(&found) },
		}
		store.onCABundle(func([]byte) { mgr.poke() })
		if err := mgr.start(ctx); err != nil {
			_ = srv.Close()
			<-served
			return fail(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			mgr.run(bg)
		}()
	}
	var once sync.Once
	s.stop = func() {
		once.Do(func() {
			cancelBG()
			wg.Wait() // the manager has cleaned up while the server served
			shutdown, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
			defer cancel()
			if err := srv.Shutdown(shutdown); err != nil {
				_ = srv.Close()
			}
			<-served
		})
	}
	return s, nil
}

// every calls fn every interval until ctx is done.
func every(ctx context.Context, interval time.Duration, fn func()) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			fn()
		}
	}
}

// accessible turns a listening address into one that can be reached
// (Kopf's _get_accessible_addr): every interface is the loopback.
func accessible(addr string) string {
	if addr == "" {
		return "127.0.0.1"
	}
	if ip := net.ParseIP(addr); ip != nil && ip.IsUnspecified() {
		if ip.To4() != nil {
			return "127.0.0.1"
		}
		return "::1"
	}
	return addr
}

// buildURL is Kopf's _build_url.
func buildURL(scheme, host string, port int, path string) string {
	if ip := net.ParseIP(host); ip != nil && ip.To4() == nil {
		host = "[" + host + "]"
	}
	netloc := host
	if !(scheme == "https" && port == 443) && !(scheme == "http" && port == 80) {
		netloc = host + ":" + strconv.Itoa(port)
	}
	return (&url.URL{Scheme: scheme, Host: netloc, Path: path}).String()
}

// replicaIdentity is this replica's identity in its Lease: the peering
// identity if one is set, else Kopf's detect_own_id.
func replicaIdentity(s *settings.Settings) string {
	if s != nil && s.Peering.Identity != "" {
		return s.Peering.Identity
	}
	return leases.DetectOwnID(false)
}
