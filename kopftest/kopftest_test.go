package kopftest

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/kopf-go/kopf"
	"github.com/kopf-go/kopf/runtime/causes"
	"github.com/kopf-go/kopf/runtime/execution"
	"github.com/kopf-go/kopf/runtime/reactor"
	"github.com/kopf-go/kopf/runtime/resources"
)

func TestMatch(t *testing.T) {
	oc := Outcome{Resource: "kopfexamples.kopf.dev", Namespace: "default", Name: "obj", Handler: "create_fn", Cause: "create", Result: Succeeded}
	for _, tt := range []struct {
		m    Match
		want bool
	}{
		{Match{}, true},
		{Match{Name: "obj"}, true},
		{Match{Namespace: "default", Name: "obj", Handler: "create_fn", Cause: "create", Result: Succeeded, Resource: "kopfexamples.kopf.dev"}, true},
		{Match{Name: "other"}, false},
		{Match{Namespace: "other"}, false},
		{Match{Handler: "update_fn"}, false},
		{Match{Cause: "update"}, false},
		{Match{Result: Failed}, false},
		{Match{Resource: "pods"}, false},
	} {
		if got := tt.m.Matches(oc); got != tt.want {
			t.Errorf("%s matches %s: %v, want %v", tt.m, oc, got, tt.want)
		}
	}
}

func TestFromObservation(t *testing.T) {
	kex := resources.Resource{Group: "kopf.dev", Version: "v1", Plural: "kopfexamples"}
	pods := resources.Resource{Version: "v1", Plural: "pods"}
	now := time.Unix(1, 0)
	for _, tt := range []struct {
		name string
		obs  reactor.Observation
		want Outcome
	}{
		{
			name: "success",
			obs:  reactor.Observation{Resource: kex, Namespace: "ns", Name: "a", UID: "u", Handler: "create_fn", Reason: causes.Create, Outcome: execution.Outcome{Success: true, Result: 42}},
			want: Outcome{Resource: "kopfexamples.kopf.dev", Namespace: "ns", Name: "a", UID: "u", Handler: "create_fn", Cause: "create", Result: Succeeded, Returned: 42, Time: now},
		},
		{
			name: "permanent failure",
			obs:  reactor.Observation{Resource: kex, Name: "a", Handler: "h", Reason: causes.Update, Retry: 2, Outcome: execution.Outcome{Failure: true, Message: "boom"}},
			want: Outcome{Resource: "kopfexamples.kopf.dev", Name: "a", Handler: "h", Cause: "update", Retry: 2, Result: Failed, Message: "boom", Time: now},
		},
		{
			name: "retry",
			obs:  reactor.Observation{Resource: pods, Name: "p", Handler: "h", Reason: causes.Delete, Outcome: execution.Outcome{Delay: time.Second, Message: "later"}},
			want: Outcome{Resource: "pods", Name: "p", Handler: "h", Cause: "delete", Result: Retrying, Delay: time.Second, Message: "later", Time: now},
		},
		{
			name: "interrupted",
			obs:  reactor.Observation{Resource: pods, Name: "p", Handler: "h", Reason: causes.Resume, Interrupted: true},
			want: Outcome{Resource: "pods", Name: "p", Handler: "h", Cause: "resume", Result: Interrupted, Time: now},
		},
		{
			name: "event",
			obs:  reactor.Observation{Resource: pods, Name: "p", Handler: "h", Outcome: execution.Outcome{Success: true}},
			want: Outcome{Resource: "pods", Name: "p", Handler: "h", Cause: CauseEvent, Result: Succeeded, Time: now},
		},
		{
			name: "daemon",
			obs:  reactor.Observation{Resource: pods, Name: "p", Handler: "d", Reason: reactor.ReasonDaemon, Outcome: execution.Outcome{Success: true, Result: "x"}},
			want: Outcome{Resource: "pods", Name: "p", Handler: "d", Cause: CauseDaemon, Result: Succeeded, Returned: "x", Time: now},
		},
		{
			name: "timer",
			obs:  reactor.Observation{Resource: pods, Name: "p", Handler: "t", Reason: reactor.ReasonTimer, Retry: 1, Outcome: execution.Outcome{Delay: time.Second, Message: "m"}},
			want: Outcome{Resource: "pods", Name: "p", Handler: "t", Cause: CauseTimer, Retry: 1, Result: Retrying, Delay: time.Second, Message: "m", Time: now},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := fromObservation(tt.obs, now); fmt.Sprintf("%#v", got) != fmt.Sprintf("%#v", tt.want) {
				t.Errorf("got  %#v\nwant %#v", got, tt.want)
			}
		})
	}
}

func TestOutcomeString(t *testing.T) {
	for _, tt := range []struct {
		oc   Outcome
		want string
	}{
		{Outcome{Namespace: "default", Name: "obj", Handler: "create_fn", Cause: "create", Retry: 1, Result: Retrying, Delay: time.Second, Message: "boom"},
			"default/obj create_fn (create, retry 1): retrying in 1s: boom"},
		{Outcome{Name: "node", Handler: "fn", Cause: "event", Result: Succeeded}, "node fn (event, retry 0): succeeded"},
	} {
		if got := tt.oc.String(); got != tt.want {
			t.Errorf("String() = %q, want %q", got, tt.want)
		}
	}
}

