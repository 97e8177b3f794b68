package admission

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"k8s.io/client-go/rest"

	"github.com/kopf-go/kopf/runtime/settings"
)

// detectTimeout bounds the request by which an automatic server
// recognises the cluster.
const detectTimeout = 10 * time.Second

// autoServer resolves an automatic server (settings.WebhookServer.Auto,
// Kopf's WebhookAutoServer) for the cluster at hand: in a cluster, the
// Service (ws.Service, or the default one); outside, a local server whose
// Host, unless set, is the one by which the pods of a recognised local
// cluster (K3d/K3s, Minikube, Docker Desktop) reach this machine, or
// none: the plain local server, which a local API server (on the
// loopback, such as envtest's) reaches at 127.0.0.1.
func autoServer(ctx context.Context, ws settings.WebhookServer, inCluster bool, cfg *rest.Config, logger *slog.Logger) settings.WebhookServer {
	ws.Auto = false
	if inCluster {
		if ws.Service == nil {
			ws.Service = &settings.WebhookService{Name: DefaultServiceName}
		}
		logger.Debug("Running in a cluster: serving the webhooks through a Service.")
		return ws
	}
	ws.Service = nil
	if ws.Host != "" {
		return ws
	}
	host, err := GuessHost(ctx, cfg)
	switch {
	case err != nil:
		logger.Debug(fmt.Sprintf("Cluster detection failed, running a simple local server: %s", err))
	case host == "":
		logger.Debug("Cluster detection failed, running a simple local server.")
	default:
		logger.Debug(fmt.Sprintf("Cluster detection found the hostname: %s", host))
		ws.Host = host
	}
	return ws
}

// GuessHost returns the host name by which the pods of the cluster that
// cfg reaches can reach this machine, if the cluster is a local one of a
// known kind (Kopf's ClusterDetector.guess_host), else "": K3dHost for
// K3d/K3s, MinikubeHost for Minikube, DockerDesktopHost for Docker
// Desktop. It recognises them as Kopf does, by the API server's serving
// certificate (its subject, issuer and names), then by its version (a
// "+k3s" build), both from one GET of /version, which every client may
// read. Kind is not recognised (nor by Kopf): its nodes reach the host at
// the gateway of the Docker network "kind", which has no fixed name.
func GuessHost(ctx context.Context, cfg *rest.Config) (string, error) {
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return "", fmt.Errorf("creating the HTTP client: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, detectTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(cfg.Host, "/")+"/version", nil)
	if err != nil {
		return "", err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return "", fmt.Errorf("reading the API server's version: %w", err)
	}
	defer resp.Body.Close()
	if resp.TLS != nil && len(resp.TLS.PeerCertificates) > 0 {
		if host := hostOfCertificate(resp.TLS.PeerCertificates[0]); host != "" {
			return host, nil
		}
	}
	var version struct {
		GitVersion string `json:"gitVersion"`
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("reading the API server's version: %s", resp.Status)
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&version); err != nil {
		return "", fmt.Errorf("reading the API server's version: %w", err)
	}
	if strings.Contains(version.GitVersion, "+k3s") {
		return K3dHost, nil
	}
	return "", nil
}

// hostOfCertificate recognises a local cluster by its API server's
// serving certificate, with Kopf's rules.
func hostOfCertificate(c *x509.Certificate) string {
	subjectCN, issuerCN := c.Subject.CommonName, c.Issuer.CommonName
	switch {
	case subjectCN == "k3s" || slices.Contains(c.Subject.Organization, "k3s") || strings.HasPrefix(issuerCN, "k3s-"):
		return K3dHost
	case subjectCN == "minikube" || issuerCN == "minikubeCA":
		return MinikubeHost
	case slices.Contains(c.DNSNames, "docker-for-desktop"):
		return DockerDesktopHost
	}
	return ""
}
