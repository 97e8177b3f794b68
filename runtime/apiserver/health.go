// Package apiserver is the operator's connection to the API server, as
// every request sees it: whether the server answers (Health, a transport
// wrapper that logs outages in Kopf's words and probes the server while
// it is down), the re-login on 401 Unauthorized (Relogin), the bound on
// the requests in flight (LimitInFlight), the server's warnings logged
// once each (Warnings), its throttling (429 Too Many Requests) reported
// (Throttling), and the reports of the watches' failures
// (WatchReporter), paced by one LogBackoff; and the handlers' REST
// configuration and shared clients in their context (RESTConfig, Client).
package apiserver

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"syscall"
	"time"

	"github.com/kopf-go/kopf/runtime/execution"
	"github.com/kopf-go/kopf/runtime/health"
	"github.com/kopf-go/kopf/runtime/watching"
)

// Health follows whether the API server answers the operator's
// requests, as seen by every request the operator sends (discovery,
// listings, watches, patches, events), and says so in the log:
//
//   - at the first failure, at WARNING: "The API server <host> is
//     unreachable (<cause>): <error>.", where the cause is one of
//     "connection refused", "TLS", "timeout", "connection reset",
//     "connection closed", "DNS" or "network error"; or, if the server
//     answers 401 Unauthorized: "The API server <host> refuses the
//     operator's credentials (401 Unauthorized): <method> <path>.";
//   - while it lasts, again at WARNING with the latest failure: "The API
//     server <host> is still unreachable after <N> seconds (<cause>):
//     <error>." (or "... still refuses the operator's credentials after
//     <N> seconds (401 Unauthorized): ...") after 1, 2, 4... seconds, and
//     at least once per maxSilence (the watching inactivity timeout, or a
//     minute if there is none) whether requests are made or not; <N> is
//     whole seconds, truncated, so that a report a little late (a busy
//     machine, a slow probe) still names its scheduled time (1, 3, 7...);
//   - once any request gets a response again (other than a 401), at INFO:
//     "The API server <host> is reachable again after <N> seconds."
//
// While the server is unreachable, it is probed (a GET of /version) at
// least every probeInterval, so that its return is noticed even when
// nothing else asks it anything, and the watches that wait for it (see
// await) resume as soon as it is ready (a starting kube-apiserver answers
// before it serves the CRDs' resources) rather than after client-go's
// backoff (which grows to a minute in a long outage).
//
// A request that fails because its own context ended (the operator
// stopping, a watch cut for inactivity) or on a connection the operator
// closed itself says nothing about the server and is not counted; but a
// watch request abandoned because the server did not answer it within
// the inactivity timeout (watching.ErrNoResponse) is, as a timeout.
type Health struct {
	server     string
	logger     *slog.Logger
	maxSilence time.Duration

	mu       sync.Mutex
	probe    func()      // sends a request through wrap; nil: none
	isReady  func() bool // asks the server whether it is ready; nil: it is
	down     bool
	ready    chan struct{} // closed once the server is reachable and ready
	since    time.Time
	cause    string
	lastErr  error
	interval time.Duration // between the reports
	report   time.Time     // the next report
	timer    *time.Timer
	stopped  bool
}

// unauthorized is the cause of a failure that is the server's 401.
const unauthorized = "401 Unauthorized"

// probeInterval is the longest time between two probes of an unreachable
// API server.
const probeInterval = 2 * time.Second

func NewHealth(server string, logger *slog.Logger, maxSilence time.Duration) *Health {
	if maxSilence <= 0 {
		maxSilence = time.Minute
	}
	return &Health{server: server, logger: logger, maxSilence: maxSilence}
}

// wrap is a rest.Config WrapTransport that reports every request's outcome.
func (h *Health) Wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(req)
		switch {
		case err != nil:
			if cause := context.Cause(req.Context()); errors.Is(cause, watching.ErrNoResponse) {
				h.failed("timeout", fmt.Errorf("%s %s: %w", req.Method, req.URL.Path, cause))
				break // the server's silence, which the watcher would not wait out
			}
			if req.Context().Err() != nil || errors.Is(err, context.Canceled) || errors.Is(err, net.ErrClosed) {
				break // our own doing, not the server's
			}
			h.failed(networkCause(err), fmt.Errorf("%s %s: %w", req.Method, req.URL.Path, err))
		case resp.StatusCode == http.StatusUnauthorized:
			h.failed(unauthorized, fmt.Errorf("%s %s", req.Method, req.URL.Path))
		default:
			h.succeeded()
		}
		return resp, err
	})
}

// failed records a failed request.
func (h *Health) failed(cause string, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.cause, h.lastErr = cause, err
	if h.down || h.stopped {
		return // the timer reports it
	}
	now := time.Now()
	h.down, h.ready, h.since, h.interval, h.report = true, make(chan struct{}), now, time.Second, now.Add(time.Second)
	if cause == unauthorized {
		h.logger.Warn(fmt.Sprintf("The API server %s refuses the operator's credentials (%s): %v.", h.server, cause, err))
	} else {
		h.logger.Warn(fmt.Sprintf("The API server %s is unreachable (%s): %v.", h.server, cause, err))
	}
	h.schedule(now)
}

