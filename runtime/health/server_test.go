package health

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

func TestParseEndpoint(t *testing.T) {
	tests := []struct {
		url        string
		addr, path string
		err        string
	}{
		{url: "http://0.0.0.0:8080/healthz", addr: "0.0.0.0:8080", path: "/healthz"},
		{url: "http://:8080/healthz", addr: "localhost:8080", path: "/healthz"},
		{url: "http://example.com", addr: "example.com:80", path: "/"},
		{url: "http://[::1]:9/readyz", addr: "[::1]:9", path: "/readyz"},
		{url: "https://0.0.0.0:8080/healthz", err: "unsupported scheme"},
		{url: "0.0.0.0:8080", err: "invalid endpoint URL"},
		{url: "localhost:8080", err: "unsupported scheme"},
		{url: "http://0.0.0.0:8080/healthz?x=1", err: "only http://host:port/path"},
		{url: "http://0.0.0.0:99999/healthz", err: `invalid port "99999"`},
		{url: "http://0.0.0.0:80:80/", err: "invalid"},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			ep, err := ParseEndpoint(tt.url)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("got %+v, %v; want an error with %q", ep, err, tt.err)
				}
				return
			}
			if err != nil || ep.Addr != tt.addr || ep.Path != tt.path {
				t.Fatalf("got %+v, %v; want %s %s", ep, err, tt.addr, tt.path)
			}
		})
	}
}

func get(t *testing.T, url string) (int, map[string]any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	var body map[string]any
	if err := json.Unmarshal(data, &body); err != nil {
		t.Fatalf("GET %s: %d %q is not JSON: %v", url, resp.StatusCode, data, err)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type: %q", ct)
	}
	return resp.StatusCode, body
}

func start(t *testing.T, opts Options) *Server {
	t.Helper()
	s, err := Start(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Shutdown(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return s
}

// Both endpoints over real HTTP, on one port and on two; then shut down.
func TestServer(t *testing.T) {
	port := freePort(t)
	layouts := []struct{ name, liveness, readiness string }{
		{"one port", "http://" + port + "/healthz", "http://" + port + "/readyz"},
		{"two ports", "http://127.0.0.1:0/healthz", "http://" + freePort(t) + "/readyz"},
	}
	for _, l := range layouts {
		t.Run(l.name, func(t *testing.T) {
			var ready atomic.Bool
			var problems atomic.Pointer[[]Problem]
			s := start(t, Options{
				Liveness:  l.liveness,
				Readiness: l.readiness,
				Probe:     func(context.Context) (map[string]any, error) { return map[string]any{"now": "then", "n": 1}, nil },
				Problems: func() []Problem {
					if p := problems.Load(); p != nil {
						return *p
					}
					return nil
				},
				Ready: func() (bool, string) { return ready.Load(), "2 watches have not listed their objects" },
			})
			if same := strings.TrimSuffix(s.LivenessURL(), "/healthz") == strings.TrimSuffix(s.ReadinessURL(), "/readyz"); same != (l.name == "one port") {
				t.Errorf("served at %s and %s", s.LivenessURL(), s.ReadinessURL())
			}
			code, body := get(t, s.LivenessURL())
			if code != 200 || body["now"] != "then" || body["n"] != 1.0 {
				t.Errorf("liveness: %d %v", code, body)
			}
			code, body = get(t, s.ReadinessURL())
			if code != 503 || body["ready"] != false || !strings.Contains(problemsOf(body), "The operator is not ready yet: 2 watches have not listed their objects.") {
				t.Errorf("readiness when not ready: %d %v", code, body)
			}
			ready.Store(true)
			if code, body = get(t, s.ReadinessURL()); code != 200 || body["ready"] != true {
				t.Errorf("readiness when ready: %d %v", code, body)
			}
			problems.Store(&[]Problem{{Message: "The watch of x has been down.", Watch: "x", Since: t0}})
			code, body = get(t, s.LivenessURL())
			if code != 500 || !strings.Contains(problemsOf(body), `"since":"2026-11-23T12:00:00Z"`) || !strings.Contains(problemsOf(body), `"watch":"x"`) {
				t.Errorf("liveness with a problem: %d %v", code, body)
			}
			if code, body = get(t, s.ReadinessURL()); code != 503 || !strings.Contains(problemsOf(body), "The watch of x has been down.") {
				t.Errorf("readiness with a problem: %d %v", code, body)
			}
			problems.Store(nil)
			if code, _ = get(t, s.LivenessURL()); code != 200 {
				t.Errorf("liveness after the recovery: %d", code)
			}
			if err := s.Shutdown(context.Background()); err != nil {
				t.Fatal(err)
			}
			if _, err := http.Get(s.LivenessURL()); err == nil {
				t.Error("served after Shutdown")
			}
		})
	}
}

// freePort returns a loopback address with a port free a moment ago.
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

func problemsOf(body map[string]any) string {
	data, _ := json.Marshal(body["problems"])
	return string(data)
}

// Bad endpoints fail at start with an error that says which; a port in
// use is named.
func TestStartErrors(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	tests := []struct {
		name string
		opts Options
		err  string
	}{
		{"none", Options{}, "no liveness or readiness endpoint"},
		{"bad liveness", Options{Liveness: "tcp://0.0.0.0:1/"}, "the liveness endpoint: unsupported scheme"},
		{"bad readiness", Options{Liveness: "http://127.0.0.1:0/", Readiness: "http://x:y/"}, "the readiness endpoint: invalid"},
		{"the same", Options{Liveness: "http://127.0.0.1:0/z", Readiness: "http://127.0.0.1:0/z"}, "are the same"},
		{"a port in use", Options{Readiness: "http://" + busy.Addr().String() + "/readyz"}, "listening on " + busy.Addr().String() + " for the health endpoints: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Start(tt.opts)
			if err == nil {
				_ = s.Shutdown(context.Background())
			}
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Fatalf("got %v, want %q", err, tt.err)
			}
		})
	}
}

