package activities

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"k8s.io/client-go/rest"

	"github.com/kopf-go/kopf/internal/testutil"
	"github.com/kopf-go/kopf/runtime/causes"
	"github.com/kopf-go/kopf/runtime/execution"
	"github.com/kopf-go/kopf/runtime/kwargs"
	"github.com/kopf-go/kopf/runtime/logging"
	"github.com/kopf-go/kopf/runtime/registry"
	"github.com/kopf-go/kopf/runtime/settings"
)

// calls records each handler's attempts: the retry it was given.
type calls map[string][]int

// handler returns an activity handler that records its attempts in c and
// returns what fn returns for the attempt's retry.
func handler(c calls, id string, fn func(retry int) (any, error)) *registry.ActivityHandler {
	return &registry.ActivityHandler{ID: id, Activity: causes.ActivityStartup, Fn: func(_ context.Context, kw *kwargs.Activity) (any, error) {
		c[id] = append(c[id], kw.Retry)
		return fn(kw.Retry)
	}}
}

// logLines returns the plain log as lines.
func logLines(buf *testutil.Buffer) []string {
	return strings.Split(strings.TrimSpace(buf.String()), "\n")
}

func TestRun(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		name string
		// handlers returns the activity's handlers, recording into c.
		handlers func(c calls) []*registry.ActivityHandler
		// backoff is the settings' default backoff.
		backoff     time.Duration
		wantResults map[string]any
		wantErr     string // a substring; "" for none
		wantCalls   calls
		wantElapsed time.Duration // on the fake clock
		wantLog     []string      // lines, in order, among others
	}{
		{
			name: "success with and without a result",
			handlers: func(c calls) []*registry.ActivityHandler {
				return []*registry.ActivityHandler{
					handler(c, "with_result", func(int) (any, error) { return 42, nil }),
					handler(c, "without", func(int) (any, error) { return nil, nil }),
				}
			},
			wantResults: map[string]any{"with_result": 42},
			wantCalls:   calls{"with_result": {0}, "without": {0}},
			wantLog:     []string{"Activity 'with_result' succeeded.", "Activity 'without' succeeded."},
		},
		{
			name: "a TemporaryError is retried after its delay (Kopf's startup_fn_retried)",
			handlers: func(c calls) []*registry.ActivityHandler {
				return []*registry.ActivityHandler{
					handler(c, "startup_fn_retried", func(retry int) (any, error) {
						if retry < 3 {
							return nil, execution.NewTemporaryError("Going to succeed in 3s", time.Second)
						}
						return nil, nil
					}),
				}
			},
			wantResults: map[string]any{},
			wantCalls:   calls{"startup_fn_retried": {0, 1, 2, 3}},
			wantElapsed: 3 * time.Second,
			wantLog: []string{
				"Activity 'startup_fn_retried' failed temporarily: Going to succeed in 3s",
				"Activity 'startup_fn_retried' failed temporarily: Going to succeed in 3s",
				"Activity 'startup_fn_retried' failed temporarily: Going to succeed in 3s",
				"Activity 'startup_fn_retried' succeeded.",
			},
		},
		{
			name: "an arbitrary error is retried after the settings' backoff",
			handlers: func(c calls) []*registry.ActivityHandler {
				return []*registry.ActivityHandler{
					handler(c, "flaky", func(retry int) (any, error) {
						if retry == 0 {
							return nil, boom
						}
						return "ok", nil
					}),
				}
			},
			backoff:     5 * time.Second,
			wantResults: map[string]any{"flaky": "ok"},
			wantCalls:   calls{"flaky": {0, 1}},
			wantElapsed: 5 * time.Second,
			wantLog:     []string{"Activity 'flaky' failed with an exception and will try again in 5 seconds: boom", "Activity 'flaky' succeeded."},
		},
		{
			name: "handlers are retried in rounds, each after its own delay",
			handlers: func(c calls) []*registry.ActivityHandler {
				slow := handler(c, "slow", func(retry int) (any, error) {
					if retry == 0 {
						return nil, execution.NewTemporaryError("later", 3*time.Second)
					}
					return nil, nil
				})
				fast := handler(c, "fast", func(retry int) (any, error) {
					if retry < 2 {
						return nil, execution.NewTemporaryError("soon", time.Second)
					}
					return nil, nil
				})
				return []*registry.ActivityHandler{slow, fast}
			},
			wantResults: map[string]any{},
			wantCalls:   calls{"slow": {0, 1}, "fast": {0, 1, 2}},
			wantElapsed: 3 * time.Second,
			wantLog: []string{
				"Activity 'slow' failed temporarily: later",
				"Activity 'fast' failed temporarily: soon",
				"Activity 'fast' failed temporarily: soon",
				"Activity 'fast' succeeded.",
				"Activity 'slow' succeeded.",
			},
		},
		{
			name: "a PermanentError fails the activity; the other handlers still run",
			handlers: func(c calls) []*registry.ActivityHandler {
				return []*registry.ActivityHandler{
					handler(c, "broken", func(int) (any, error) { return nil, execution.NewPermanentError("cannot start") }),
					handler(c, "fine", func(int) (any, error) { return 1, nil }),
				}
			},
			wantErr:   "the startup activity has failed: one or more handlers failed: Activity 'broken': cannot start",
			wantCalls: calls{"broken": {0}, "fine": {0}},
			wantLog:   []string{"Activity 'broken' failed permanently: cannot start", "Activity 'fine' succeeded."},
		},
		{
			name: "errors=permanent stops at an arbitrary error",
			handlers: func(c calls) []*registry.ActivityHandler {
				h := handler(c, "login_fn", func(int) (any, error) { return nil, boom })
				h.Errors = registry.ErrorsPermanent
				return []*registry.ActivityHandler{h}
			},
			wantErr:   "Activity 'login_fn': boom",
			wantCalls: calls{"login_fn": {0}},
			wantLog:   []string{"Activity 'login_fn' failed with an exception and will stop now: boom"},
		},
		{
			name: "errors=ignored succeeds despite an arbitrary error",
			handlers: func(c calls) []*registry.ActivityHandler {
				h := handler(c, "careless", func(int) (any, error) { return "lost", boom })
				h.Errors = registry.ErrorsIgnored
				return []*registry.ActivityHandler{h}
			},
			wantResults: map[string]any{},
			wantCalls:   calls{"careless": {0}},
			wantLog:     []string{"Activity 'careless' failed with an exception and will ignore it: boom"},
		},
		{
			name: "a panic is the handler's error (execution.Guard)",
			handlers: func(c calls) []*registry.ActivityHandler {
				h := handler(c, "panicky", func(int) (any, error) { panic("oops") })
				h.Errors = registry.ErrorsPermanent
				return []*registry.ActivityHandler{h}
			},
			wantErr:   "Activity 'panicky': panic: oops",
			wantCalls: calls{"panicky": {0}},
			wantLog:   []string{"Activity 'panicky' failed with an exception and will stop now: panic: oops"},
		},
		{
			name: "retries= ends the retries",
			handlers: func(c calls) []*registry.ActivityHandler {
				h := handler(c, "hopeless", func(int) (any, error) { return nil, execution.NewTemporaryError("not yet", time.Second) })
				h.Retries = 2
				return []*registry.ActivityHandler{h}
			},
			wantErr:     "Activity 'hopeless': not yet",
			wantCalls:   calls{"hopeless": {0, 1}},
			wantElapsed: time.Second,
			wantLog: []string{
				"Activity 'hopeless' failed temporarily: not yet",
				"Activity 'hopeless' failed temporarily but will exceed 2 retries: not yet",
			},
		},
		{
			name: "timeout= ends the retries",
			handlers: func(c calls) []*registry.ActivityHandler {
				h := handler(c, "slowpoke", func(int) (any, error) { return nil, boom })
				h.Timeout, h.Backoff = 3*time.Second, 2*time.Second
				return []*registry.ActivityHandler{h}
			},
			wantErr:     "Activity 'slowpoke': boom",
			wantCalls:   calls{"slowpoke": {0, 1}},
			wantElapsed: 2 * time.Second,
			wantLog: []string{
				"Activity 'slowpoke' failed with an exception and will try again in 2 seconds: boom",
				"Activity 'slowpoke' failed with an exception and will stop now (it would time out in 3 seconds on the next attempt): boom",
			},
		},
		{
			name:        "no handlers",
			handlers:    func(calls) []*registry.ActivityHandler { return nil },
			wantResults: map[string]any{},
			wantCalls:   calls{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var buf testutil.Buffer
				s := settings.Default()
				if tt.backoff != 0 {
					s.Execution.DefaultBackoff = tt.backoff
				}
				c := calls{}
				base := kwargs.Activity{Activity: causes.ActivityStartup, Settings: s, Logger: logging.New(&buf, logging.Plain, slog.LevelInfo)}
				start := time.Now()
				results, err := Run(t.Context(), tt.handlers(c), base)
				elapsed := time.Since(start)
				if tt.wantErr == "" && err != nil {
					t.Fatalf("Run: %v", err)
				}
				if tt.wantErr != "" {
					var aerr *Error
					if !errors.As(err, &aerr) || !strings.Contains(err.Error(), tt.wantErr) {
						t.Fatalf("Run's error = %v, want an *Error with %q", err, tt.wantErr)
					}
					if results != nil {
						t.Errorf("results of a failed activity = %v, want none", results)
					}
				} else if len(results) != len(tt.wantResults) {
					t.Errorf("results = %v, want %v", results, tt.wantResults)
				} else {
					for k, v := range tt.wantResults {
						if results[k] != v {
							t.Errorf("results[%q] = %v, want %v", k, results[k], v)
						}
					}
				}
				if len(c) != len(tt.wantCalls) {
					t.Errorf("calls = %v, want %v", c, tt.wantCalls)
				}
				for id, want := range tt.wantCalls {
					if got := c[id]; len(got) != len(want) || !equalInts(got, want) {
						t.Errorf("%s's retries = %v, want %v", id, got, want)
					}
				}
				if elapsed != tt.wantElapsed {
					t.Errorf("elapsed %s on the fake clock, want %s", elapsed, tt.wantElapsed)
				}
				lines := logLines(&buf)
				i := 0
				for _, line := range lines {
					if i < len(tt.wantLog) && line == tt.wantLog[i] {
						i++
					}
				}
				if i < len(tt.wantLog) {
					t.Errorf("the log lacks %q (in order); it is:\n%s", tt.wantLog[i], buf.String())
				}
			})
		})
	}
}

func equalInts(a, b []int) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return len(a) == len(b)
}

// TestRunKwargs checks what handlers get: the base kwargs as given (the
// very memo and settings), their param, and their retry, started and
// runtime.
func TestRunKwargs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		memo := kwargs.Memo{}
		s := settings.Default()
		var got []kwargs.Activity
		h := &registry.ActivityHandler{ID: "h", Activity: causes.ActivityCleanup, Param: "p", Fn: func(_ context.Context, kw *kwargs.Activity) (any, error) {
			got = append(got, *kw)
			kw.Memo["seen"] = kw.Retry
			kw.Settings.Posting.Enabled = false
			if kw.Retry == 0 {
				return nil, execution.NewTemporaryError("again", 2*time.Second)
			}
			return nil, nil
		}}
		start := time.Now()
		if _, err := Run(t.Context(), []*registry.ActivityHandler{h}, kwargs.Activity{Activity: causes.ActivityCleanup, Settings: s, Memo: memo, Logger: slog.New(slog.DiscardHandler)}); err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 {
			t.Fatalf("%d calls, want 2", len(got))
		}
		for i, kw := range got {
			if kw.Activity != causes.ActivityCleanup || kw.Param != "p" || kw.Retry != i || !kw.Started.Equal(start) {
				t.Errorf("call %d: activity %q, param %v, retry %d, started %s; want cleanup, p, %d, %s", i, kw.Activity, kw.Param, kw.Retry, kw.Started, i, start)
			}
		}
		if got[1].Runtime != 2*time.Second {
			t.Errorf("the second call's runtime = %s, want 2s", got[1].Runtime)
		}
		if memo["seen"] != 1 {
			t.Errorf("the handlers' memo is not the one given: %v", memo)
		}
		if s.Posting.Enabled {
			t.Error("the handlers' settings are not the ones given")
		}
	})
}

// TestRunInterrupted checks that a done ctx ends the activity, during a
// handler's call or between its retries, with ctx's error.
func TestRunInterrupted(t *testing.T) {
	tests := []struct {
		name string
		fn   func(ctx context.Context, cancel context.CancelFunc) (any, error)
	}{
		{"while waiting for a retry", func(_ context.Context, cancel context.CancelFunc) (any, error) {
			time.AfterFunc(time.Second, cancel)
			return nil, execution.NewTemporaryError("later", time.Minute)
		}},
		{"during the call", func(ctx context.Context, cancel context.CancelFunc) (any, error) {
			cancel()
			<-ctx.Done()
			return nil, ctx.Err()
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx, cancel := context.WithCancel(t.Context())
				defer cancel()
				n := 0
				h := &registry.ActivityHandler{ID: "h", Activity: causes.ActivityStartup, Fn: func(ctx context.Context, _ *kwargs.Activity) (any, error) {
					n++
					return tt.fn(ctx, cancel)
				}}
				start := time.Now()
				_, err := Run(ctx, []*registry.ActivityHandler{h}, kwargs.Activity{Activity: causes.ActivityStartup, Logger: slog.New(slog.DiscardHandler)})
				if !errors.Is(err, context.Canceled) {
					t.Fatalf("Run's error = %v, want context.Canceled", err)
				}
				if n != 1 || time.Since(start) > time.Second {
					t.Errorf("%d calls in %s, want 1 within 1s", n, time.Since(start))
				}
			})
		})
	}
}

