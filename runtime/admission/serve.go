package admission

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
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

// Defaults of settings.WebhookServer. DefaultPort is the listening port of
// a server behind a Service (the Service's target port, which kopf-gen's
// manifests name); a server reached by URL listens on a free port unless
// given one.
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
	// Identity is this replica's in its Lease; "": the peering identity
	// if one is set, else Kopf's detect_own_id.
	Identity string
	// Memo and Context are the Handler's.
	Memo    kwargs.Memo
	Context func(context.Context) context.Context
	// InCluster says whether the operator runs in a cluster (nil: whether
	// KUBERNETES_SERVICE_HOST is set): the default server is then a
	// Service.
	InCluster *bool
	// Handlers are served by the same server next to the webhooks, each
	// at <root>/<its name> (e.g. package conversion's Handler at
	// <root>/convert): that path is then not a webhook handler's id.
	// The server starts if the registry has webhook handlers or if there
	// are Handlers.
	Handlers map[string]http.Handler
	// Stamp, if set, is the operator's own mutating webhook that labels
	// objects at their creation (sharding's bucket label), served at
	// <root>/<StampID> and written into the managed configuration (see
	// Stamp); only with settings.Admission.Managed and webhook handlers.
	Stamp *Stamp
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
	// clientConfig is how the API server reaches the server's root.
	clientConfig func() admissionregv1.WebhookClientConfig
}

// CABundle returns the CA bundle that verifies the server's certificate.
func (s *Server) CABundle() []byte { return s.certs.CABundle() }

// ClientConfig is how the API server reaches <root>/<name> of the server
// (one of Config.Handlers): its Service or its URL, with the CA bundle of
// now (empty while there is no certificate yet).
func (s *Server) ClientConfig(name string) admissionregv1.WebhookClientConfig {
	return withHandlerID(s.clientConfig(), name)
}

// OnCABundle registers fn to be called with every new CA bundle (the
// certificate generated, renewed, or its files changed).
func (s *Server) OnCABundle(fn func(caBundle []byte)) { s.certs.onCABundle(fn) }

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
// handlers and there are no Config.Handlers.
func Start(ctx context.Context, cfg Config) (*Server, error) {
	if !cfg.Registry.HasWebhooks() && len(cfg.Handlers) == 0 {
		return nil, nil
	}
	if cfg.Stamp != nil && slices.ContainsFunc(cfg.Registry.WebhookHandlers(""), func(h *registry.WebhookHandler) bool { return h.ID == StampID }) {
		return nil, fmt.Errorf("the webhook id %q is the bucket stamp's: give the handler another id", StampID)
	}
	st := &startup{cfg: cfg, logger: cfg.Logger, store: &certStore{}}
	if st.logger == nil {
		st.logger = slog.Default()
	}
	ws, err := serverSettings(ctx, cfg, st.logger)
	if err != nil {
		return nil, err
	}
	st.ws = ws
	if st.hc, err = rest.HTTPClientFor(cfg.RESTConfig); err != nil {
		return nil, fmt.Errorf("creating the HTTP client: %w", err)
	}
	st.bg, st.cancelBG = context.WithCancel(context.WithoutCancel(ctx))
	if err := st.startCertificate(ctx); err != nil {
		return st.fail(err)
	}
	s, err := st.serve(ctx)
	if err != nil {
		return st.fail(err)
	}
	if err := st.startManager(ctx, s); err != nil {
		s.stop()
		return nil, err
	}
	return s, nil
}

// startup is what Start's steps share.
type startup struct {
	cfg      Config
	ws       settings.WebhookServer // with its defaults
	logger   *slog.Logger
	hc       *http.Client
	store    *certStore
	resolved atomic.Pointer[[]resources.Resource] // for the handlers' selectors

	bg       context.Context // the background work's: until the server stops
	cancelBG context.CancelFunc
	wg       sync.WaitGroup // the background work
}

// fail stops the background work started so far.
func (st *startup) fail(err error) (*Server, error) {
	st.cancelBG()
	st.wg.Wait()
	return nil, err
}

// serverSettings is the webhook server that settings.Admission says, with
// its defaults: an automatic one resolved for the cluster at hand; the
// port 9443 behind a Service (which names it as its target), a free one
// for a server reached by URL.
func serverSettings(ctx context.Context, cfg Config, logger *slog.Logger) (settings.WebhookServer, error) {
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
		return ws, ErrNoServer
	}
	if ws.Auto {
		ws = autoServer(ctx, ws, inCluster, cfg.RESTConfig, logger)
	}
	podNamespace := "default"
	if data, err := os.ReadFile(serviceAccountNamespace); err == nil && strings.TrimSpace(string(data)) != "" {
		podNamespace = strings.TrimSpace(string(data))
	}
	if ws.Service != nil {
		if ws.Port == 0 {
			ws.Port = DefaultPort
		}
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
		// One name whatever the configurations' (not "<managed>-cert"):
		// the Role that kopf-gen writes grants get and update on this
		// Secret alone (resourceNames), and cannot know the managed name.
		ws.CertSecret = DefaultCertSecret
	}
	if ws.CertValidity <= 0 {
		ws.CertValidity = DefaultCertValidity
	}
	if ws.CheckInterval <= 0 {
		ws.CheckInterval = DefaultCheckInterval
	}
	return ws, nil
}