// The probes' results are reused for ProbeMaxAge, their errors (and
// panics) are not; concurrent requests share one collection. In a
// synctest bubble, on the handler itself.
func TestProbeCaching(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var calls atomic.Int32
		var fail atomic.Value
		fail.Store("")
		s := &Server{probing: make(chan struct{}, 1), opts: Options{Logger: slog.New(slog.DiscardHandler), ProbeMaxAge: DefaultProbeMaxAge, Probe: func(context.Context) (map[string]any, error) {
			n := calls.Add(1)
			time.Sleep(100 * time.Millisecond) // slow: concurrent requests wait
			switch fail.Load() {
			case "error":
				return nil, errors.New("probe 'db' has failed: no connection")
			case "panic":
				panic("oops")
			}
			return map[string]any{"calls": n}, nil
		}}}
		live := func() (int, string) {
			rec := httptest.NewRecorder()
			s.live(rec, httptest.NewRequest("GET", "/healthz", nil))
			return rec.Code, strings.TrimSpace(rec.Body.String())
		}
		for range 3 {
			go live()
		}
		time.Sleep(time.Second)
		steps := []struct {
			name  string
			after time.Duration
			fail  string
			code  int
			body  string
		}{
			{"cached", 0, "", 200, `{"calls":1}`},
			{"still cached", 8 * time.Second, "error", 200, `{"calls":1}`},
			{"expired, failing", 2 * time.Second, "error", 500, `{"problems":[{"message":"The probes have failed: probe 'db' has failed: no connection.","probe":true,"error":"probe 'db' has failed: no connection"}]}`},
			{"an error is not cached", 0, "", 200, `{"calls":3}`},
			{"cached again", time.Second, "panic", 200, `{"calls":3}`},
			{"a panic", 10 * time.Second, "panic", 500, `"message":"The probes have failed: panic: oops.`},
		}
		for _, st := range steps {
			time.Sleep(st.after)
			fail.Store(st.fail)
			code, body := live()
			if code != st.code || !strings.Contains(body, st.body) {
				t.Errorf("%s: %d %s, want %d %s", st.name, code, body, st.code, st.body)
			}
		}
		if n := calls.Load(); n != 4 {
			t.Errorf("the probes ran %d times, want 4", n)
		}
	})
}

// TestFleetClusters: a fleet operator's endpoints list its clusters'
// states; a cluster's problems fail neither endpoint.
func TestFleetClusters(t *testing.T) {
	states := []Cluster{{Name: "east", Ready: true}, {Name: "west", Problems: []Problem{{Message: "The API server is down.", APIServer: "https://west"}}}}
	s := start(t, Options{
		Liveness:  "http://127.0.0.1:0/healthz",
		Readiness: "http://127.0.0.1:0/readyz",
		Probe:     func(context.Context) (map[string]any, error) { return map[string]any{"p": 1}, nil },
		Clusters:  func() []Cluster { return states },
	})
	want := `[{"name":"east","ready":true},{"name":"west","problems":[{"apiServer":"https://west","message":"The API server is down."}],"ready":false}]` // re-encoded from maps: sorted keys
	for _, url := range []string{s.LivenessURL(), s.ReadinessURL()} {
		code, body := get(t, url)
		data, _ := json.Marshal(body["clusters"])
		if code != 200 || string(data) != want {
			t.Errorf("%s: %d %s; want 200 %s", url, code, data, want)
		}
	}
	if _, body := get(t, s.LivenessURL()); body["p"] != 1.0 {
		t.Errorf("liveness without the probes' results: %v", body)
	}
	if err := s.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
}
