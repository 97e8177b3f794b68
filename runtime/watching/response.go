package watching

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// ErrNoResponse is the cause of a watch request abandoned because the API
// server sent no response to it within the inactivity timeout.
//
// A server that has accepted the connection and then stops (frozen,
// overloaded, a peer gone behind a proxy) leaves a request waiting for
// its response's headers: no client-go timeout bounds that wait (HTTP/2's
// pings close the connection after 45 s; HTTP/1.1 has nothing), and the
// operator would not say that the server is unreachable. The inactivity
// timeout, which ends a stream silent for that long, so also bounds the
// wait for the stream to begin; the API server answers a watch at once,
// even one that streams a listing. runtime/apiserver's Health counts a
// request ended so as the server's failure (cause "timeout").
var ErrNoResponse = errors.New("no response")

// responseDeadline gives one watch request its time to be answered.
type responseDeadline struct {
	ctx    context.Context // the request's
	cancel context.CancelCauseFunc
	timer  *time.Timer // nil without a timeout
}

// awaitResponse starts the clock of one request (none if timeout is 0).
func awaitResponse(ctx context.Context, timeout time.Duration) *responseDeadline {
	rctx, cancel := context.WithCancelCause(ctx)
	d := &responseDeadline{ctx: rctx, cancel: cancel}
	if timeout > 0 {
		cause := fmt.Errorf("%w within %s", ErrNoResponse, timeout)
		d.timer = time.AfterFunc(timeout, func() { cancel(cause) })
	}
	return d
}

// answered stops the clock once the request has its response or its error,
// and returns the error, ErrNoResponse's if the clock ran out first.
func (d *responseDeadline) answered(err error) error {
	if d.timer != nil && !d.timer.Stop() && err != nil {
		return context.Cause(d.ctx)
	}
	return err
}

// release ends the request's context, once its stream has ended (or it
// failed); until then, the stream reads through it.
func (d *responseDeadline) release() { d.cancel(context.Canceled) }