// hosts are the host name by which the API server reaches the server, and
// every name of the generated certificate.
func hosts(ws settings.WebhookServer) (string, []string) {
	host := ws.Host
	if host == "" {
		host = accessible(ws.Addr)
	}
	names := []string{host}
	if a := accessible(ws.Addr); a != host {
		names = append(names, a)
	}
	if s := ws.Service; s != nil {
		names = []string{s.Name + "." + s.Namespace + ".svc", s.Name + "." + s.Namespace + ".svc.cluster.local", s.Name + "." + s.Namespace, s.Name}
	}
	return host, append(names, ws.ExtraSANs...)
}

// startCertificate loads the certificate (files or the Secret) and keeps
// it reloaded or renewed in the background.
func (st *startup) startCertificate(ctx context.Context) error {
	if st.ws.CertFile != "" || st.ws.KeyFile != "" {
		return st.watchCertFiles()
	}
	return st.keepCertSecret(ctx)
}

// watchCertFiles serves the given certificate files, reloaded when they
// change.
func (st *startup) watchCertFiles() error {
	ws, logger, store := st.ws, st.logger, st.store
	fc := &fileCerts{certFile: ws.CertFile, keyFile: ws.KeyFile, caFile: ws.CAFile}
	kp, _, err := fc.load()
	if err != nil {
		return err
	}
	store.set(kp)
	logger.Debug("Using a provided certificate for HTTPS.")
	st.wg.Go(func() { every(st.bg, ws.CheckInterval, func() { fc.reload(logger, store.set) }) })
	return nil
}

// keepCertSecret serves the certificate of the Secret shared by the
// replicas, made if missing and renewed in the background.
func (st *startup) keepCertSecret(ctx context.Context) error {
	core, err := corev1client.NewForConfigAndClient(st.cfg.RESTConfig, st.hc)
	if err != nil {
		return err
	}
	_, names := hosts(st.ws)
	ws, logger := st.ws, st.logger
	sc := &secretCerts{client: core, namespace: ws.CertNamespace, name: ws.CertSecret, hosts: names, validity: ws.CertValidity, logger: logger, now: time.Now}
	// The API server may be unreachable at start, as the operator allows:
	// the certificate is then made as soon as it answers (the server
	// refuses TLS handshakes meanwhile); only a refusal by RBAC fails the
	// operator.
	kp, err := sc.ensure(ctx)
	switch {
	case apierrors.IsForbidden(err):
		return err
	case err != nil:
		logger.Error(fmt.Sprintf("The webhook certificate cannot be made yet: %s", err))
	default:
		st.store.set(kp)
	}
	st.wg.Go(func() { st.renewCertSecret(sc) })
	return nil
}

// renewCertSecret checks the Secret every CheckInterval (with a backoff
// from 1 s while there is no certificate yet) until the server stops.
func (st *startup) renewCertSecret(sc *secretCerts) {
	retry := time.Second
	for {
		wait := st.ws.CheckInterval
		if st.store.cur.Load() == nil {
			wait, retry = min(retry, st.ws.CheckInterval), retry*2
		}
		select {
		case <-st.bg.Done():
			return
		case <-time.After(wait):
		}
		kp, err := sc.ensure(st.bg)
		if err != nil {
			if st.bg.Err() == nil {
				st.logger.Error(fmt.Sprintf("The webhook certificate cannot be checked for renewal: %s", err))
			}
			continue
		}
		if st.store.set(kp) {
			st.logger.Info(fmt.Sprintf("Serving the renewed webhook certificate, valid until %s.", kp.leaf.NotAfter.Format(time.RFC3339)))
		}
	}
}

// handler is the Handler of the registry's webhooks, with the resources
// discovered now (and again by the manager).
func (st *startup) handler(ctx context.Context) *Handler {
	cfg, ws := st.cfg, st.ws
	h := &Handler{
		Registry:        cfg.Registry,
		Root:            ws.Path,
		Logger:          st.logger,
		Memo:            cfg.Memo,
		Context:         cfg.Context,
		Timeout:         ws.Timeout,
		MaxRequestBytes: ws.MaxRequestBytes,
	}
	h.Resources = func() []resources.Resource {
		if p := st.resolved.Load(); p != nil {
			return *p
		}
		return nil
	}
	if cfg.Discover != nil {
		if found, err := cfg.Discover(ctx); err == nil {
			st.resolved.Store(&found)
		} else {
			st.logger.Debug(fmt.Sprintf("The resources cannot be discovered for the webhooks: %s", err))
		}
	}
	return h
}