// schedule arms the next probe or report, whichever comes first; h.mu is
// held.
func (h *Health) schedule(now time.Time) {
	h.timer = time.AfterFunc(min(probeInterval, h.report.Sub(now)), h.tick)
}

// setProbes sets the request sent while the server is unreachable (its
// outcome is recorded as any other request's), and the check of its
// readiness once it is reachable again.
func (h *Health) SetProbes(probe func(), isReady func() bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.probe, h.isReady = probe, isReady
}

// tick probes the server, and reports the outage if it persists and a
// report is due.
func (h *Health) tick() {
	h.mu.Lock()
	probe := h.probe
	h.mu.Unlock()
	if probe != nil {
		probe() // a success ends the outage (see succeeded)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.down || h.stopped {
		return
	}
	now := time.Now()
	if !now.Before(h.report) {
		state := "is still unreachable"
		if h.cause == unauthorized {
			state = "still refuses the operator's credentials"
		}
		h.logger.Warn(fmt.Sprintf("The API server %s %s after %d seconds (%s): %v.",
			h.server, state, int(now.Sub(h.since)/time.Second), h.cause, h.lastErr))
		h.interval = min(2*h.interval, h.maxSilence)
		h.report = now.Add(h.interval)
	}
	h.schedule(now)
}

// await waits while the server is unreachable or not ready after an
// outage, for at most maxWait, and says whether it is ready again. It
// returns false at once if no outage is known.
func (h *Health) Await(ctx context.Context, maxWait time.Duration) bool {
	h.mu.Lock()
	ready := h.ready
	h.mu.Unlock()
	if ready == nil {
		return false
	}
	t := time.NewTimer(maxWait)
	defer t.Stop()
	select {
	case <-ready:
		return true
	case <-ctx.Done():
	case <-t.C:
	}
	return false
}

// succeeded records a request that got a response.
func (h *Health) succeeded() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.down {
		return
	}
	h.down = false
	go h.awaitReady(h.ready, h.isReady)
	h.timer.Stop()
	if !h.stopped {
		h.logger.Info(fmt.Sprintf("The API server %s is reachable again after %s seconds.", h.server, Seconds(time.Since(h.since))))
	}
}

// awaitReady closes ready once the server says it is ready, or after
// readyTimeout (it may never say so: the operator may not read /readyz).
func (h *Health) awaitReady(ready chan struct{}, isReady func() bool) {
	defer func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		close(ready)
		if h.ready == ready && !h.down {
			h.ready = nil // no outage now
		}
	}()
	deadline := time.Now().Add(readyTimeout)
	for isReady != nil && !isReady() && time.Now().Before(deadline) {
		time.Sleep(250 * time.Millisecond)
		h.mu.Lock()
		stopped := h.stopped
		h.mu.Unlock()
		if stopped {
			return
		}
	}
}

// readyTimeout bounds the wait for a server that is reachable again to
// say it is ready.
const readyTimeout = 30 * time.Second

// stop ends the reports (the operator is exiting).
func (h *Health) Stop() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.stopped = true
	if h.timer != nil {
		h.timer.Stop()
	}
}

// networkCause names the cause of a request's failure in a few words.
func networkCause(err error) string {
	var (
		unknownAuthority x509.UnknownAuthorityError
		invalidCert      x509.CertificateInvalidError
		hostname         x509.HostnameError
		verification     *tls.CertificateVerificationError
		recordHeader     tls.RecordHeaderError
		alert            tls.AlertError
		dns              *net.DNSError
		netErr           net.Error
	)
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.As(err, &unknownAuthority), errors.As(err, &invalidCert), errors.As(err, &hostname),
		errors.As(err, &verification), errors.As(err, &recordHeader), errors.As(err, &alert):
		return "TLS"
	case errors.As(err, &dns):
		return "DNS"
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr) && netErr.Timeout():
		return "timeout"
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset"
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "connection closed"
	}
	return "network error"
}

// seconds formats a duration as seconds to a tenth.
func Seconds(d time.Duration) string {
	return execution.Seconds(d.Round(100 * time.Millisecond))
}

// LogBackoff paces the reports of a failure that persists: the first at
// once, the next ones after 1, 2, 4... seconds, at most maxSilence apart.
// It reports only when asked (at a failure); it is not safe for concurrent
// use.
type LogBackoff struct {
	MaxSilence time.Duration
	failing    bool
	since      time.Time
	next       time.Time
	interval   time.Duration
}

// due records a failure and says whether to report it now.
func (b *LogBackoff) Due(now time.Time) bool {
	if !b.failing {
		b.failing, b.since, b.interval, b.next = true, now, time.Second, now.Add(time.Second)
		return true
	}
	if now.Before(b.next) {
		return false
	}
	b.interval = min(2*b.interval, max(b.MaxSilence, time.Second))
	b.next = now.Add(b.interval)
	return true
}

// recovered records a success and says whether a failure was reported.
func (b *LogBackoff) Recovered() bool {
	was := b.failing
	b.failing = false
	return was
}

// Status is the API server's status, for the health endpoints.
func (h *Health) Status() health.ServerStatus {
	h.mu.Lock()
	defer h.mu.Unlock()
	return health.ServerStatus{Address: h.server, Down: h.down, Since: h.since, Cause: h.cause, Err: h.lastErr}
}