func TestLogin(t *testing.T) {
	login := func(id string, info *registry.ConnectionInfo, err error) *registry.ActivityHandler {
		return &registry.ActivityHandler{ID: id, Activity: causes.ActivityAuthentication,
			Fn: registry.LoginFunc(func(context.Context, kwargs.Activity) (*registry.ConnectionInfo, error) { return info, err })}
	}
	cfg := func(host string, priority int) *registry.ConnectionInfo {
		return &registry.ConnectionInfo{Config: &rest.Config{Host: host}, Priority: priority}
	}
	tests := []struct {
		name     string
		handlers []*registry.ActivityHandler
		wantHost string
		wantErr  string
	}{
		{"one", []*registry.ActivityHandler{login("a", cfg("https://a", 0), nil)}, "https://a", ""},
		{"the highest priority", []*registry.ActivityHandler{login("a", cfg("https://a", 10), nil), login("b", cfg("https://b", 20), nil)}, "https://b", ""},
		{"the first among equals", []*registry.ActivityHandler{login("a", cfg("https://a", 5), nil), login("b", cfg("https://b", 5), nil)}, "https://a", ""},
		{"a handler without credentials is skipped", []*registry.ActivityHandler{login("none", nil, nil), login("b", cfg("https://b", 0), nil)}, "https://b", ""},
		{"no credentials", []*registry.ActivityHandler{login("none", nil, nil)}, "", ErrNoCredentials.Error()},
		{"no Config", []*registry.ActivityHandler{login("empty", &registry.ConnectionInfo{}, nil)}, "", `login handler "empty" returned a ConnectionInfo without a Config`},
		{"a failed handler", []*registry.ActivityHandler{login("bad", nil, execution.NewPermanentError("denied"))}, "", "Activity 'bad': denied"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Login(t.Context(), tt.handlers, kwargs.Activity{Logger: slog.New(slog.DiscardHandler)})
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Login's error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Host != tt.wantHost {
				t.Errorf("host = %q, want %q", got.Host, tt.wantHost)
			}
		})
	}
}

// TestLoginViaClient checks that the built-in login returns the operator's
// own way to the credentials when the context carries it.
func TestLoginViaClient(t *testing.T) {
	want := &rest.Config{Host: "https://operator"}
	ctx := WithClientLogin(t.Context(), func(context.Context) (*rest.Config, error) { return want, nil })
	info, err := LoginViaClient(ctx, kwargs.Activity{})
	if err != nil {
		t.Fatal(err)
	}
	if info.Config != want {
		t.Errorf("LoginViaClient = %+v, want the operator's configuration", info.Config)
	}
	t.Setenv("KUBECONFIG", t.TempDir()+"/missing")
	if _, err := LoginViaClient(t.Context(), kwargs.Activity{}); err == nil {
		t.Error("LoginViaClient without a kubeconfig nor a cluster: no error")
	}
}

func TestNamespaceIn(t *testing.T) {
	path := filepath.Join(t.TempDir(), "namespace")
	if got := namespaceIn(path); got != "" {
		t.Errorf("no file: %q", got)
	}
	if err := os.WriteFile(path, []byte("operators\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := namespaceIn(path); got != "operators" {
		t.Errorf("the file's: %q, want operators", got)
	}
}
