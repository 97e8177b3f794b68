package health

import (
	"fmt"
	"net"
	"net/url"
	"strconv"
)

// Endpoint is where an endpoint is served: an http:// URL such as Kopf's
// `--liveness=http://0.0.0.0:8080/healthz`.
type Endpoint struct {
	// Addr is the host:port to listen on.
	Addr string
	// Path is the URL's path ("/" if it has none).
	Path string
}

// ParseEndpoint parses an endpoint's URL as Kopf does: the scheme must be
// http; the host defaults to localhost and the port to 80; the query and
// the fragment are not allowed.
func ParseEndpoint(raw string) (Endpoint, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return Endpoint{}, fmt.Errorf("invalid endpoint URL %q: %w", raw, err)
	}
	if u.Scheme != "http" {
		return Endpoint{}, fmt.Errorf("unsupported scheme of the endpoint %q: only http:// is supported", raw)
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" || u.Opaque != "" {
		return Endpoint{}, fmt.Errorf("invalid endpoint URL %q: only http://host:port/path is supported", raw)
	}
	if u.Port() != "" {
		if _, _, err := net.SplitHostPort(u.Host); err != nil {
			return Endpoint{}, fmt.Errorf("invalid endpoint URL %q: %w", raw, err)
		}
	}
	host, port := u.Hostname(), u.Port()
	if host == "" {
		host = "localhost"
	}
	if port == "" {
		port = "80"
	} else if n, err := strconv.Atoi(port); err != nil || n > 65535 {
		return Endpoint{}, fmt.Errorf("invalid port %q in the endpoint %q", port, raw)
	}
	path := u.Path
	if path == "" {
		path = "/"
	}
	return Endpoint{Addr: net.JoinHostPort(host, port), Path: path}, nil
}

// URL is the endpoint as a URL, normalised: with the host and port set.
func (e Endpoint) URL() string {
	return (&url.URL{Scheme: "http", Host: e.Addr, Path: e.Path}).String()
}
