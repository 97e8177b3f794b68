package health

import (
	"fmt"
	"sort"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/kopf-go/kopf/runtime/execution"
	"github.com/kopf-go/kopf/runtime/watching"
)

// DefaultGrace is the grace of a Monitor made with none: the default of
// settings.Watching.InactivityTimeout.
const DefaultGrace = 70 * time.Second

// Problem is one reason why the operator is not healthy, or not ready, as
// it appears in the JSON of a failed probe. Exactly one of Watch,
// APIServer and Probe says what failed, or none while the operator is
// starting.
type Problem struct {
	// Message says it all in one sentence.
	Message string `json:"message"`
	// Watch names a watch that is down: "<plural>.<version>.<group>" (and
	// " in <namespace>" when watched per namespace).
	Watch string `json:"watch,omitempty"`
	// APIServer is the address of an API server that cannot be reached.
	APIServer string `json:"apiServer,omitempty"`
	// Probe is set when the probes fail.
	Probe bool `json:"probe,omitempty"`
	// Since is when the watch went down or the API server became
	// unreachable.
	Since time.Time `json:"since,omitzero"`
	// Failures counts a watch's failed requests since it went down.
	Failures int `json:"failures,omitempty"`
	// Cause is why the API server cannot be reached, in a few words
	// ("connection refused", "timeout", "TLS", "401 Unauthorized", ...).
	Cause string `json:"cause,omitempty"`
	// Error is the last error seen.
	Error string `json:"error,omitempty"`
}

// ServerStatus is whether the operator reaches its API server.
type ServerStatus struct {
	// Address is the API server's address, e.g. https://10.0.0.1:443.
	Address string
	// Down says that the server's last answer was a failure (no response,
	// or a 401); Since is since when, Cause and Err why.
	Down  bool
	Since time.Time
	Cause string
	Err   error
}

// Monitor judges the operator's health from what its watches and its API
// client tell. It is safe for concurrent use.
//
// A watch is down while it has no stream open (see watching.Status): a
// stream that is open is healthy however quiet it is, since the watcher
// ends a stream that has been silent for settings.Watching.InactivityTimeout
// and the reflector then establishes another one, from the last
// resourceVersion, relisting if need be. A watch that has been down for
// the grace (or that has not been established for the grace since it
// started) is a Problem: it is broken and cannot be re-established; unless
// its last failure is a 404 (the resource is no longer served: its CRD
// was deleted, and a restart would not bring it back). The
// API server is a Problem once it has failed every request for the grace.
// Shorter outages are what client-go's retries are for.
type Monitor struct {
	grace time.Duration

	mu      sync.Mutex
	watches map[*watchEntry]struct{}
	server  func() ServerStatus
}

type watchEntry struct {
	name   string
	status func() watching.Status
}

// NewMonitor returns a monitor with the grace (DefaultGrace if 0 or less),
// normally settings.Watching.InactivityTimeout.
func NewMonitor(grace time.Duration) *Monitor {
	if grace <= 0 {
		grace = DefaultGrace
	}
	return &Monitor{grace: grace, watches: map[*watchEntry]struct{}{}}
}

// Grace is how long a watch may be down and the API server unreachable
// before it is a Problem.
func (m *Monitor) Grace() time.Duration { return m.grace }

// AddWatch adds a watch, named as in the operator's log, by its Status
// accessor (watching.Watcher.Status). The returned function removes it.
func (m *Monitor) AddWatch(name string, status func() watching.Status) (remove func()) {
	e := &watchEntry{name: name, status: status}
	m.mu.Lock()
	m.watches[e] = struct{}{}
	m.mu.Unlock()
	return func() {
		m.mu.Lock()
		delete(m.watches, e)
		m.mu.Unlock()
	}
}

// SetServer sets how the API server's status is known.
func (m *Monitor) SetServer(status func() ServerStatus) {
	m.mu.Lock()
	m.server = status
	m.mu.Unlock()
}

// Problems returns what is wrong at now: the API server first, then the
// watches by name. None: healthy.
func (m *Monitor) Problems(now time.Time) []Problem {
	m.mu.Lock()
	server := m.server
	entries := make([]*watchEntry, 0, len(m.watches))
	for e := range m.watches {
		entries = append(entries, e)
	}
	m.mu.Unlock()
	sort.Slice(entries, func(i, j int) bool { return entries[i].name < entries[j].name })
	var problems []Problem
	if server != nil {
		if p, ok := serverProblem(server(), now, m.grace); ok {
			problems = append(problems, p)
		}
	}
	for _, e := range entries {
		if p, ok := watchProblem(e.name, e.status(), now, m.grace); ok {
			problems = append(problems, p)
		}
	}
	return problems
}

// watchProblem judges one watch.
func watchProblem(name string, s watching.Status, now time.Time, grace time.Duration) (Problem, bool) {
	if s.Started.IsZero() || s.Watching {
		return Problem{}, false // not started yet, or a stream is open
	}
	if apierrors.IsNotFound(s.LastError) {
		// The resource is not served (its CRD was deleted): nothing to
		// hear, and a restart would not help; as an unresolved resource.
		return Problem{}, false
	}
	down := now.Sub(s.Since)
	if down < grace {
		return Problem{}, false // being re-established
	}
	p := Problem{Watch: name, Since: s.Since.UTC(), Failures: s.Failures}
	state := "has been down"
	if s.Restarts == 0 && s.Listed.IsZero() && s.Events == 0 {
		state = "has not been established"
	}
	p.Message = fmt.Sprintf("The watch of %s %s for %s seconds, since %s", name, state, seconds(down), p.Since.Format(time.RFC3339))
	if s.LastError != nil {
		p.Error = s.LastError.Error()
		p.Message += fmt.Sprintf("; %d failed requests, the last: %v", s.Failures, s.LastError)
	}
	p.Message += "."
	return p, true
}

// serverProblem judges the API server.
func serverProblem(s ServerStatus, now time.Time, grace time.Duration) (Problem, bool) {
	if !s.Down {
		return Problem{}, false
	}
	down := now.Sub(s.Since)
	if down < grace {
		return Problem{}, false
	}
	p := Problem{APIServer: s.Address, Since: s.Since.UTC(), Cause: s.Cause}
	if s.Err != nil {
		p.Error = s.Err.Error()
	}
	state := "has been unreachable"
	if s.Cause == "401 Unauthorized" {
		state = "has refused the operator's credentials"
	}
	p.Message = fmt.Sprintf("The API server %s %s for %s seconds, since %s (%s): %s.", s.Address, state, seconds(down), p.Since.Format(time.RFC3339), s.Cause, p.Error)
	return p, true
}

// seconds formats a duration as seconds to a tenth.
func seconds(d time.Duration) string {
	return execution.Seconds(d.Round(100 * time.Millisecond))
}
