package execution

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/kopf-go/kopf/runtime/kwargs"
	"github.com/kopf-go/kopf/runtime/registry"
)

// Outcome is the result of one attempt of one handler.
//
// Exactly one of these holds: Success (Result may be nil), Failure (final,
// with Message), or neither: a retry is wanted after Delay.
type Outcome struct {
	Success bool
	Failure bool
	Result  any
	Delay   time.Duration
	Message string
	// Limit, for a Failure, names the handler's limit that made it final:
	// LimitRetries (retries= is exhausted) or LimitTimeout (timeout= is
	// over); "" for a failure of the handler's own (a PermanentError,
	// errors=permanent, failed sub-handlers).
	Limit Limit
}

// Limit is a handler's limit that ends its attempts: see Outcome.Limit.
type Limit string

// The limits of a handler's attempts.
const (
	LimitRetries Limit = "retries"
	LimitTimeout Limit = "timeout"
)

// Final reports whether the handler is done for this cause.
func (o Outcome) Final() bool { return o.Success || o.Failure }

// Attempt is what is known of a handler's previous attempts for a cause.
type Attempt struct {
	// Retry counts the attempts made before this one.
	Retry int
	// Started is when the first attempt began.
	Started time.Time
	// Finish, if set, is called after the handler returned without error
	// and before its success is logged; its outcome replaces the success.
	// The reactor uses it to run sub-handlers inside their parent, so that
	// the parent succeeds only after its sub-handlers, as in Kopf.
	Finish func(result any) Outcome
}

// Execute runs one attempt of a changing handler, unless its retries or
// timeout are already exhausted, and classifies the result. It logs in
// Kopf's words with the given object logger. It never panics: a handler's
// panic becomes its error.
func Execute(ctx context.Context, h *registry.ChangingHandler, kw *kwargs.Changing, att Attempt, defaultBackoff time.Duration, logger *slog.Logger) Outcome {
	spec := Spec{Name: fmt.Sprintf("Handler '%s'", h.ID), Errors: h.Errors, Timeout: h.Timeout, Retries: h.Retries, Backoff: h.Backoff}
	return Run(ctx, spec, att, func(ctx context.Context, retry int, started time.Time, runtime time.Duration) (any, error) {
		kw.Param = h.Param
		kw.Retry = retry
		kw.Started = started
		kw.Runtime = runtime
		result, err := invoke(ctx, h.Fn, kw)
		return result, permanentDecoding(err)
	}, defaultBackoff, logger)
}

// permanentDecoding makes an object that does not decode as a changing
// handler's Go type (a *kwargs.DecodeError) the handler's permanent
// failure, as a PermanentError with the same message: a retry would
// decode the same fields the same way and fail again after every backoff.
// The object's next change runs the handlers of its own cause with the new
// body, so the handler fails once per change. (Daemons and timers decode
// the latest body at each attempt and are retried.)
func permanentDecoding(err error) error {
	var de *kwargs.DecodeError
	if errors.As(err, &de) {
		return &PermanentError{Message: err.Error()}
	}
	return err
}

// Spec is what Run needs to know of a handler of any kind.
type Spec struct {
	// Name is the handler as Kopf names it in the log: "Handler 'x'",
	// "Daemon 'x'", "Timer 'x'".
	Name    string
	Errors  registry.ErrorsMode
	Timeout time.Duration
	Retries int
	Backoff time.Duration
	// Cancellable: ctx being done means that the handler is asked to stop
	// (a daemon or timer), not that the operator is exiting: an error then
	// is logged as Kopf logs a cancelled task, "<Name> is cancelled. Will
	// escalate.", at WARNING.
	Cancellable bool
}

// Run runs one attempt of a handler of any kind through call, which
// invokes the user's function (through Guard) with Kopf's retry, started
// and runtime, unless the handler's retries or timeout are already
// exhausted, and classifies the result as Execute does. An error returned
// while ctx is done is no outcome (neither success nor failure, no delay):
// the attempt is interrupted, not failed.
func Run(ctx context.Context, spec Spec, att Attempt, call func(ctx context.Context, retry int, started time.Time, runtime time.Duration) (any, error), defaultBackoff time.Duration, logger *slog.Logger) Outcome {
	runtime, out, ok := Begin(spec, att, logger)
	if !ok {
		return out
	}
	result, err := call(ctx, att.Retry, att.Started, runtime)
	return Classify(ctx, spec, att, runtime, result, err, defaultBackoff, logger)
}

