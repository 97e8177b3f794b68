package execution

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kopf-go/kopf/runtime/causes"
	"github.com/kopf-go/kopf/runtime/kwargs"
	"github.com/kopf-go/kopf/runtime/registry"
)

// logLine is one record as written by slog's JSON handler.
type logLine struct {
	Level string `json:"level"`
	Msg   string `json:"msg"`
	Stack string `json:"stack"`
}

func (l logLine) String() string { return l.Level + " " + l.Msg }

// captureLogger returns a logger writing JSON records to a buffer, and a
// function that decodes what was written so far.
func captureLogger(t *testing.T) (*slog.Logger, func() []logLine) {
	t.Helper()
	var buf bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	return logger, func() []logLine {
		t.Helper()
		var lines []logLine
		dec := json.NewDecoder(bytes.NewReader(buf.Bytes()))
		for dec.More() {
			var l logLine
			if err := dec.Decode(&l); err != nil {
				t.Fatalf("undecodable log output %q: %v", buf.String(), err)
			}
			lines = append(lines, l)
		}
		return lines
	}
}

// fnReturning is a handler function that returns fixed values and counts
// its calls.
func fnReturning(calls *int, result any, err error) registry.ChangingFn {
	return func(context.Context, *kwargs.Changing) (any, error) {
		*calls++
		return result, err
	}
}

func fnPanicking(calls *int, v any) registry.ChangingFn {
	return func(context.Context, *kwargs.Changing) (any, error) {
		*calls++
		panic(v)
	}
}

const (
	invoked   = "DEBUG Handler 'create_fn' is invoked."
	succeeded = "INFO Handler 'create_fn' succeeded."
)

