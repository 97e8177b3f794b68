package metrics

import (
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// WrapTransport counts the requests that pass through rt by verb and
// status code in kopf_api_requests_total: it is a rest.Config's
// WrapTransport (cfg.Wrap(m.WrapTransport)). The verb is the HTTP method,
// or WATCH for a GET with watch=true; the code is the response's status,
// or "<error>" when none came (as client-go's own request metrics say).
func (m *Metrics) WrapTransport(rt http.RoundTripper) http.RoundTripper {
	return &countingTransport{next: rt, series: &m.requests}
}

type countingTransport struct {
	next   http.RoundTripper
	series *requestSeries
}

func (t *countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	verb := req.Method
	if verb == http.MethodGet && strings.Contains(req.URL.RawQuery, "watch=true") {
		verb = "WATCH"
	}
	code := 0 // no response
	if err == nil {
		code = resp.StatusCode
	}
	t.series.counter(verb, code).Inc()
	return resp, err
}

// WrappedTransport returns the transport that rt wraps, as client-go's
// transport wrappers do (for its connection management).
func (t *countingTransport) WrappedTransport() http.RoundTripper { return t.next }

type requestKey struct {
	verb string
	code int
}

// requestSeries resolves each verb and code's counter once.
type requestSeries struct {
	vec   *prometheus.CounterVec
	mu    sync.RWMutex
	known map[requestKey]prometheus.Counter
}

func (s *requestSeries) counter(verb string, code int) prometheus.Counter {
	key := requestKey{verb: verb, code: code}
	s.mu.RLock()
	c := s.known[key]
	s.mu.RUnlock()
	if c != nil {
		return c
	}
	label := "<error>"
	if code != 0 {
		label = strconv.Itoa(code)
	}
	c = s.vec.WithLabelValues(verb, label)
	s.mu.Lock()
	s.known[key] = c
	s.mu.Unlock()
	return c
}
