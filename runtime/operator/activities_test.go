package operator

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/kopf-go/kopf/internal/testutil"
	"github.com/kopf-go/kopf/runtime/activities"
	"github.com/kopf-go/kopf/runtime/apiserver"
	"github.com/kopf-go/kopf/runtime/causes"
	"github.com/kopf-go/kopf/runtime/execution"
	"github.com/kopf-go/kopf/runtime/kwargs"
	"github.com/kopf-go/kopf/runtime/logging"
	"github.com/kopf-go/kopf/runtime/registry"
	"github.com/kopf-go/kopf/runtime/settings"
)

// TestCredentials checks where the operator's credentials come from: the
// configuration given, the built-in login, or the login handlers, which
// win over both and may call the built-in one (LoginViaClient).
func TestCredentials(t *testing.T) {
	t.Setenv("KUBECONFIG", "/nonexistent") // the built-in login is Kopf's login_with_kubeconfig
	given := &rest.Config{Host: "https://given"}
	loaded := &rest.Config{Host: "https://loaded"}
	load := func(context.Context) (*rest.Config, error) { return loaded, nil }
	login := func(fn func(ctx context.Context, kw kwargs.Activity) (*registry.ConnectionInfo, error)) *registry.Registry {
		reg := registry.New()
		if err := reg.AddActivity(registry.ActivityHandler{ID: "login_fn", Activity: causes.ActivityAuthentication, Errors: registry.ErrorsPermanent, Fn: registry.LoginFunc(fn)}); err != nil {
			t.Fatal(err)
		}
		return reg
	}
	viaClient := login(activities.LoginViaClient)
	tests := []struct {
		name     string
		cfg      *rest.Config
		login    LoginFunc
		reg      *registry.Registry
		wantHost string
		wantErr  string
		wantLog  []string // in order
		relogin  bool     // opts.Login is set afterwards
		// reloginHost is the host of the re-login's credentials, if not
		// wantHost.
		reloginHost string
		quiet       bool // nothing is logged
		// wantNamespace is the login handlers' DefaultNamespace.
		wantNamespace string
	}{
		{name: "the configuration given", cfg: given, reg: registry.New(), wantHost: "https://given", quiet: true},
		{name: "the configuration given, with a way to reload it", cfg: given, login: load, reg: registry.New(), wantHost: "https://given", relogin: true, reloginHost: "https://loaded", quiet: true},
		{name: "the built-in login", login: load, reg: registry.New(), wantHost: "https://loaded", relogin: true,
			wantLog: []string{"Initial authentication has been initiated.", "Activity 'login_with_kubeconfig' succeeded.", "Initial authentication has finished."}},
		{name: "no credentials at all", reg: registry.New(), wantErr: "no credentials"},
		{name: "login handlers over the configuration given", cfg: given, reg: login(func(context.Context, kwargs.Activity) (*registry.ConnectionInfo, error) {
			return &registry.ConnectionInfo{Config: &rest.Config{Host: "https://handler"}, DefaultNamespace: "operators"}, nil
		}), wantHost: "https://handler", relogin: true, wantNamespace: "operators",
			wantLog: []string{"Initial authentication has been initiated.", "Activity 'login_fn' succeeded.", "Initial authentication has finished."}},
		{name: "LoginViaClient gives the configuration given", cfg: given, reg: viaClient, wantHost: "https://given", relogin: true},
		{name: "LoginViaClient gives the built-in login's", login: load, reg: viaClient, wantHost: "https://loaded", relogin: true},
		{name: "login handlers without credentials", cfg: given, reg: login(func(context.Context, kwargs.Activity) (*registry.ConnectionInfo, error) { return nil, nil }),
			wantErr: "no credentials were retrieved from the login handlers",
			wantLog: []string{"Initial authentication has failed: no credentials were retrieved from the login handlers."}},
		{name: "a failing login handler", cfg: given, reg: login(func(context.Context, kwargs.Activity) (*registry.ConnectionInfo, error) {
			return nil, errors.New("denied")
		}), wantErr: "Activity 'login_fn': denied",
			wantLog: []string{"Activity 'login_fn' failed with an exception and will stop now: denied"}},
		{name: "a panicking login handler", cfg: given, reg: login(func(context.Context, kwargs.Activity) (*registry.ConnectionInfo, error) {
			panic("oops")
		}), wantErr: "Activity 'login_fn': panic: oops"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf testutil.Buffer
			opts := Options{Login: tt.login, Settings: settings.Default(), Memo: kwargs.Memo{}, Logger: logging.New(&buf, logging.Plain, slog.LevelInfo)}
			info, relogin, err := credentials(t.Context(), tt.cfg, tt.reg, &opts)
			var got *rest.Config
			if info != nil {
				got = info.Config
				if info.DefaultNamespace != tt.wantNamespace {
					t.Errorf("default namespace %q, want %q", info.DefaultNamespace, tt.wantNamespace)
				}
			}
			if tt.wantErr == "" && (relogin != nil) != tt.relogin {
				t.Errorf("the credentials are loaded again: %v, want %v", relogin != nil, tt.relogin)
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("credentials: %v, want %q", err, tt.wantErr)
				}
			} else if err != nil {
				t.Fatalf("credentials: %v", err)
			} else if got.Host != tt.wantHost {
				t.Errorf("host %q, want %q", got.Host, tt.wantHost)
			}
			if tt.wantErr == "" && (opts.Login != nil) != tt.relogin {
				t.Errorf("a re-login is set: %v, want %v", opts.Login != nil, tt.relogin)
			}
			if tt.relogin && tt.wantErr == "" {
				want := tt.wantHost
				if tt.reloginHost != "" {
					want = tt.reloginHost
				}
				if again, err := opts.Login(t.Context()); err != nil || again.Host != want {
					t.Errorf("the re-login gives %v, %v; want %s", again, err, want)
				}
			}
			logs := buf.String()
			for _, line := range tt.wantLog {
				i := strings.Index(logs, line+"\n")
				if i < 0 {
					t.Fatalf("the log lacks %q (in order):\n%s", line, buf.String())
				}
				logs = logs[i+len(line):]
			}
			if tt.quiet && buf.String() != "" {
				t.Errorf("logged %q, want nothing", buf.String())
			}
		})
	}
}