func TestExecute(t *testing.T) {
	boom := errors.New("boom")
	type fnMaker func(calls *int) registry.ChangingFn
	returning := func(result any, err error) fnMaker {
		return func(calls *int) registry.ChangingFn { return fnReturning(calls, result, err) }
	}
	tests := []struct {
		name    string
		handler registry.ChangingHandler // ID and Fn are set by the test
		fn      fnMaker
		retry   int
		runtime time.Duration // how long ago the first attempt started
		backoff time.Duration // the default backoff (60s when 0)

		want       Outcome
		wantCalls  int
		wantLogs   []string
		wantStack  bool   // the last log record carries the stack
		msgPattern string // instead of want.Message, when it has a duration
	}{
		// Success.
		{
			name: "success with a result",
			fn:   returning(map[string]any{"message": "hello"}, nil),
			want: Outcome{Success: true, Result: map[string]any{"message": "hello"}}, wantCalls: 1,
			wantLogs: []string{invoked, succeeded},
		},
		{
			name: "success without a result",
			fn:   returning(nil, nil),
			want: Outcome{Success: true}, wantCalls: 1,
			wantLogs: []string{invoked, succeeded},
		},
		{
			name:    "no limits mean unlimited",
			fn:      returning("ok", nil),
			retry:   1000,
			runtime: 240 * time.Hour,
			want:    Outcome{Success: true, Result: "ok"}, wantCalls: 1,
			wantLogs: []string{invoked, succeeded},
		},

		// PermanentError.
		{
			name: "permanent error",
			fn:   returning(nil, NewPermanentError("Expected %s error.", "permanent")),
			want: Outcome{Failure: true, Message: "Expected permanent error."}, wantCalls: 1,
			wantLogs: []string{invoked, "ERROR Handler 'create_fn' failed permanently: Expected permanent error."},
		},
		{
			name: "wrapped permanent error: the whole message, in the outcome and the log",
			fn:   returning(nil, fmt.Errorf("creating: %w", NewPermanentError("quota"))),
			want: Outcome{Failure: true, Message: "creating: quota"}, wantCalls: 1,
			wantLogs: []string{invoked, "ERROR Handler 'create_fn' failed permanently: creating: quota"},
		},
		{
			name:    "permanent error ignores the errors mode",
			handler: registry.ChangingHandler{Errors: registry.ErrorsIgnored},
			fn:      returning("ignored result", NewPermanentError("no")),
			want:    Outcome{Failure: true, Message: "no"}, wantCalls: 1,
			wantLogs: []string{invoked, "ERROR Handler 'create_fn' failed permanently: no"},
		},
		{
			name: "an object that does not decode as the Go type: permanent, once per change",
			fn:   returning(nil, fmt.Errorf("in a sub-step: %w", &kwargs.DecodeError{Type: reflect.TypeFor[int](), Err: boom})),
			want: Outcome{Failure: true, Message: "in a sub-step: decoding the object as int: boom"}, wantCalls: 1,
			wantLogs: []string{invoked, "ERROR Handler 'create_fn' failed permanently: in a sub-step: decoding the object as int: boom"},
		},

		// TemporaryError.
		{
			name: "temporary error with a delay",
			fn:   returning(nil, NewTemporaryError("Expected recoverable error.", 5*time.Second)),
			want: Outcome{Delay: 5 * time.Second, Message: "Expected recoverable error."}, wantCalls: 1,
			wantLogs: []string{invoked, "ERROR Handler 'create_fn' failed temporarily: Expected recoverable error."},
		},
		{
			name: "temporary error without a delay: 60s",
			fn:   returning(nil, &TemporaryError{Message: "later"}),
			want: Outcome{Delay: 60 * time.Second, Message: "later"}, wantCalls: 1,
			wantLogs: []string{invoked, "ERROR Handler 'create_fn' failed temporarily: later"},
		},
		{
			name: "wrapped temporary error",
			fn:   returning(nil, fmt.Errorf("waiting: %w", NewTemporaryError("not ready", time.Second))),
			want: Outcome{Delay: time.Second, Message: "waiting: not ready"}, wantCalls: 1,
			wantLogs: []string{invoked, "ERROR Handler 'create_fn' failed temporarily: waiting: not ready"},
		},
		{
			name:    "temporary error within the limits",
			handler: registry.ChangingHandler{Retries: 3, Timeout: time.Hour},
			fn:      returning(nil, NewTemporaryError("later", time.Second)),
			retry:   1, runtime: 10 * time.Second,
			want: Outcome{Delay: time.Second, Message: "later"}, wantCalls: 1,
			wantLogs: []string{invoked, "ERROR Handler 'create_fn' failed temporarily: later"},
		},
		{
			name:    "temporary error on the last retry",
			handler: registry.ChangingHandler{Retries: 3},
			fn:      returning(nil, NewTemporaryError("later", time.Second)),
			retry:   2,
			want:    Outcome{Failure: true, Message: "later", Limit: LimitRetries}, wantCalls: 1,
			wantLogs: []string{invoked, "ERROR Handler 'create_fn' failed temporarily but will exceed 3 retries: later"},
		},
		{
			name:    "temporary error whose delay reaches the timeout",
			handler: registry.ChangingHandler{Timeout: 10 * time.Second},
			fn:      returning(nil, NewTemporaryError("later", 6*time.Second)),
			runtime: 5 * time.Second,
			want:    Outcome{Failure: true, Message: "later", Limit: LimitTimeout}, wantCalls: 1,
			wantLogs: []string{invoked, "ERROR Handler 'create_fn' failed temporarily but will time out after 10 seconds: later"},
		},
		{
			name:    "temporary error with a fractional timeout",
			handler: registry.ChangingHandler{Timeout: 1500 * time.Millisecond},
			fn:      returning(nil, NewTemporaryError("later", 2*time.Second)),
			want:    Outcome{Failure: true, Message: "later", Limit: LimitTimeout}, wantCalls: 1,
			wantLogs: []string{invoked, "ERROR Handler 'create_fn' failed temporarily but will time out after 1.5 seconds: later"},
		},
		{
			name:    "temporary error reaching both limits: the timeout is reported (as in Kopf)",
			handler: registry.ChangingHandler{Retries: 3, Timeout: 10 * time.Second},
			fn:      returning(nil, NewTemporaryError("later", 6*time.Second)),
			retry:   2, runtime: 5 * time.Second,
			want: Outcome{Failure: true, Message: "later", Limit: LimitTimeout}, wantCalls: 1,
			wantLogs: []string{invoked, "ERROR Handler 'create_fn' failed temporarily but will time out after 10 seconds: later"},
		},
		{
			name:    "temporary error ignores the errors mode",
			handler: registry.ChangingHandler{Errors: registry.ErrorsPermanent},
			fn:      returning(nil, NewTemporaryError("later", time.Second)),
			want:    Outcome{Delay: time.Second, Message: "later"}, wantCalls: 1,
			wantLogs: []string{invoked, "ERROR Handler 'create_fn' failed temporarily: later"},
		},

		// Arbitrary errors, errors="temporary" (the default).
		{
			name: "arbitrary error: the default backoff",
			fn:   returning(nil, boom),
			want: Outcome{Delay: 60 * time.Second, Message: "boom"}, wantCalls: 1,
			wantLogs: []string{invoked, "ERROR Handler 'create_fn' failed with an exception and will try again in 60 seconds: boom"},
		},
		{
			name:    "arbitrary error: the settings' backoff",
			fn:      returning(nil, boom),
			backoff: 2 * time.Second,
			want:    Outcome{Delay: 2 * time.Second, Message: "boom"}, wantCalls: 1,
			wantLogs: []string{invoked, "ERROR Handler 'create_fn' failed with an exception and will try again in 2 seconds: boom"},
		},
		{
			name:    "arbitrary error: the handler's backoff wins",
			handler: registry.ChangingHandler{Errors: registry.ErrorsTemporary, Backoff: 1500 * time.Millisecond},
			fn:      returning(nil, boom),
			backoff: 2 * time.Second,
			want:    Outcome{Delay: 1500 * time.Millisecond, Message: "boom"}, wantCalls: 1,
			wantLogs: []string{invoked, "ERROR Handler 'create_fn' failed with an exception and will try again in 1.5 seconds: boom"},
		},
		{
			name:    "arbitrary error on the last retry",
			handler: registry.ChangingHandler{Retries: 3},
			fn:      returning(nil, boom),
			retry:   2,
			want:    Outcome{Failure: true, Message: "boom", Limit: LimitRetries}, wantCalls: 1,
			wantLogs: []string{invoked, "ERROR Handler 'create_fn' failed with an exception and will stop now (it would exceed 3 retries on the next attempt): boom"},
		},
		{
			name:    "arbitrary error whose backoff reaches the timeout",
			handler: registry.ChangingHandler{Timeout: 10 * time.Second, Backoff: 6 * time.Second},
			fn:      returning(nil, boom),
			runtime: 5 * time.Second,
			want:    Outcome{Failure: true, Message: "boom", Limit: LimitTimeout}, wantCalls: 1,
			wantLogs: []string{invoked, "ERROR Handler 'create_fn' failed with an exception and will stop now (it would time out in 10 seconds on the next attempt): boom"},
		},
		{
			name:    "arbitrary error reaching both limits: the timeout is reported (as in Kopf)",
			handler: registry.ChangingHandler{Retries: 3, Timeout: 10 * time.Second, Backoff: 6 * time.Second},
			fn:      returning(nil, boom),
			retry:   2, runtime: 5 * time.Second,
			want: Outcome{Failure: true, Message: "boom", Limit: LimitTimeout}, wantCalls: 1,
			wantLogs: []string{invoked, "ERROR Handler 'create_fn' failed with an exception and will stop now (it would time out in 10 seconds on the next attempt): boom"},
		},

		// Arbitrary errors, other modes.
		{
			name:    "arbitrary error, errors=ignored",
			handler: registry.ChangingHandler{Errors: registry.ErrorsIgnored, Retries: 1},
			fn:      returning("dropped", boom),
			want:    Outcome{Success: true}, wantCalls: 1,
			wantLogs: []string{invoked, "ERROR Handler 'create_fn' failed with an exception and will ignore it: boom"},
		},
		{
			name:    "arbitrary error, errors=permanent",
			handler: registry.ChangingHandler{Errors: registry.ErrorsPermanent},
			fn:      returning(nil, boom),
			want:    Outcome{Failure: true, Message: "boom"}, wantCalls: 1,
			wantLogs: []string{invoked, "ERROR Handler 'create_fn' failed with an exception and will stop now: boom"},
		},
		{
			name:    "arbitrary error, errors=permanent, limits not mentioned",
			handler: registry.ChangingHandler{Errors: registry.ErrorsPermanent, Retries: 1, Timeout: time.Second},
			fn:      returning(nil, boom),
			want:    Outcome{Failure: true, Message: "boom"}, wantCalls: 1,
			wantLogs: []string{invoked, "ERROR Handler 'create_fn' failed with an exception and will stop now: boom"},
		},

		// Panics.
		{
			name: "panic is an arbitrary error, with the stack",
			fn:   func(calls *int) registry.ChangingFn { return fnPanicking(calls, "boom") },
			want: Outcome{Delay: 60 * time.Second, Message: "panic: boom"}, wantCalls: 1,
			wantLogs:  []string{invoked, "ERROR Handler 'create_fn' failed with an exception and will try again in 60 seconds: panic: boom"},
			wantStack: true,
		},
		{
			name:    "panic with an error value, errors=permanent",
			handler: registry.ChangingHandler{Errors: registry.ErrorsPermanent},
			fn:      func(calls *int) registry.ChangingFn { return fnPanicking(calls, boom) },
			want:    Outcome{Failure: true, Message: "panic: boom"}, wantCalls: 1,
			wantLogs:  []string{invoked, "ERROR Handler 'create_fn' failed with an exception and will stop now: panic: boom"},
			wantStack: true,
		},
		{
			name:    "panic, errors=ignored",
			handler: registry.ChangingHandler{Errors: registry.ErrorsIgnored},
			fn:      func(calls *int) registry.ChangingFn { return fnPanicking(calls, 42) },
			want:    Outcome{Success: true}, wantCalls: 1,
			wantLogs:  []string{invoked, "ERROR Handler 'create_fn' failed with an exception and will ignore it: panic: 42"},
			wantStack: true,
		},
		{
			name: "panic with a typed error is not unwrapped as one",
			fn: func(calls *int) registry.ChangingFn {
				return fnPanicking(calls, NewPermanentError("in a panic"))
			},
			want: Outcome{Delay: 60 * time.Second, Message: "panic: in a panic"}, wantCalls: 1,
			wantLogs:  []string{invoked, "ERROR Handler 'create_fn' failed with an exception and will try again in 60 seconds: panic: in a panic"},
			wantStack: true,
		},

		// Limits exhausted before the attempt: the handler is not invoked.
		{
			name:     "retries exhausted",
			handler:  registry.ChangingHandler{Retries: 3},
			fn:       returning("never", nil),
			retry:    3,
			want:     Outcome{Failure: true, Message: "Handler 'create_fn' has exceeded 3 retries.", Limit: LimitRetries},
			wantLogs: []string{"ERROR Handler 'create_fn' failed permanently: Handler 'create_fn' has exceeded 3 retries."},
		},
		{
			name:       "timed out",
			handler:    registry.ChangingHandler{Timeout: 10 * time.Second},
			fn:         returning("never", nil),
			runtime:    11 * time.Second,
			want:       Outcome{Failure: true, Limit: LimitTimeout},
			msgPattern: `^Handler 'create_fn' has timed out after 11(\.\d+)?s\.$`,
			wantLogs:   []string{"ERROR Handler 'create_fn' failed permanently: "},
		},
		{
			name:       "timed out and retries exhausted: the timeout is reported",
			handler:    registry.ChangingHandler{Timeout: 10 * time.Second, Retries: 1},
			fn:         returning("never", nil),
			retry:      5,
			runtime:    11 * time.Second,
			want:       Outcome{Failure: true, Limit: LimitTimeout},
			msgPattern: `^Handler 'create_fn' has timed out after 11(\.\d+)?s\.$`,
			wantLogs:   []string{"ERROR Handler 'create_fn' failed permanently: "},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logger, logs := captureLogger(t)
			calls := 0
			h := tt.handler
			h.ID = "create_fn"
			h.Reasons = []causes.Reason{causes.Create}
			h.Fn = tt.fn(&calls)
			backoff := tt.backoff
			if backoff == 0 {
				backoff = 60 * time.Second
			}
			att := Attempt{Retry: tt.retry, Started: time.Now().Add(-tt.runtime)}

			got := Execute(context.Background(), &h, &kwargs.Changing{}, att, backoff, logger)

			message := got.Message
			if tt.msgPattern != "" {
				if !regexp.MustCompile(tt.msgPattern).MatchString(got.Message) {
					t.Errorf("Message = %q, want a match of %q", got.Message, tt.msgPattern)
				}
				got.Message = ""
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Execute() = %+v, want %+v", got, tt.want)
			}
			if got.Final() != (tt.want.Success || tt.want.Failure) {
				t.Errorf("Final() = %v for %+v", got.Final(), got)
			}
			if calls != tt.wantCalls {
				t.Errorf("the handler was called %d times, want %d", calls, tt.wantCalls)
			}

			lines := logs()
			var stacks []logLine // the DEBUG stack of a panic follows its ERROR line
			if n := len(tt.wantLogs); len(lines) == n+1 && strings.HasPrefix(lines[n].Msg, "The stack of the panic: ") {
				lines, stacks = lines[:n], lines[n:]
			}
			if len(lines) != len(tt.wantLogs) {
				t.Fatalf("logs = %q, want %q", lines, tt.wantLogs)
			}
			for i, want := range tt.wantLogs {
				got := lines[i].String()
				if tt.msgPattern != "" && i == len(tt.wantLogs)-1 {
					want += message // the outcome's message, checked above
				}
				if got != want {
					t.Errorf("log[%d] = %q\n         want %q", i, got, want)
				}
			}
			if hasStack := len(stacks) == 1; hasStack != tt.wantStack {
				t.Errorf("a DEBUG record with the stack follows: %v, want %v", hasStack, tt.wantStack)
			}
			for _, l := range stacks {
				if l.Level != "DEBUG" || !strings.Contains(l.Stack, "goroutine ") || !strings.Contains(l.Stack, "fnPanicking") {
					t.Errorf("the stack record is %q, want a DEBUG record with the panicking goroutine's stack", l)
				}
			}
		})
	}
}

