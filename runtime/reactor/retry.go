package reactor

import (
	"errors"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"

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
