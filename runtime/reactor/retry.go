package reactor

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kopf-go/kopf/runtime/logging"
	"github.com/kopf-go/kopf/runtime/settings"
)

// retryDelay is how long Process waits, after the failed attempt number
// attempt (0 for the first) of a cycle, before the next attempt:
//
//   - backoff is q.ErrorDelays[attempt], the last one repeated, stretched
//     by a random factor in [1, 1+q.ErrorJitter] (apimachinery's
//     wait.Jitter; exact if ErrorJitter ≤ 0), rounded to the millisecond;
//   - delay is backoff, or longer if the API server asked the client to
//     wait longer in err (Retry-After, or the retryAfterSeconds of a
//     Status: apierrors.SuggestsClientDelay): as Kopf's, the server's delay
//     is the minimum.
//
// ok is false, and the cycle is not retried, when q.ErrorDelays is empty.
func retryDelay(q settings.Queueing, attempt int, err error) (delay, backoff time.Duration, ok bool) {
	if len(q.ErrorDelays) == 0 {
		return 0, 0, false
	}
	backoff = q.ErrorDelays[min(max(attempt, 0), len(q.ErrorDelays)-1)]
	if q.ErrorJitter > 0 { // wait.Jitter takes 0 for 1.0
		backoff = wait.Jitter(backoff, q.ErrorJitter).Round(time.Millisecond)
	}
	delay = backoff
	if s, ok := apierrors.SuggestsClientDelay(err); ok {
		delay = max(delay, time.Duration(s)*time.Second)
	}
	return delay, backoff, true
}

// isInapplicable reports whether err is kube-apiserver's answer to a JSON
// patch that cannot be applied to the object as it is now, e.g. a failed
// "test" operation: a 422 made by NewGenericServerResponse in apiserver's
// endpoints/handlers/patch.go, which keeps neither the JSON-patch library's
// message ("testing value ... failed") nor any cause or name, unlike the
// 422 of an object rejected by validation (apierrors.NewInvalid: the
// object's name and the invalid fields as causes). The reactor's JSON
// patches are made for the version they test, so this means that the
// object has changed since: a conflict.
func isInapplicable(err error) bool {
	var status apierrors.APIStatus
	if !apierrors.IsInvalid(err) || !errors.As(err, &status) {
		return false
	}
	d := status.Status().Details
	return d == nil || (d.Name == "" && len(d.Causes) == 0)
}

// retryRequest sends one request with send and retries it as Kopf retries
// every API request (kopf/_cogs/clients/api.py): a failure worth retrying
// as it is — no answer at all (a network error, a timeout), 5xx, 403
// (returned by API servers being upgraded) or 429 — is retried after each
// of s.Networking.ErrorBackoffs in turn (jittered by
// s.Queueing.ErrorJitter, never shorter than the server's Retry-After), and
// escalates to the caller after the last. Other errors (404, 409, 422, …)
// and a done ctx return at once. It logs in Kopf's words:
// "Request attempt #2/9 failed; will retry: PATCH … -> <error>", at ERROR,
// and the escalation and later attempts' success likewise.
//
// A request that got no answer may have been applied: only idempotent
// requests may be retried so (a merge patch is; a JSON patch guarded by a
// "test" of the resourceVersion fails harmlessly as a conflict). what
// names the request in the log: called only when a line is logged (a
// request that succeeds at once logs nothing).
func retryRequest[T any](ctx context.Context, s *settings.Settings, logger *slog.Logger, what func() string, send func(context.Context) (T, error)) (T, error) {
	backoffs := s.Networking.ErrorBackoffs
	count := len(backoffs) + 1
	for attempt := 1; ; attempt++ {
		idx := func() string { return fmt.Sprintf("#%d/%d", attempt, count) } // for the log only
		if attempt > 1 {
			logger.Debug(fmt.Sprintf("Request attempt %s: %s", idx(), what()))
		}
		result, err := send(ctx)
		switch {
		case err == nil:
			if attempt > 1 {
				logger.Debug(fmt.Sprintf("Request attempt %s succeeded: %s", idx(), what()))
			}
			return result, nil
		case ctx.Err() != nil || !retriable(err):
			return result, err
		case attempt > len(backoffs):
			logger.Error(fmt.Sprintf("Request attempt %s failed; escalating: %s -> %v", idx(), what(), err))
			return result, err
		}
		backoff := backoffs[attempt-1]
		if j := s.Queueing.ErrorJitter; j > 0 {
			backoff = wait.Jitter(backoff, j).Round(time.Millisecond)
		}
		if after, ok := apierrors.SuggestsClientDelay(err); ok && time.Duration(after)*time.Second > backoff {
			logger.Debug(fmt.Sprintf("Overriding the backoff %ss with the retry-after %ds from the server: %s", seconds(backoff), after, what()))
			backoff = time.Duration(after) * time.Second
		}
		logger.Error(fmt.Sprintf("Request attempt %s failed; will retry: %s -> %v", idx(), what(), err))
		t := time.NewTimer(backoff)
		select {
		case <-ctx.Done():
			t.Stop()
			return result, err
		case <-t.C:
		}
	}
}

// retriable reports whether a failed request is worth sending again as it
// is, as Kopf judges it: it got no answer (the connection failed or timed
// out), or the answer was 5xx, 403 or 429.
func retriable(err error) bool {
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return true // no answer from the API server: network, TLS, timeout
	}
	code := status.Status().Code
	return code >= 500 || code == http.StatusForbidden || code == http.StatusTooManyRequests ||
		apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err)
}

// withLogger returns ctx carrying the object's logger, for the messages
// about the object's requests (and the API server's warnings to the
// handlers' clients): logging.WithLogger.
func withLogger(ctx context.Context, logger *slog.Logger) context.Context {
	return logging.WithLogger(ctx, logger)
}

// loggerFrom returns the logger that withLogger put into ctx, or fallback.
func loggerFrom(ctx context.Context, fallback *slog.Logger) *slog.Logger {
	return logging.FromContext(ctx, fallback)
}
