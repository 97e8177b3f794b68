package operator

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/kopf-go/kopf/internal/testutil"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/kopf-go/kopf/runtime/causes"
	"github.com/kopf-go/kopf/runtime/kwargs"
	"github.com/kopf-go/kopf/runtime/logging"
	"github.com/kopf-go/kopf/runtime/registry"
	"github.com/kopf-go/kopf/runtime/resources"
)

// An outage is reported at once, then after 1, 2, 4... seconds, never more
// than maxSilence apart, and its end once.
func TestAPIHealthReportsWithBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &records{}
		h := newAPIHealth("https://api:6443", slog.New(rec), 5*time.Second)
		defer h.stop()
		start := time.Now()
		refused := fmt.Errorf("GET /api: %w", syscall.ECONNREFUSED)
		h.failed("connection refused", refused)
		h.failed("connection refused", refused) // a second failure says nothing more
		time.Sleep(22*time.Second + 100*time.Millisecond)
		h.succeeded()
		h.succeeded()
		time.Sleep(time.Minute)
		got := rec.all()
		want := []struct {
			at  time.Duration
			msg string
		}{
			{0, "WARN The API server https://api:6443 is unreachable (connection refused): GET /api: connection refused."},
			{1, "WARN The API server https://api:6443 is still unreachable after 1 seconds (connection refused): GET /api: connection refused."},
			{3, "WARN The API server https://api:6443 is still unreachable after 3 seconds (connection refused): GET /api: connection refused."},
			{7, "WARN The API server https://api:6443 is still unreachable after 7 seconds (connection refused): GET /api: connection refused."},
			{12, "WARN The API server https://api:6443 is still unreachable after 12 seconds (connection refused): GET /api: connection refused."},
			{17, "WARN The API server https://api:6443 is still unreachable after 17 seconds (connection refused): GET /api: connection refused."},
			{22, "WARN The API server https://api:6443 is still unreachable after 22 seconds (connection refused): GET /api: connection refused."},
			{22, "INFO The API server https://api:6443 is reachable again after 22.1 seconds."},
		}
		if len(got) != len(want) {
			t.Fatalf("%d records, want %d: %v", len(got), len(want), got)
		}
		for i, w := range want {
			if at := got[i].at.Sub(start).Truncate(time.Second); at != w.at*time.Second || got[i].msg != w.msg {
				t.Errorf("record %d: %s at %s, want %s at %s", i, got[i].msg, at, w.msg, w.at*time.Second)
			}
		}
	})
}

// While the server is unreachable it is probed, at least every
// probeInterval: a server that is back is noticed then, even if nothing
// else sends it a request. Watches waiting for it (await) resume once it
// is also ready.
func TestAPIHealthProbesAndAwaitsReadiness(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &records{}
		h := newAPIHealth("https://api:6443", slog.New(rec), 5*time.Second)
		defer h.stop()
		probes, readiness := 0, 0
		h.setProbes(func() {
			probes++
			if probes < 3 {
				h.failed("connection refused", errors.New("GET /version: refused"))
			} else {
				h.succeeded()
			}
		}, func() bool {
			readiness++
			return readiness > 2
		})
		if h.await(t.Context(), time.Minute) {
			t.Errorf("await says the server is back before any outage")
		}
		start := time.Now()
		h.failed("connection refused", errors.New("GET /api: refused"))
		var resumed time.Duration
		var wg sync.WaitGroup
		wg.Go(func() {
			if h.await(t.Context(), time.Minute) {
				resumed = time.Since(start)
			}
		})
		time.Sleep(time.Minute)
		wg.Wait()
		got := rec.all()
		want := []string{
			"WARN The API server https://api:6443 is unreachable (connection refused): GET /api: refused.",
			"WARN The API server https://api:6443 is still unreachable after 1 seconds (connection refused): GET /version: refused.",
			"WARN The API server https://api:6443 is still unreachable after 3 seconds (connection refused): GET /version: refused.",
			"INFO The API server https://api:6443 is reachable again after 5 seconds.",
		}
		if len(got) != len(want) || probes != 3 {
			t.Fatalf("%d probes and records %v, want 3 and %q", probes, got, want)
		}
		for i := range want {
			if got[i].msg != want[i] {
				t.Errorf("record %d: %s, want %s", i, got[i].msg, want[i])
			}
		}
		if at := got[3].at.Sub(start); at != 5*time.Second {
			t.Errorf("the recovery is noticed after %s, want 5s (the third probe)", at)
		}
		if want := 5*time.Second + 500*time.Millisecond; resumed != want {
			t.Errorf("a waiting watch resumes after %s, want %s (when the server says it is ready)", resumed, want)
		}
		if h.await(t.Context(), time.Minute) {
			t.Errorf("await says the server is back with no outage")
		}
	})
}

// records is a slog handler that keeps the records' times, levels and
// messages.
type records struct {
	mu   sync.Mutex
	list []record
}

type record struct {
	at  time.Time
	msg string
}

func (r *records) Enabled(context.Context, slog.Level) bool { return true }
func (r *records) WithAttrs([]slog.Attr) slog.Handler       { return r }
func (r *records) WithGroup(string) slog.Handler            { return r }
func (r *records) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.list = append(r.list, record{rec.Time, rec.Level.String() + " " + rec.Message})
	return nil
}

func (r *records) all() []record {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]record(nil), r.list...)
}

