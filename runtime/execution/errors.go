// Package execution invokes handlers and classifies what they return into
// outcomes: success with a result, a temporary failure to retry after a
// delay, or a permanent failure. It knows nothing of Kubernetes.
package execution

import (
	"errors"
	"fmt"
	"time"
)

// TemporaryError is returned by a handler to be retried after Delay
// (Kopf's kopf.TemporaryError). A zero Delay means Kopf's default of 60s.
type TemporaryError struct {
	Message string
	Delay   time.Duration
}

func (e *TemporaryError) Error() string { return e.Message }

// PermanentError is returned by a handler to fail at once, with no retries
// (Kopf's kopf.PermanentError).
type PermanentError struct {
	Message string
}

func (e *PermanentError) Error() string { return e.Message }

// NewTemporaryError returns a TemporaryError with the message, retried
// after delay (Kopf's kopf.TemporaryError(message, delay=...), in that
// order). A zero delay means DefaultTemporaryDelay, Kopf's default.
func NewTemporaryError(message string, delay time.Duration) error {
	return &TemporaryError{Message: message, Delay: delay}
}

// NewPermanentError returns a PermanentError with a formatted message.
func NewPermanentError(format string, args ...any) error {
	return &PermanentError{Message: fmt.Sprintf(format, args...)}
}

// DefaultTemporaryDelay is the delay of a TemporaryError without one.
const DefaultTemporaryDelay = 60 * time.Second

// PanicError is a panic raised by user code and recovered by Guard, so
// that it is treated as that call's error instead of crashing the operator.
// Stack is the panicking goroutine's stack, as debug.Stack formats it.
type PanicError struct {
	Value any
	Stack []byte
}

func (e *PanicError) Error() string { return fmt.Sprintf("panic: %v", e.Value) }

// asTemporary and asPermanent unwrap the typed errors.
func asTemporary(err error) (*TemporaryError, bool) {
	var t *TemporaryError
	return t, errors.As(err, &t)
}

func asPanic(err error) (*PanicError, bool) {
	var p *PanicError
	return p, errors.As(err, &p)
}

func asPermanent(err error) (*PermanentError, bool) {
	var p *PermanentError
	return p, errors.As(err, &p)
}
