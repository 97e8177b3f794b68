package execution

import (
	"fmt"
	"log/slog"
	"runtime/debug"
)

// Guard calls fn, which runs user code, and returns what fn returns. A
// panic in fn does not unwind the caller: Guard returns it as a
// *PanicError that carries the panic's value and the stack of the
// panicking goroutine at the point of the panic.
//
// Every call from the runtime into user code goes through Guard: changing
// and event handlers (with the sub-handlers they register), when= and
// filter callbacks, and the encoding of handlers' results. A caller turns
// the PanicError into that call's outcome (a handler's error, a filter
// that does not match); the operator itself never crashes on user code.
func Guard[T any](fn func() (T, error)) (result T, err error) {
	defer func() {
		if v := recover(); v != nil {
			var zero T
			result, err = zero, &PanicError{Value: v, Stack: debug.Stack()}
		}
	}()
	return fn()
}

// LogPanicStack logs, at DEBUG, the stack of err if it is (or wraps) a
// *PanicError: "The stack of the panic: <value>" with the stack in the
// record's "stack" attribute (which the text formats print on the lines
// that follow, as Python prints a traceback). The ERROR line that names the
// panic's value is the caller's. Other errors log nothing.
func LogPanicStack(logger *slog.Logger, err error) {
	if p, ok := asPanic(err); ok {
		logger.Debug(fmt.Sprintf("The stack of the panic: %v", p.Value), slog.String("stack", string(p.Stack)))
	}
}
