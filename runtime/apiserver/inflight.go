package apiserver

import (
	"net/http"
)

// LimitInFlight bounds the operator's concurrent API requests, watches
// excepted (they are long-lived and few). Up to settings.Queueing.WorkerLimit
// objects (unbounded if 0) are processed at once, and a burst would otherwise
// send as many requests at once; past the API server's HTTP/2 stream limit,
// client-go's transport dials a new TLS connection for each, which costs more
// CPU and memory than the requests themselves. The requests queue here,
// briefly.
func LimitInFlight(limit int) func(http.RoundTripper) http.RoundTripper {
	sem := make(chan struct{}, limit)
	return func(rt http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
			if req.URL.Query().Get("watch") == "true" {
				return rt.RoundTrip(req)
			}
			select {
			case sem <- struct{}{}:
			case <-req.Context().Done():
				return nil, req.Context().Err()
			}
			defer func() { <-sem }()
			return rt.RoundTrip(req)
		})
	}
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }
