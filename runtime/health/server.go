// Package health serves the operator's liveness and readiness endpoints
// over HTTP, for Kubernetes' probes (Kopf's `--liveness`, and a readiness
// endpoint of kopf-go's own).
//
// The liveness endpoint answers a GET with 200 and the JSON of the probes'
// results by id (Kopf's on.probe handlers), as Kopf does, recollected at
// most every ProbeMaxAge (10 seconds). Unlike Kopf's, it fails when the
// operator has stopped reacting: when a watch has been down (see Monitor)
// or the API server unreachable for longer than the grace, or when a probe
// fails. It then answers 500 with the problems in JSON:
//
//	{"problems": [{"message": "The watch of kopfexamples.v1.kopf.dev has been down for 140.2 seconds, since 2026-11-23T12:00:00Z; 9 failed requests, the last: ...", "watch": "kopfexamples.v1.kopf.dev", "since": "2026-11-23T12:00:00Z", "failures": 9, "error": "..."}]}
//
// The readiness endpoint answers 200 and {"ready": true} once the
// operator is ready (its resources resolved, their first listings
// delivered) and while it is healthy as above (the probes aside), and
// otherwise 503 and {"ready": false, "problems": [...]}.
//
// A fleet operator's endpoints (Options.Clusters) also list its clusters,
// each with its state, under "clusters" (in the liveness endpoint's
// answer, next to the probes' results):
//
//	{"ready": true, "clusters": [{"name": "east", "ready": true}, {"name": "west", "ready": false, "problems": [...]}]}
//
// A cluster's problems are its own (its API server, its watches): they
// fail neither endpoint, since the other clusters are served meanwhile and
// a restart would not bring that cluster back; the operator's own state
// (the probes, its readiness) does.
package health

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/kopf-go/kopf/runtime/execution"
)

// DefaultProbeMaxAge is how long the probes' results are reused: Kopf's
// 10 seconds.
const DefaultProbeMaxAge = 10 * time.Second

// Options say what to serve where. At least one endpoint is needed.
type Options struct {
	// Liveness and Readiness are the endpoints' URLs (see ParseEndpoint),
	// or "" for none. Both may share a host:port, on different paths.
	Liveness  string
	Readiness string
	// Probe, if set, collects the probes' results by id (Kopf's on.probe
	// handlers, run in parallel). An error fails the liveness probe with
	// its message; a panic is an error. Its results are reused for
	// ProbeMaxAge (0: DefaultProbeMaxAge); its errors are not.
	Probe       func(ctx context.Context) (map[string]any, error)
	ProbeMaxAge time.Duration
	// Problems, if set, says what is wrong now (see Monitor.Problems).
	Problems func() []Problem
	// Ready, if set, says whether the operator is ready, and if not, why.
	// Nil: ready.
	Ready func() (bool, string)
	// Clusters, if set, lists the states of a fleet operator's clusters,
	// which both endpoints report without failing on them.
	Clusters func() []Cluster
	// Logger receives the server's own messages; nil: slog.Default().
	Logger *slog.Logger
}

// Cluster is the state of one cluster of a fleet operator.
type Cluster struct {
	Name string `json:"name"`
	// Ready says that the cluster's resources are resolved and watched,
	// and their first listings delivered, and that it has no Problems.
	Ready    bool      `json:"ready"`
	Problems []Problem `json:"problems,omitempty"`
}

// Server serves the endpoints until Shutdown.
type Server struct {
	liveness, readiness string // the URLs served, with the actual ports
	servers             []*http.Server
	done                sync.WaitGroup
	opts                Options

	probing chan struct{} // holds a token while probing: one collection at a time
	probed  time.Time
	results map[string]any
}

// Start listens on the endpoints' addresses and serves them in the
// background. It fails if a URL is invalid or an address cannot be
// listened on (e.g. the port is in use), naming which.
func Start(opts Options) (*Server, error) {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.ProbeMaxAge <= 0 {
		opts.ProbeMaxAge = DefaultProbeMaxAge
	}
	s := &Server{opts: opts, probing: make(chan struct{}, 1)}
	type route struct {
		kind    string
		ep      Endpoint
		handler http.HandlerFunc
	}
	var routes []route
	for _, r := range []struct {
		kind, url string
		handler   http.HandlerFunc
	}{{"liveness", opts.Liveness, s.live}, {"readiness", opts.Readiness, s.ready}} {
		if r.url == "" {
			continue
		}
		ep, err := ParseEndpoint(r.url)
		if err != nil {
			return nil, fmt.Errorf("the %s endpoint: %w", r.kind, err)
		}
		routes = append(routes, route{r.kind, ep, r.handler})
	}
	if len(routes) == 0 {
		return nil, errors.New("no liveness or readiness endpoint is given")
	}
	if len(routes) == 2 && routes[0].ep == routes[1].ep {
		return nil, fmt.Errorf("the liveness and readiness endpoints are the same: %s", routes[0].ep.URL())
	}
	muxes := map[string]*http.ServeMux{}
	var order []string
	for _, r := range routes {
		if muxes[r.ep.Addr] == nil {
			muxes[r.ep.Addr] = http.NewServeMux()
			order = append(order, r.ep.Addr)
		}
		muxes[r.ep.Addr].HandleFunc("GET "+r.ep.Path, r.handler)
	}
	listeners := map[string]net.Listener{}
	for _, addr := range order {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			for _, l := range listeners {
				l.Close()
			}
			return nil, fmt.Errorf("listening on %s for the health endpoints: %w", addr, err)
		}
		listeners[addr] = l
	}
	for _, r := range routes {
		url := Endpoint{Addr: listeners[r.ep.Addr].Addr().String(), Path: r.ep.Path}.URL()
		if r.kind == "liveness" {
			s.liveness = url
			opts.Logger.Debug("Serving health status at " + url)
		} else {
			s.readiness = url
			opts.Logger.Debug("Serving readiness status at " + url)
		}
	}
	for _, addr := range order {
		srv := &http.Server{Handler: muxes[addr], ReadHeaderTimeout: 10 * time.Second}
		s.servers = append(s.servers, srv)
		l := listeners[addr]
		s.done.Add(1)
		go func() {
			defer s.done.Done()
			if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
				opts.Logger.Error(fmt.Sprintf("The health endpoints on %s have failed: %v", addr, err))
			}
		}()
	}
	return s, nil
}

// LivenessURL and ReadinessURL are the URLs served, normalised, with the
// ports actually listened on (port 0 picks a free one); "" if not served.
func (s *Server) LivenessURL() string  { return s.liveness }
func (s *Server) ReadinessURL() string { return s.readiness }

// Shutdown stops serving: it waits for the requests in progress until ctx
// is done, then closes their connections.
func (s *Server) Shutdown(ctx context.Context) error {
	var errs []error
	for _, srv := range s.servers {
		if err := srv.Shutdown(ctx); err != nil {
			errs = append(errs, err, srv.Close())
		}
	}
	s.done.Wait()
	return errors.Join(errs...)
}

func (s *Server) live(w http.ResponseWriter, r *http.Request) {
	problems := s.problems()
	results, err := s.probe(r.Context())
	if err != nil {
		problems = append(problems, Problem{Probe: true, Error: err.Error(), Message: fmt.Sprintf("The probes have failed: %v.", err)})
	}
	if len(problems) > 0 {
		writeJSON(w, http.StatusInternalServerError, s.withClusters(map[string]any{"problems": problems}))
		return
	}
	if s.opts.Clusters != nil {
		results = maps.Clone(results)
	}
	writeJSON(w, http.StatusOK, s.withClusters(results))
}

// withClusters adds the clusters' states to an answer, for a fleet
// operator.
func (s *Server) withClusters(answer map[string]any) map[string]any {
	if s.opts.Clusters != nil {
		answer["clusters"] = s.opts.Clusters()
	}
	return answer
}

func (s *Server) ready(w http.ResponseWriter, _ *http.Request) {
	var problems []Problem
	if s.opts.Ready != nil {
		if ok, why := s.opts.Ready(); !ok {
			problems = append(problems, Problem{Message: "The operator is not ready yet: " + why + "."})
		}
	}
	problems = append(problems, s.problems()...)
	if len(problems) > 0 {
		writeJSON(w, http.StatusServiceUnavailable, s.withClusters(map[string]any{"ready": false, "problems": problems}))
		return
	}
	writeJSON(w, http.StatusOK, s.withClusters(map[string]any{"ready": true}))
}

func (s *Server) problems() []Problem {
	if s.opts.Problems == nil {
		return nil
	}
	return s.opts.Problems()
}

// probe returns the probes' results, collected again if they are older
// than ProbeMaxAge. Concurrent requests wait for one collection.
func (s *Server) probe(ctx context.Context) (map[string]any, error) {
	if s.opts.Probe == nil {
		return map[string]any{}, nil
	}
	select {
	case s.probing <- struct{}{}:
		defer func() { <-s.probing }()
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if s.results != nil && time.Since(s.probed) < s.opts.ProbeMaxAge {
		return s.results, nil
	}
	results, err := execution.Guard(func() (map[string]any, error) { return s.opts.Probe(ctx) })
	if err != nil {
		execution.LogPanicStack(s.opts.Logger, err)
		return nil, err
	}
	if results == nil {
		results = map[string]any{}
	}
	s.results, s.probed = results, time.Now()
	return results, nil
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		code = http.StatusInternalServerError
		data, _ = json.Marshal(map[string]any{"problems": []Problem{{Probe: true, Error: err.Error(), Message: fmt.Sprintf("The probes' results cannot be encoded as JSON: %v.", err)}}})
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(append(data, '\n'))
}
