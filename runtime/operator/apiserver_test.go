package operator

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kopf-go/kopf/internal/testutil"

	"k8s.io/client-go/rest"

	"github.com/kopf-go/kopf/runtime/causes"
	"github.com/kopf-go/kopf/runtime/kwargs"
	"github.com/kopf-go/kopf/runtime/logging"
	"github.com/kopf-go/kopf/runtime/registry"
	"github.com/kopf-go/kopf/runtime/resources"
)

// fakeServer is an API server with no resources that accepts one bearer
// token and records the User-Agent of every request.
type fakeServer struct {
	*httptest.Server
	token string
	mu    sync.Mutex
	seen  []string // "Authorization User-Agent"
}

func newFakeServer(t *testing.T, token string) *fakeServer {
	s := &fakeServer{token: token}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.seen = append(s.seen, r.Header.Get("Authorization")+" "+r.UserAgent())
		s.mu.Unlock()
		if r.Header.Get("Authorization") != "Bearer "+s.token {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = io.WriteString(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401}`)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/api":
			_, _ = io.WriteString(w, `{"kind":"APIVersions","versions":["v1"]}`)
		case "/api/v1":
			_, _ = io.WriteString(w, `{"kind":"APIResourceList","groupVersion":"v1","resources":[]}`)
		case "/apis":
			_, _ = io.WriteString(w, `{"kind":"APIGroupList","apiVersion":"v1","groups":[]}`)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *fakeServer) requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.seen...)
}

// runAgainst runs the operator against the server, with the activity
// handlers given, until the log has the text, and returns the log.
func runAgainst(t *testing.T, cfg *rest.Config, login LoginFunc, text string, activities ...registry.ActivityHandler) string {
	t.Helper()
	reg := registry.New()
	for _, h := range activities {
		if err := reg.AddActivity(h); err != nil {
			t.Fatal(err)
		}
	}
	if err := reg.AddChanging(registry.ChangingHandler{
		ID: "fn", Selector: resources.Selector{Group: "kopf.dev", Name: "kopfexamples"}, Reasons: []causes.Reason{causes.Create},
		Fn: func(context.Context, *kwargs.Changing) (any, error) { return nil, nil },
	}); err != nil {
		t.Fatal(err)
	}
	var out logBuffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, reg, Options{Config: cfg, AllNamespaces: true, Standalone: true, Login: login, RescanInterval: time.Second,
			Logger: logging.New(&out, logging.Plain, slog.LevelInfo)})
	}()
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(out.String(), text) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run: %v", err)
	}
	if !strings.Contains(out.String(), text) {
		t.Fatalf("%q is not logged in 20 s; the log:\n%s", text, out.String())
	}
	return out.String()
}

// A refused token is reported as the server's 401; with Login, the
// credentials are loaded again, and the new token is sent from then on.
// Every request carries kopf-go's User-Agent.
func TestRunUnauthorizedReloadsCredentials(t *testing.T) {
	s := newFakeServer(t, "new-token")
	cfg := &rest.Config{Host: s.URL, BearerToken: "old-token"}
	var logins int
	var mu sync.Mutex
	login := func(context.Context) (*rest.Config, error) {
		mu.Lock()
		defer mu.Unlock()
		logins++
		return &rest.Config{Host: s.URL, BearerToken: "new-token"}, nil
	}
	// Discovery succeeds with the new token: the resource is reported absent.
	log := runAgainst(t, cfg, login, "Unresolved resources cannot be served (try creating their CRDs): kopf.dev/kopfexamples")
	if want := "Re-authentication has been initiated.\nRe-authentication has finished.\nUnresolved"; !strings.HasPrefix(log, want) {
		t.Errorf("the log does not start with %q:\n%s", want, log)
	}
	if strings.Contains(log, "unreachable") {
		t.Errorf("the server is reported unreachable although the refused request succeeded again:\n%s", log)
	}
	if logins != 1 {
		t.Errorf("the credentials were loaded %d times, want 1", logins)
	}
	reqs := s.requests()
	if len(reqs) < 3 || reqs[0] != "Bearer old-token "+UserAgent() || reqs[1] != "Bearer new-token "+UserAgent() {
		t.Errorf("requests (Authorization User-Agent) are %q, want the old token once, then the new one, with %q", reqs, UserAgent())
	}
	for _, r := range reqs[1:] {
		if !strings.HasPrefix(r, "Bearer new-token kopf-go/"+Version()+" (") {
			t.Errorf("a later request has %q", r)
		}
	}
}

// Credentials of login handlers with an expiration are renewed at it,
// before a request carries them: no request is refused.
func TestRunExpiringCredentials(t *testing.T) {
	s := newFakeServer(t, "token")
	var mu sync.Mutex
	var logins []time.Time
	login := registry.ActivityHandler{ID: "login", Activity: causes.ActivityAuthentication, Errors: registry.ErrorsPermanent,
		Fn: registry.LoginFunc(func(context.Context, kwargs.Activity) (*registry.ConnectionInfo, error) {
			mu.Lock()
			defer mu.Unlock()
			logins = append(logins, time.Now())
			expires := time.Now().Add(time.Second)
			if len(logins) > 1 {
				expires = time.Time{} // never again
			}
			return &registry.ConnectionInfo{Config: &rest.Config{Host: s.URL, BearerToken: "token"}, Expiration: expires}, nil
		})}
	log := runAgainst(t, nil, nil, "Re-authentication has finished.", login)
	if !strings.Contains(log, "Initial authentication has finished.") || strings.Count(log, "Re-authentication has been initiated.") != 1 {
		t.Errorf("the log:\n%s", log)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(logins) != 2 || logins[1].Sub(logins[0]) < time.Second {
		t.Errorf("logins at %v, want two, the second at the first's expiration", logins)
	}
	for _, r := range s.requests() {
		if !strings.HasPrefix(r, "Bearer token ") {
			t.Errorf("a request with %q", r)
		}
	}
}

// Without Login, or with credentials unchanged at their source, the 401
// persists and is reported; the CRD hint is not given.
func TestRunUnauthorizedWithoutNewCredentials(t *testing.T) {
	s := newFakeServer(t, "good-token")
	for _, tc := range []struct {
		name  string
		login LoginFunc
		want  string
	}{
		{"no login", nil, " still refuses the operator's credentials after 1 seconds (401 Unauthorized): GET /version."},
		{"same token", func(context.Context) (*rest.Config, error) { return &rest.Config{BearerToken: "bad-token"}, nil },
			"Re-authentication has failed: the credentials at their source are the ones refused (401 Unauthorized)."},
		{"no token", func(context.Context) (*rest.Config, error) { return &rest.Config{}, nil },
			"Re-authentication has failed: the credentials have no bearer token"},
		{"source fails", func(context.Context) (*rest.Config, error) { return nil, errors.New("no kubeconfig") },
			"Re-authentication has failed: loading the credentials: no kubeconfig."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := &rest.Config{Host: s.URL, BearerToken: "bad-token", UserAgent: "mine/1.0"}
			log := runAgainst(t, cfg, tc.login, tc.want)
			if strings.Contains(log, "Unresolved resources") {
				t.Errorf("the CRD hint is given although discovery failed:\n%s", log)
			}
			for _, r := range s.requests() {
				if !strings.HasSuffix(r, " mine/1.0") {
					t.Errorf("the configured User-Agent is not kept: %q", r)
				}
			}
		})
	}
}

func TestUserAgent(t *testing.T) {
	if got := UserAgent(); !strings.HasPrefix(got, "kopf-go/"+Version()+" (") || !strings.HasSuffix(got, ")") {
		t.Errorf("UserAgent() = %q, want kopf-go/%s (<binary>)", got, Version())
	}
}

type logBuffer struct{ testutil.Buffer }

func (b *logBuffer) lines() int { return strings.Count(b.String(), "\n") }