// recorder is a testing.TB whose Fatalf and Errorf are recorded; Fatalf
// ends the goroutine, as testing's does.
type recorder struct {
	testing.TB
	mu     sync.Mutex
	fatals []string
	errors []string
}

func (r *recorder) Fatalf(format string, args ...any) {
	r.mu.Lock()
	r.fatals = append(r.fatals, fmt.Sprintf(format, args...))
	r.mu.Unlock()
	runtime.Goexit()
}

func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

// call runs fn as a test step would, returning when it returns or fails.
func (r *recorder) call(fn func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
	}()
	<-done
}

// unreachable is a configuration of an API server that refuses
// connections: the operator starts and keeps trying.
func unreachable() *rest.Config { return &rest.Config{Host: "https://127.0.0.1:1"} }

// An operator that cannot start: Stop returns why; waiting fails at once
// with it, not after the timeout.
func TestExitError(t *testing.T) {
	boom := errors.New("boom")
	for _, tt := range []struct {
		name  string
		start func(t testing.TB) *Operator
		want  string
	}{
		{"Start", func(t testing.TB) *Operator {
			return Start(t, unreachable(), func(*kopf.Registry) error { return boom })
		}, "registering the handlers: boom"},
		{"StartMain", func(t testing.TB) *Operator {
			return StartMain(t, unreachable(), func(ctx context.Context, opts ...kopf.Option) error { return boom })
		}, "boom"},
		{"StartCommand", func(t testing.TB) *Operator {
			return StartCommand(t, unreachable(), []string{"run", "--no-such-flag"}, func(*kopf.Registry) error { return nil })
		}, "unknown flag: --no-such-flag"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := &recorder{TB: t}
			op := tt.start(r)
			started := time.Now()
			r.call(func() { op.WaitLog("never logged", time.Minute) })
			if time.Since(started) > 10*time.Second {
				t.Errorf("WaitLog waited %s for an operator that exited", time.Since(started))
			}
			if len(r.fatals) != 1 || !strings.Contains(r.fatals[0], "the operator has exited: ") || !strings.Contains(r.fatals[0], tt.want) {
				t.Errorf("WaitLog failed with %q, want the exit error %q", r.fatals, tt.want)
			}
			r.call(func() { op.WaitOutcome(Match{}, time.Minute) })
			if len(r.fatals) != 2 || !strings.Contains(r.fatals[1], tt.want) || !strings.Contains(r.fatals[1], "(none)") {
				t.Errorf("WaitOutcome failed with %q, want the exit error %q and no outcomes", r.fatals, tt.want)
			}
			err := op.Stop()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Stop() = %v, want %q", err, tt.want)
			}
			if again := op.Stop(); again != err {
				t.Errorf("a second Stop() = %v, want %v again", again, err)
			}
			if !errors.Is(err, boom) && tt.name != "StartCommand" {
				t.Errorf("Stop() = %v, does not wrap the cause", err)
			}
		})
	}
}

// An operator that runs (its API server unreachable) is ready and stops
// cleanly; the timeout of a wait fails the test with what was awaited; the
// log is captured at debug level.
func TestStopAndTimeouts(t *testing.T) {
	r := &recorder{TB: t}
	op := Start(r, unreachable(), func(*kopf.Registry) error { return nil }, kopf.WithNamespaces("default"))
	r.call(func() { op.WaitLog("no such line", 100*time.Millisecond) })
	r.call(func() { op.WaitOutcome(Match{Handler: "create_fn"}, 100*time.Millisecond) })
	// With no handlers, there is nothing to watch: it is ready at once.
	r.call(func() { op.WaitReady(10 * time.Second) })
	want := []string{
		`the operator did not log "no such line": not in 100ms`,
		"1 outcome(s) of handler=create_fn expected, 0 seen: not in 100ms",
	}
	if len(r.fatals) != len(want) {
		t.Fatalf("failures: %q", r.fatals)
	}
	for i := range want {
		if !strings.Contains(r.fatals[i], want[i]) {
			t.Errorf("failure %q, want %q", r.fatals[i], want[i])
		}
	}
	select {
	case <-op.Done():
		t.Fatalf("the operator exited: %v", op.Stop())
	default:
	}
	if err := op.Stop(); err != nil {
		t.Errorf("Stop() = %v, want nil", err)
	}
	<-op.Done()
	if op.CountLog("[DEBUG") == 0 {
		t.Errorf("no debug line is captured: %s", op.Logs())
	}
}

func TestPollUntil(t *testing.T) {
	calls := 0
	errNotYet := errors.New("not yet")
	cond := func(context.Context) (bool, error) {
		calls++
		if calls < 3 {
			return false, errNotYet
		}
		return true, nil
	}
	if err := pollUntil(t.Context(), time.Millisecond, time.Minute, cond); err != nil || calls != 3 {
		t.Errorf("pollUntil = %v after %d calls, want nil after 3", err, calls)
	}
	never := func(context.Context) (bool, error) { return false, errNotYet }
	if err := pollUntil(t.Context(), time.Millisecond, 20*time.Millisecond, never); !errors.Is(err, errNotYet) {
		t.Errorf("pollUntil of a condition that never holds = %v, want the timeout with its last error", err)
	}
}