// Begin is the first half of Run: it refuses an attempt whose handler's
// retries or timeout are exhausted (ok is false, out is the failure,
// logged), or logs "<Name> is invoked." and returns the handler's runtime
// so far. Callers that must call the handler elsewhere (daemons, on a
// goroutine with a shallow stack) call Begin, the handler, then Classify.
func Begin(spec Spec, att Attempt, logger *slog.Logger) (runtime time.Duration, out Outcome, ok bool) {
	name := spec.Name
	runtime = time.Since(att.Started)
	if spec.Timeout > 0 && runtime >= spec.Timeout {
		msg := fmt.Sprintf("%s has timed out after %s.", name, runtime.Round(time.Millisecond))
		logger.Error(fmt.Sprintf("%s failed permanently: %s", name, msg))
		return runtime, Outcome{Failure: true, Message: msg, Limit: LimitTimeout}, false
	}
	if spec.Retries > 0 && att.Retry >= spec.Retries {
		msg := fmt.Sprintf("%s has exceeded %d retries.", name, spec.Retries)
		logger.Error(fmt.Sprintf("%s failed permanently: %s", name, msg))
		return runtime, Outcome{Failure: true, Message: msg, Limit: LimitRetries}, false
	}
	if logger.Enabled(context.Background(), slog.LevelDebug) { // the line is not made when filtered out
		logger.Debug(name + " is invoked.")
	}
	return runtime, Outcome{}, true
}

// Classify is the second half of Run: it judges what the handler returned
// (see Run), logging in Kopf's words.
func Classify(ctx context.Context, spec Spec, att Attempt, runtime time.Duration, result any, err error, defaultBackoff time.Duration, logger *slog.Logger) Outcome {
	name := spec.Name
	if err == nil {
		out := Outcome{Success: true, Result: result}
		if att.Finish != nil {
			out = att.Finish(result)
		}
		if out.Success && logger.Enabled(context.Background(), slog.LevelInfo) {
			logger.Info(name + " succeeded.")
		}
		return out
	}

	if ctx.Err() != nil {
		if spec.Cancellable {
			logger.Warn(fmt.Sprintf("%s is cancelled. Will escalate.", name))
			return Outcome{}
		}
		// The operator is exiting and has cancelled the handler: this is
		// not the handler's failure, and nothing is to be stored of it.
		logger.Debug(fmt.Sprintf("%s is interrupted by the operator's exit: %s", name, err))
		return Outcome{}
	}
	msg := err.Error()
	if _, ok := asPermanent(err); ok {
		logger.Error(fmt.Sprintf("%s failed permanently: %s", name, msg))
		return Outcome{Failure: true, Message: msg}
	}
	nextRetry := att.Retry + 1
	if tmp, ok := asTemporary(err); ok {
		delay := tmp.Delay
		if delay <= 0 {
			delay = DefaultTemporaryDelay
		}
		switch { // the timeout first, as in Kopf
		case spec.Timeout > 0 && runtime+delay >= spec.Timeout:
			logger.Error(fmt.Sprintf("%s failed temporarily but will time out after %s seconds: %s", name, Seconds(spec.Timeout), msg))
			return Outcome{Failure: true, Message: msg, Limit: LimitTimeout}
		case spec.Retries > 0 && nextRetry >= spec.Retries:
			logger.Error(fmt.Sprintf("%s failed temporarily but will exceed %d retries: %s", name, spec.Retries, msg))
			return Outcome{Failure: true, Message: msg, Limit: LimitRetries}
		}
		logger.Error(fmt.Sprintf("%s failed temporarily: %s", name, msg))
		return Outcome{Delay: delay, Message: msg}
	}

	backoff := spec.Backoff
	if backoff <= 0 {
		backoff = defaultBackoff
	}
	defer LogPanicStack(logger, err) // after the ERROR line that names it
	switch {
	case spec.Errors == registry.ErrorsIgnored:
		logger.Error(fmt.Sprintf("%s failed with an exception and will ignore it: %s", name, msg))
		return Outcome{Success: true}
	case spec.Errors == registry.ErrorsPermanent:
		logger.Error(fmt.Sprintf("%s failed with an exception and will stop now: %s", name, msg))
		return Outcome{Failure: true, Message: msg}
	case spec.Timeout > 0 && runtime+backoff >= spec.Timeout: // the timeout first, as in Kopf
		logger.Error(fmt.Sprintf("%s failed with an exception and will stop now (it would time out in %s seconds on the next attempt): %s", name, Seconds(spec.Timeout), msg))
		return Outcome{Failure: true, Message: msg, Limit: LimitTimeout}
	case spec.Retries > 0 && nextRetry >= spec.Retries:
		logger.Error(fmt.Sprintf("%s failed with an exception and will stop now (it would exceed %d retries on the next attempt): %s", name, spec.Retries, msg))
		return Outcome{Failure: true, Message: msg, Limit: LimitRetries}
	}
	logger.Error(fmt.Sprintf("%s failed with an exception and will try again in %s seconds: %s", name, Seconds(backoff), msg))
	return Outcome{Delay: backoff, Message: msg}
}

// invoke calls the handler through Guard: a panic becomes a *PanicError.
func invoke(ctx context.Context, fn registry.ChangingFn, kw *kwargs.Changing) (any, error) {
	return Guard(func() (any, error) { return fn(ctx, kw) })
}

// Seconds renders a duration as Kopf prints delays: "60", "1.5".
func Seconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64)
}