func TestNetworkCause(t *testing.T) {
	refused := func() error {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		_, err = net.Dial("tcp", addr)
		return err
	}()
	untrusted := func() error {
		s := httptest.NewUnstartedServer(http.NotFoundHandler())
		s.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshake fails, as it should
		s.StartTLS()
		defer s.Close()
		resp, err := http.Get(s.URL) // without the server's CA
		if err == nil {
			resp.Body.Close()
			t.Fatal("a server with an unknown CA is trusted")
		}
		return err
	}()
	for _, tc := range []struct {
		err  error
		want string
	}{
		{refused, "connection refused"},
		{untrusted, "TLS"},
		{fmt.Errorf("tls: %w", x509.UnknownAuthorityError{}), "TLS"},
		{&net.DNSError{Err: "no such host", Name: "api"}, "DNS"},
		{context.DeadlineExceeded, "timeout"},
		{&net.OpError{Op: "dial", Err: timeoutError{}}, "timeout"},
		{fmt.Errorf("read: %w", syscall.ECONNRESET), "connection reset"},
		{io.ErrUnexpectedEOF, "connection closed"},
		{errors.New("something else"), "network error"},
	} {
		if got := networkCause(tc.err); got != tc.want {
			t.Errorf("networkCause(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}

type timeoutError struct{}

func (timeoutError) Error() string   { return "i/o timeout" }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }

func TestWatchReporter(t *testing.T) {
	gr := schema.GroupResource{Group: "kopf.dev", Resource: "kopfexamples"}
	forbidden := apierrors.NewForbidden(gr, "", errors.New(`User "op" cannot list resource "kopfexamples" in API group "kopf.dev" in the namespace "ns"`))
	for _, tc := range []struct {
		name string
		err  error
		want string // "" for nothing at INFO or above
	}{
		{"forbidden", forbidden, `WARNING Watching kopfexamples.v1.kopf.dev in ns is forbidden (403): kopfexamples.kopf.dev is forbidden: User "op" cannot list resource "kopfexamples" in API group "kopf.dev" in the namespace "ns". Grant the operator's user the permissions to list and watch it; retrying.`},
		{"not found", apierrors.NewNotFound(gr, ""), `WARNING The resource kopfexamples.v1.kopf.dev in ns is not served by the API server https://api (404): kopfexamples.kopf.dev "" not found. Its CRD may have been deleted; the watch resumes when it is served again.`},
		{"server error", apierrors.NewInternalError(errors.New("etcd is down")), "WARNING Watching kopfexamples.v1.kopf.dev in ns has failed: Internal error occurred: etcd is down; retrying."},
		{"network", fmt.Errorf("dial: %w", syscall.ECONNREFUSED), ""},
		{"unauthorized", apierrors.NewUnauthorized("no"), ""},
		{"expired", apierrors.NewResourceExpired("too old"), ""},
		{"closed", io.EOF, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out logBuffer
			r := newWatchReporter("kopfexamples.v1.kopf.dev in ns", "https://api", logging.New(&out, logging.Full, slog.LevelInfo), time.Minute)
			r.failed(tc.err)
			r.failed(tc.err) // at once again: paced
			r.watching()
			got := out.String()
			if tc.want == "" {
				if got != "" {
					t.Errorf("logged:\n%s\nwant nothing", got)
				}
				return
			}
			lines := strings.Split(strings.TrimSpace(got), "\n")
			if len(lines) != 2 || !strings.HasSuffix(lines[0], tc.want[strings.Index(tc.want, " ")+1:]) ||
				!strings.Contains(lines[0], "["+tc.want[:strings.Index(tc.want, " ")]) ||
				!strings.HasSuffix(lines[1], "The watch of kopfexamples.v1.kopf.dev in ns is resumed.") {
				t.Errorf("logged:\n%s\nwant:\n%s\nThe watch of kopfexamples.v1.kopf.dev in ns is resumed.", got, tc.want)
			}
		})
	}
}

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

// runAgainst runs the operator against the server until the log has the
// text, and returns the log.
func runAgainst(t *testing.T, cfg *rest.Config, login LoginFunc, text string) string {
	t.Helper()
	reg := registry.New()
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
		if !strings.HasPrefix(r, "Bearer new-token kopf-go/"+Version+" (") {
			t.Errorf("a later request has %q", r)
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

func TestServerWarningsLoggedOnce(t *testing.T) {
	var out logBuffer
	w := &serverWarnings{logger: logging.New(&out, logging.Plain, slog.LevelInfo), seen: map[string]bool{}}
	for _, text := range []string{`unknown field "status.x"`, `unknown field "status.x"`, "v1 is deprecated", `unknown field "status.x"`} {
		w.HandleWarningHeaderWithContext(context.Background(), 299, "-", text)
	}
	w.HandleWarningHeaderWithContext(context.Background(), 199, "-", "not a warning code")
	want := "The API server warns: unknown field \"status.x\"\nThe API server warns: v1 is deprecated\n"
	if got := out.String(); got != want {
		t.Errorf("logged:\n%s\nwant:\n%s", got, want)
	}
}

func TestUserAgent(t *testing.T) {
	if got := UserAgent(); !strings.HasPrefix(got, "kopf-go/"+Version+" (") || !strings.HasSuffix(got, ")") {
		t.Errorf("UserAgent() = %q, want kopf-go/%s (<binary>)", got, Version)
	}
}

type logBuffer struct{ testutil.Buffer }

func (b *logBuffer) lines() int { return strings.Count(b.String(), "\n") }