// TestExecuteKwargs checks what the handler gets: the attempt's data, the
// handler's param, and the caller's context.
func TestExecuteKwargs(t *testing.T) {
	type ctxKey struct{}
	ctx := context.WithValue(context.Background(), ctxKey{}, "value")
	started := time.Now().Add(-90 * time.Second)
	param := map[string]any{"p": 1}

	var got *kwargs.Changing
	var gotCtxValue any
	h := &registry.ChangingHandler{
		ID:      "update_fn",
		Reasons: []causes.Reason{causes.Update},
		Param:   param,
		Fn: func(ctx context.Context, kw *kwargs.Changing) (any, error) {
			got, gotCtxValue = kw, ctx.Value(ctxKey{})
			return nil, nil
		},
	}
	kw := &kwargs.Changing{Reason: causes.Update, Param: "stale", Retry: 99}
	logger, _ := captureLogger(t)
	out := Execute(ctx, h, kw, Attempt{Retry: 2, Started: started}, time.Minute, logger)

	if !out.Success {
		t.Fatalf("Execute() = %+v, want success", out)
	}
	if got != kw {
		t.Fatal("the handler did not get the caller's kwargs")
	}
	if gotCtxValue != "value" {
		t.Errorf("ctx value = %v, want the caller's context", gotCtxValue)
	}
	if !reflect.DeepEqual(got.Param, param) {
		t.Errorf("Param = %v, want %v", got.Param, param)
	}
	if got.Retry != 2 {
		t.Errorf("Retry = %d, want 2", got.Retry)
	}
	if !got.Started.Equal(started) {
		t.Errorf("Started = %v, want %v", got.Started, started)
	}
	if got.Runtime < 90*time.Second || got.Runtime > 90*time.Second+time.Minute {
		t.Errorf("Runtime = %v, want about 90s", got.Runtime)
	}
	if got.Reason != causes.Update {
		t.Errorf("Reason = %q, want it untouched", got.Reason)
	}
}

