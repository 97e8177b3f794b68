package apiserver

import (
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// Throttling says in the log when the API server throttles the operator's
// requests: API Priority and Fairness (or --max-requests-inflight) answers
// 429 Too Many Requests with a Retry-After, and client-go sends the
// request again after that delay (up to 10 times; then the reactor's own
// retries, settings.Networking.ErrorBackoffs, never shorter than the
// server's Retry-After). Each 429 is counted in the metrics too
// (kopf_api_requests_total{code="429"}).
//
//   - at the first 429, at WARNING: "The API server <host> throttles the
//     operator's requests (429 Too Many Requests): <method> <path>;
//     retrying after <N> seconds as told (Retry-After).";
//   - while it lasts, again at WARNING with the latest: "The API server
//     <host> still throttles the operator's requests after <N> seconds
//     (<count> requests throttled): <method> <path>; retrying after <N>
//     seconds as told (Retry-After).", paced by LogBackoff (after 1, 2,
//     4... seconds, at least maxSilence apart);
//   - once a request is answered otherwise, with no 429 for throttleQuiet
//     (or twice the longest Retry-After seen, if longer), at INFO: "The API
//     server <host> no longer throttles the operator's requests: <count>
//     requests throttled over <N> seconds." A throttled server answers some
//     requests and refuses others, so a single answer does not end it.
type Throttling struct {
	server string
	logger *slog.Logger

	mu      sync.Mutex
	backoff LogBackoff
	since   time.Time     // the first 429 of the episode
	last    time.Time     // the latest 429
	wait    time.Duration // the longest Retry-After of the episode
	count   int           // the 429s of the episode
}

// throttleQuiet is how long no request may be throttled before the
// throttling is reported over.
const throttleQuiet = 5 * time.Second

// NewThrottling returns the reporter of the API server's throttling of
// the requests sent through Wrap.
func NewThrottling(server string, logger *slog.Logger, maxSilence time.Duration) *Throttling {
	if maxSilence <= 0 {
		maxSilence = time.Minute
	}
	return &Throttling{server: server, logger: logger, backoff: LogBackoff{MaxSilence: maxSilence}}
}

// Wrap is a rest.Config WrapTransport that reports every 429 and the end
// of the throttling.
func (t *Throttling) Wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(req)
		switch {
		case err != nil:
		case resp.StatusCode == http.StatusTooManyRequests:
			after, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
			t.throttled(time.Now(), req.Method+" "+req.URL.Path, time.Duration(after)*time.Second)
		default:
			t.answered(time.Now())
		}
		return resp, err
	})
}

// throttled records a 429 of the request what, whose Retry-After is after.
func (t *Throttling) throttled(now time.Time, what string, after time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.count == 0 {
		t.since, t.wait = now, 0
	}
	t.count++
	t.last, t.wait = now, max(t.wait, after)
	if !t.backoff.Due(now) {
		return
	}
	told := fmt.Sprintf("%s; retrying after %s seconds as told (Retry-After).", what, Seconds(after))
	if t.count == 1 {
		t.logger.Warn(fmt.Sprintf("The API server %s throttles the operator's requests (429 Too Many Requests): %s", t.server, told))
		return
	}
	t.logger.Warn(fmt.Sprintf("The API server %s still throttles the operator's requests after %s seconds (%d requests throttled): %s", t.server, Seconds(now.Sub(t.since)), t.count, told))
}

// answered records an answer other than 429.
func (t *Throttling) answered(now time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.count == 0 || now.Sub(t.last) < max(throttleQuiet, 2*t.wait) {
		return
	}
	t.backoff.Recovered()
	t.logger.Info(fmt.Sprintf("The API server %s no longer throttles the operator's requests: %d requests throttled over %s seconds.", t.server, t.count, Seconds(t.last.Sub(t.since))))
	t.count = 0
}
