package health

import (
	"errors"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kopf-go/kopf/runtime/watching"
)

var t0 = time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)

func at(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }

// A watch is judged by whether a stream is open and since when it is not,
// never by how quiet it is.
func TestWatchProblem(t *testing.T) {
	const grace = 3 * time.Second
	refused := errors.New("connection refused")
	tests := []struct {
		name   string
		status watching.Status
		now    time.Time
		want   string // a part of the message; "" for no problem
	}{
		{"not started", watching.Status{}, at(100), ""},
		{"healthy", watching.Status{Started: at(0), Watching: true, Since: at(1), Listed: at(1), LastEvent: at(9), Events: 5}, at(10), ""},
		{"silent but open", watching.Status{Started: at(0), Watching: true, Since: at(1), Listed: at(1), LastEvent: at(1), Events: 1}, at(1000), ""},
		{"re-established after a stall", watching.Status{Started: at(0), Watching: true, Since: at(50), Listed: at(1), LastEvent: at(1), Events: 1, Restarts: 12}, at(51), ""},
		{"being re-established", watching.Status{Started: at(0), Since: at(8), Listed: at(1), Events: 1, Failures: 2, LastError: refused}, at(10.9), ""},
		{"failing past the grace", watching.Status{Started: at(0), Since: at(7), Listed: at(1), Events: 1, Failures: 4, LastError: refused},
			at(10), "The watch of kopfexamples.v1.kopf.dev in ns has been down for 3 seconds, since 2026-11-23T12:00:07Z; 4 failed requests, the last: connection refused."},
		{"down past the grace, no error yet", watching.Status{Started: at(0), Since: at(7), Listed: at(1), Events: 1},
			at(12.5), "The watch of kopfexamples.v1.kopf.dev in ns has been down for 5.5 seconds, since 2026-11-23T12:00:07Z."},
		{"never established", watching.Status{Started: at(0), Since: at(0), Failures: 3, LastError: refused},
			at(4), "The watch of kopfexamples.v1.kopf.dev in ns has not been established for 4 seconds"},
		{"its resource is gone", watching.Status{Started: at(0), Since: at(1), Listed: at(1), Events: 1, Failures: 9, LastError: apierrors.NewNotFound(schema.GroupResource{Group: "kopf.dev", Resource: "kopfexamples"}, "")}, at(100), ""},
		{"forbidden", watching.Status{Started: at(0), Since: at(1), Failures: 9, LastError: apierrors.NewForbidden(schema.GroupResource{Group: "kopf.dev", Resource: "kopfexamples"}, "", errors.New("no"))},
			at(100), `9 failed requests, the last: kopfexamples.kopf.dev is forbidden`},
		{"recovered", watching.Status{Started: at(0), Watching: true, Since: at(20), Listed: at(20), Restarts: 1}, at(21), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, bad := watchProblem("kopfexamples.v1.kopf.dev in ns", tt.status, tt.now, grace)
			if bad != (tt.want != "") || !strings.Contains(p.Message, tt.want) {
				t.Fatalf("got %v %+v, want a problem %q", bad, p, tt.want)
			}
			if bad && (p.Watch != "kopfexamples.v1.kopf.dev in ns" || !p.Since.Equal(tt.status.Since) || p.Failures != tt.status.Failures) {
				t.Errorf("the problem's fields: %+v", p)
			}
		})
	}
}

func TestServerProblem(t *testing.T) {
	const grace = 3 * time.Second
	tests := []struct {
		name   string
		status ServerStatus
		now    time.Time
		want   string
	}{
		{"reachable", ServerStatus{Address: "https://a"}, at(10), ""},
		{"recovered", ServerStatus{Address: "https://a", Since: at(1)}, at(10), ""},
		{"a short outage", ServerStatus{Address: "https://a", Down: true, Since: at(8), Cause: "timeout", Err: errors.New("GET /version: i/o timeout")}, at(10), ""},
		{"unreachable past the grace", ServerStatus{Address: "https://a", Down: true, Since: at(5), Cause: "timeout", Err: errors.New("GET /version: i/o timeout")},
			at(10), "The API server https://a has been unreachable for 5 seconds, since 2026-11-23T12:00:05Z (timeout): GET /version: i/o timeout."},
		{"refusing the credentials", ServerStatus{Address: "https://a", Down: true, Since: at(5), Cause: "401 Unauthorized", Err: errors.New("GET /api")},
			at(10), "The API server https://a has refused the operator's credentials for 5 seconds, since 2026-11-23T12:00:05Z (401 Unauthorized): GET /api."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, bad := serverProblem(tt.status, tt.now, grace)
			if bad != (tt.want != "") || p.Message != tt.want {
				t.Fatalf("got %v %q, want %q", bad, p.Message, tt.want)
			}
			if bad && (p.APIServer != "https://a" || p.Cause != tt.status.Cause || p.Error != tt.status.Err.Error()) {
				t.Errorf("the problem's fields: %+v", p)
			}
		})
	}
}

// The monitor lists the server's problem first, then the watches' by
// name; removed watches are forgotten; recovery clears the problems.
func TestMonitorProblems(t *testing.T) {
	m := NewMonitor(3 * time.Second)
	down := watching.Status{Started: at(0), Since: at(1)}
	up := watching.Status{Started: at(0), Watching: true, Since: at(1)}
	status := map[string]watching.Status{"b": down, "a": down, "c": up}
	for _, name := range []string{"b", "a", "c"} {
		m.AddWatch(name, func() watching.Status { return status[name] })
	}
	removeD := m.AddWatch("d", func() watching.Status { return down })
	removeD()
	server := ServerStatus{Address: "https://s", Down: true, Since: at(2), Cause: "connection refused"}
	m.SetServer(func() ServerStatus { return server })

	var got []string
	for _, p := range m.Problems(at(10)) {
		got = append(got, p.Watch+p.APIServer)
	}
	if strings.Join(got, ",") != "https://s,a,b" {
		t.Errorf("problems of %v, want https://s,a,b", got)
	}
	status["a"], status["b"], server = up, up, ServerStatus{Address: "https://s"}
	if p := m.Problems(at(11)); len(p) != 0 {
		t.Errorf("problems after the recovery: %+v", p)
	}
	if g := NewMonitor(0).Grace(); g != DefaultGrace {
		t.Errorf("the default grace is %s", g)
	}
}