func TestPanicErrorKeepsTheValueAndStack(t *testing.T) {
	calls := 0
	h := &registry.ChangingHandler{ID: "fn", Reasons: []causes.Reason{causes.Create}, Fn: fnPanicking(&calls, "boom"),
		Errors: registry.ErrorsPermanent}
	_, err := invoke(context.Background(), h.Fn, &kwargs.Changing{})
	var p *PanicError
	if !errors.As(err, &p) {
		t.Fatalf("invoke() error = %v, want a *PanicError", err)
	}
	if p.Value != "boom" {
		t.Errorf("Value = %v, want boom", p.Value)
	}
	if !strings.Contains(string(p.Stack), "fnPanicking") {
		t.Errorf("Stack does not show the panicking function:\n%s", p.Stack)
	}
}

func TestSeconds(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{0, "0"},
		{60 * time.Second, "60"},
		{1500 * time.Millisecond, "1.5"},
		{100 * time.Millisecond, "0.1"},
		{time.Hour, "3600"},
		{1234567 * time.Microsecond, "1.234567"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := Seconds(tt.d); got != tt.want {
				t.Errorf("Seconds(%v) = %q, want %q", tt.d, got, tt.want)
			}
		})
	}
}

// A handler cancelled by the operator's exit has not failed: no retry is
// scheduled, nothing final is reported, and no error is logged.
func TestExecuteInterruptedByExit(t *testing.T) {
	logger, lines := captureLogger(t)
	ctx, cancel := context.WithCancel(context.Background())
	h := registry.ChangingHandler{ID: "fn", Fn: func(ctx context.Context, _ *kwargs.Changing) (any, error) {
		cancel()
		return nil, ctx.Err()
	}}
	out := Execute(ctx, &h, &kwargs.Changing{}, Attempt{Started: time.Now()}, time.Minute, logger)
	if out.Final() || out.Delay != 0 {
		t.Errorf("Execute() = %+v, want neither final nor delayed", out)
	}
	for _, l := range lines() {
		if l.Level == "ERROR" {
			t.Errorf("an interruption is logged as an error: %s", l)
		}
	}
}