// TestStartupAndCleanup checks the operator's verdicts on its startup and
// cleanup activities: a failure stops it with the handler named, a
// cancellation is a stop, a cleanup that overruns its timeout is cut.
func TestStartupAndCleanup(t *testing.T) {
	handler := func(activity causes.Activity, fn registry.ActivityFn) *registry.Registry {
		reg := registry.New()
		if err := reg.AddActivity(registry.ActivityHandler{ID: "fn", Activity: activity, Errors: registry.ErrorsPermanent, Fn: fn}); err != nil {
			t.Fatal(err)
		}
		return reg
	}
	failing := func(context.Context, *kwargs.Activity) (any, error) { return nil, execution.NewPermanentError("boom") }
	blocking := func(ctx context.Context, _ *kwargs.Activity) (any, error) { <-ctx.Done(); return nil, ctx.Err() }
	newOpts := func(buf *testutil.Buffer) Options {
		s := settings.Default()
		s.Execution.CleanupTimeout = 10 * time.Millisecond
		return Options{Settings: s, Memo: kwargs.Memo{}, Logger: logging.New(buf, logging.Plain, slog.LevelInfo)}
	}

	t.Run("a failed startup", func(t *testing.T) {
		var buf testutil.Buffer
		ok, err := startup(t.Context(), handler(causes.ActivityStartup, failing), newOpts(&buf))
		if ok || err == nil || !strings.Contains(err.Error(), "the startup activity has failed: one or more handlers failed: Activity 'fn': boom") {
			t.Errorf("startup: %v, %v; want the failure", ok, err)
		}
	})
	t.Run("a cancelled startup", func(t *testing.T) {
		var buf testutil.Buffer
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		ok, err := startup(ctx, handler(causes.ActivityStartup, blocking), newOpts(&buf))
		if ok || err != nil {
			t.Errorf("startup: %v, %v; want not ok, no error", ok, err)
		}
		if !strings.Contains(buf.String(), "Startup activity is only partially executed due to cancellation.") {
			t.Errorf("the log:\n%s", buf.String())
		}
	})
	t.Run("a failed cleanup", func(t *testing.T) {
		var buf testutil.Buffer
		if err := cleanup(t.Context(), handler(causes.ActivityCleanup, failing), newOpts(&buf)); err == nil || !strings.Contains(err.Error(), "Activity 'fn': boom") {
			t.Errorf("cleanup: %v; want the failure", err)
		}
	})
	t.Run("a cleanup cut at its timeout, after the operator's stop", func(t *testing.T) {
		var buf testutil.Buffer
		ctx, cancel := context.WithCancel(t.Context())
		cancel() // the operator has stopped
		if err := cleanup(ctx, handler(causes.ActivityCleanup, blocking), newOpts(&buf)); err != nil {
			t.Errorf("cleanup: %v; want none", err)
		}
		if !strings.Contains(buf.String(), "Cleanup activity is only partially executed due to cancellation: it has not finished in 0.01 seconds (settings.Execution.CleanupTimeout).") {
			t.Errorf("the log:\n%s", buf.String())
		}
	})
}

