package apiserver

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

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kopf-go/kopf/internal/testutil"
	"github.com/kopf-go/kopf/runtime/logging"
	"github.com/kopf-go/kopf/runtime/watching"
)

// An outage is reported at once, then after 1, 2, 4... seconds, never more
// than maxSilence apart, and its end once.
func TestAPIHealthReportsWithBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rec := &records{}
		h := NewHealth("https://api:6443", slog.New(rec), 5*time.Second)
		defer h.Stop()
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
		h := NewHealth("https://api:6443", slog.New(rec), 5*time.Second)
		defer h.Stop()
		probes, readiness := 0, 0
		h.SetProbes(func() {
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
		if h.Await(t.Context(), time.Minute) {
			t.Errorf("await says the server is back before any outage")
		}
		start := time.Now()
		h.failed("connection refused", errors.New("GET /api: refused"))
		var resumed time.Duration
		var wg sync.WaitGroup
		wg.Go(func() {
			if h.Await(t.Context(), time.Minute) {
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
		if h.Await(t.Context(), time.Minute) {
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
			var out testutil.Buffer
			r := NewWatchReporter("kopfexamples.v1.kopf.dev in ns", "https://api", logging.New(&out, logging.Full, slog.LevelInfo), time.Minute)
			r.Failed(tc.err)
			r.Failed(tc.err) // at once again: paced
			r.Watching()
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

// The API server's status as the health endpoints see it follows the
// requests' outcomes.
func TestAPIHealthStatus(t *testing.T) {
	h := NewHealth("https://s", slog.New(slog.DiscardHandler), time.Minute)
	defer h.Stop()
	if s := h.Status(); s.Down || s.Address != "https://s" {
		t.Errorf("at start: %+v", s)
	}
	before := time.Now()
	h.failed("connection refused", errors.New("GET /api: refused"))
	if s := h.Status(); !s.Down || s.Since.Before(before) || s.Cause != "connection refused" || s.Err == nil {
		t.Errorf("after a failure: %+v", s)
	}
	h.succeeded()
	if s := h.Status(); s.Down {
		t.Errorf("after a success: %+v", s)
	}
}

func TestServerWarningsLoggedOnce(t *testing.T) {
	var out testutil.Buffer
	w := NewWarnings(logging.New(&out, logging.Plain, slog.LevelInfo))
	for _, text := range []string{`unknown field "status.x"`, `unknown field "status.x"`, "v1 is deprecated", `unknown field "status.x"`} {
		w.HandleWarningHeaderWithContext(context.Background(), 299, "-", text)
	}
	w.HandleWarningHeaderWithContext(context.Background(), 199, "-", "not a warning code")
	want := "The API server warns: unknown field \"status.x\"\nThe API server warns: v1 is deprecated\n"
	if got := out.String(); got != want {
		t.Errorf("logged:\n%s\nwant:\n%s", got, want)
	}
}

// TestServerWarningsAboutTheObject: a warning in a response to a request
// made with a handler's context (which carries its object's logger) is
// logged about the object, with its prefix; other requests' warnings go
// to the operator's logger.
func TestServerWarningsAboutTheObject(t *testing.T) {
	var out testutil.Buffer
	logger := logging.New(&out, logging.Plain, slog.LevelInfo)
	w := NewWarnings(logger)
	ctx := logging.WithLogger(context.Background(), logging.ForObject(logger, "ns/obj"))
	w.HandleWarningHeaderWithContext(ctx, 299, "-", `unknown field "spec.x"`)
	w.HandleWarningHeaderWithContext(context.Background(), 299, "-", "v1 is deprecated")
	want := "[ns/obj] The API server warns: unknown field \"spec.x\"\nThe API server warns: v1 is deprecated\n"
	if got := out.String(); got != want {
		t.Errorf("logged:\n%s\nwant:\n%s", got, want)
	}
}

// A request ended by its own context says nothing about the server, except
// a watch request that the server left unanswered for the inactivity
// timeout (watching.ErrNoResponse): that is the server's timeout.
func TestAPIHealthCountsUnansweredWatches(t *testing.T) {
	cases := []struct {
		name  string
		cause error
		down  bool
	}{
		{"unanswered", fmt.Errorf("%w within 3s", watching.ErrNoResponse), true},
		{"cancelled", context.Canceled, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := NewHealth("https://s", slog.New(slog.DiscardHandler), time.Minute)
			defer h.Stop()
			rt := h.Wrap(roundTripperFunc(func(req *http.Request) (*http.Response, error) {
				<-req.Context().Done()
				return nil, req.Context().Err()
			}))
			ctx, cancel := context.WithCancelCause(t.Context())
			cancel(c.cause)
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://s/api/v1/configmaps?watch=true", nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := rt.RoundTrip(req); err == nil {
				t.Fatal("the request succeeds")
			}
			s := h.Status()
			if s.Down != c.down {
				t.Fatalf("down: %v, want %v (%+v)", s.Down, c.down, s)
			}
			if c.down && (s.Cause != "timeout" || s.Err.Error() != "GET /api/v1/configmaps: no response within 3s") {
				t.Errorf("status: %+v", s)
			}
		})
	}
}