// mux serves the Config.Handlers and the Stamp at <root>/<name>, and the
// webhooks at every other path.
func (st *startup) mux(webhooks *Handler) http.Handler {
	handlers := st.cfg.Handlers
	if st.cfg.Stamp != nil {
		handlers = maps.Clone(handlers)
		if handlers == nil {
			handlers = map[string]http.Handler{}
		}
		max := webhooks.MaxRequestBytes
		if max <= 0 {
			max = DefaultMaxRequestBytes
		}
		handlers[StampID] = &stampHandler{stamp: st.cfg.Stamp, logger: st.logger, max: max}
	}
	if len(handlers) == 0 {
		return webhooks
	}
	root := strings.TrimSuffix(webhooks.Root, "/")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if name, ok := strings.CutPrefix(r.URL.Path, root+"/"); ok {
			if h, ok := handlers[name]; ok {
				h.ServeHTTP(w, r)
				return
			}
		}
		webhooks.ServeHTTP(w, r)
	})
}

// serve listens and serves the webhooks over TLS with the certificate of
// the store; the Server's stop stops the background work (the manager
// cleans up meanwhile), then the server.
func (st *startup) serve(ctx context.Context) (*Server, error) {
	ws, logger := st.ws, st.logger
	timeout := ws.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(ws.Addr, strconv.Itoa(ws.Port)))
	if err != nil {
		return nil, fmt.Errorf("listening for webhooks: %w", err)
	}
	srv := &http.Server{
		Handler:           st.mux(st.handler(ctx)),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       timeout + 10*time.Second,
		WriteTimeout:      timeout + 10*time.Second,
		IdleTimeout:       90 * time.Second,
		TLSConfig: &tls.Config{
			MinVersion:     tls.VersionTLS12,
			GetCertificate: st.store.GetCertificate,
			// Kopf's sslpeer: the API server's client certificate, if it
			// presents one; not verified (authentication is the API
			// server's business).
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
	s := &Server{Addr: ln.Addr(), certs: st.store}
	s.clientConfig = func() admissionregv1.WebhookClientConfig { return st.clientConfig(s) }
	if ws.Service == nil {
		host, _ := hosts(ws)
		s.URL = buildURL("https", host, port, ws.Path)
		logger.Debug(fmt.Sprintf("Accessing the webhooks at %s", s.URL))
	}
	var once sync.Once
	s.stop = func() {
		once.Do(func() {
			st.cancelBG()
			st.wg.Wait() // the manager has cleaned up while the server served
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

// clientConfig is how the API server reaches the server s: its Service or
// its URL, with the CA bundle of now.
func (st *startup) clientConfig(s *Server) admissionregv1.WebhookClientConfig {
	cc := admissionregv1.WebhookClientConfig{CABundle: st.store.CABundle()}
	if svc := st.ws.Service; svc != nil {
		path := st.ws.Path
		port := svc.Port
		cc.Service = &admissionregv1.ServiceReference{Namespace: svc.Namespace, Name: svc.Name, Path: &path, Port: &port}
	} else {
		u := s.URL
		cc.URL = &u
	}
	return cc
}

// startManager applies the managed configurations once and keeps them
// (and this replica's Lease) in the background, if they are managed.
func (st *startup) startManager(ctx context.Context, s *Server) error {
	name := st.cfg.Settings.Admission.Managed
	if name == "" || !st.cfg.Registry.HasWebhooks() {
		return nil
	}
	arc, err := admissionregv1client.NewForConfigAndClient(st.cfg.RESTConfig, st.hc)
	if err != nil {
		return err
	}
	coord, err := coordinationv1client.NewForConfigAndClient(st.cfg.RESTConfig, st.hc)
	if err != nil {
		return err
	}
	mgr := &manager{
		name:         name,
		registry:     st.cfg.Registry,
		configs:      arc,
		leases:       coord,
		namespace:    st.ws.CertNamespace,
		identity:     replicaIdentity(st.cfg.Identity, st.cfg.Settings),
		discover:     st.cfg.Discover,
		clientConfig: func() admissionregv1.WebhookClientConfig { return st.clientConfig(s) },
		interval:     st.ws.CheckInterval,
		logger:       st.logger,
		wake:         make(chan struct{}, 1),
		onFound:      func(found []resources.Resource) { st.resolved.Store(&found) },
		stamp:        st.cfg.Stamp,
	}
	st.store.onCABundle(func([]byte) { mgr.poke() })
	if st.cfg.Stamp != nil {
		st.cfg.Stamp.onChange(mgr.poke)
	}
	if err := mgr.start(ctx); err != nil {
		return err
	}
	st.wg.Go(func() { mgr.run(st.bg) })
	return nil
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

// replicaIdentity is this replica's identity in its Lease: the one given,
// else the peering identity if one is set, else Kopf's detect_own_id.
func replicaIdentity(given string, s *settings.Settings) string {
	if given != "" {
		return given
	}
	if s != nil && s.Peering.Identity != "" {
		return s.Peering.Identity
	}
	return leases.DetectOwnID(false)
}
