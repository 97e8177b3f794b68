package apiserver

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// WatchReporter says in the operator's log why the watch of one resource
// (in one namespace) fails, in place of client-go's klog lines. client-go's
// reflector retries every failure with its own backoff (up to about a
// minute); the reports are paced by LogBackoff.
//
//   - 403 Forbidden, at WARNING: "Watching <resource> is forbidden (403):
//     <the API server's message>. Grant the operator's user the permissions
//     to list and watch it; retrying." The message names the verb, the
//     resource and the user, e.g. `User "x" cannot list resource "kopfexamples"
//     in API group "kopf.dev" in the namespace "ns"`.
//   - 404 Not Found, at WARNING: "The resource <resource> is not served by the API
//     server <host> (404): <message>. Its CRD may have been deleted; the
//     watch resumes when it is served again."
//   - any other API error, at WARNING: "Watching <resource> has failed:
//     <error>; retrying."
//   - network errors and 401s, at DEBUG: Health reports them once for
//     the whole server. Expired resourceVersions (a relist follows) and
//     watches closed by the server are normal and not reported at all.
//
// Once a watch request succeeds again after a reported failure, at INFO:
// "The watch of <resource> is resumed."
type WatchReporter struct {
	what   string // "kopfexamples.v1.kopf.dev in ns"
	server string
	logger *slog.Logger

	mu      sync.Mutex
	backoff LogBackoff
}

func NewWatchReporter(what, server string, logger *slog.Logger, maxSilence time.Duration) *WatchReporter {
	return &WatchReporter{what: what, server: server, logger: logger, backoff: LogBackoff{MaxSilence: maxSilence}}
}

// failed reports a failed listing or watch request.
func (r *WatchReporter) Failed(err error) {
	var status apierrors.APIStatus
	switch {
	case errors.Is(err, io.EOF):
		return
	case !errors.As(err, &status), apierrors.IsUnauthorized(err):
		r.logger.Debug(fmt.Sprintf("Watching %s has failed: %v; retrying.", r.what, err))
		return
	case apierrors.IsResourceExpired(err), apierrors.IsGone(err):
		return
	}
	r.mu.Lock()
	due := r.backoff.Due(time.Now())
	r.mu.Unlock()
	if !due {
		r.logger.Debug(fmt.Sprintf("Watching %s has failed: %v; retrying.", r.what, err))
		return
	}
	switch {
	case apierrors.IsForbidden(err):
		r.logger.Warn(fmt.Sprintf("Watching %s is forbidden (403): %v. Grant the operator's user the permissions to list and watch it; retrying.", r.what, err))
	case apierrors.IsNotFound(err):
		r.logger.Warn(fmt.Sprintf("The resource %s is not served by the API server %s (404): %v. Its CRD may have been deleted; the watch resumes when it is served again.", r.what, r.server, err))
	default:
		r.logger.Warn(fmt.Sprintf("Watching %s has failed: %v; retrying.", r.what, err))
	}
}

// watching records a watch request that succeeded.
func (r *WatchReporter) Watching() {
	r.mu.Lock()
	recovered := r.backoff.Recovered()
	r.mu.Unlock()
	if recovered {
		r.logger.Info(fmt.Sprintf("The watch of %s is resumed.", r.what))
	}
}