// TestProber checks the runner of probe handlers: the results by id, the
// operator's values (its configuration) in the handlers' context, one
// probing at a time, and a caller that gives up while another probes.
func TestProber(t *testing.T) {
	release := make(chan struct{})
	entered := make(chan struct{}, 2)
	reg := registry.New()
	err := reg.AddActivity(registry.ActivityHandler{ID: "host", Activity: causes.ActivityProbe, Fn: func(ctx context.Context, kw *kwargs.Activity) (any, error) {
		entered <- struct{}{}
		<-release
		return apiserver.RESTConfig(ctx).Host, nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{Settings: settings.Default(), Memo: kwargs.Memo{}, Logger: slog.New(slog.DiscardHandler)}
	probe := prober(apiserver.WithRESTConfig(t.Context(), &rest.Config{Host: "https://operator"}), reg, opts)

	first := make(chan map[string]any, 1)
	go func() {
		got, err := probe(t.Context())
		if err != nil {
			t.Error(err)
		}
		first <- got
	}()
	<-entered
	// Meanwhile, another probing waits, and gives up with its context.
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	if _, err := probe(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a probing while another runs: %v, want its context's deadline", err)
	}
	select {
	case <-entered:
		t.Error("two probings ran at once")
	default:
	}
	close(release)
	if got := <-first; got["host"] != "https://operator" {
		t.Errorf("probes = %v, want the operator's host from the context", got)
	}
}

// TestObjectsMemo checks that the objects' memos are copied from a
// snapshot: what activities add to the operator's memo later is not seen.
func TestObjectsMemo(t *testing.T) {
	shared := &struct{}{}
	memo := kwargs.Memo{"shared": shared}
	base := objectsMemo(memo)
	memo["later"] = 1
	if _, ok := base["later"]; ok || base["shared"] != shared {
		t.Errorf("the objects' base memo is %v, want the snapshot with the shared value", base)
	}
}

// TestBuiltinLoginID: the built-in login is named as Kopf's fallback login
// handler would be where Kopf finds the same credentials.
func TestBuiltinLoginID(t *testing.T) {
	const token = "/var/run/secrets/kubernetes.io/serviceaccount/token"
	for _, tt := range []struct {
		name  string
		env   map[string]string
		files []string
		want  string
	}{
		{"$KUBECONFIG", map[string]string{"KUBECONFIG": "/k", "HOME": "/h"}, []string{token}, "login_with_kubeconfig"},
		{"~/.kube/config", map[string]string{"HOME": "/h"}, []string{"/h/.kube/config", token}, "login_with_kubeconfig"},
		{"a service account", map[string]string{"HOME": "/h"}, []string{token}, "login_with_service_account"},
		{"neither (a --kubeconfig)", map[string]string{"HOME": "/h"}, nil, "login_with_kubeconfig"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := builtinLoginID(func(k string) string { return tt.env[k] }, func(p string) bool { return slices.Contains(tt.files, p) })
			if got != tt.want {
				t.Errorf("builtinLoginID() = %q, want %q", got, tt.want)
			}
		})
	}
}
