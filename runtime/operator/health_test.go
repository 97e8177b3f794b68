package operator

import (
	"context"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/kopf-go/kopf/runtime/apiserver"
	"github.com/kopf-go/kopf/runtime/settings"
)

// The readiness endpoint's view of the operator: why it is not ready yet.
func TestReadinessState(t *testing.T) {
	r := newReadiness(nil, slog.New(slog.DiscardHandler))
	var listed []func()
	steps := []struct {
		name  string
		do    func()
		ready bool
		why   string
	}{
		{"at start", func() {}, false, "not every resource of the handlers is resolved"},
		{"two watches", func() { listed = append(listed, r.watch(), r.watch()) }, false, "not every resource"},
		{"resolved", r.allResolved, false, "2 watches have not listed their objects yet"},
		{"one listed", func() { listed[0]() }, false, "1 watch has not listed its objects yet"},
		{"both listed", func() { listed[1]() }, true, ""},
	}
	for _, s := range steps {
		s.do()
		ready, why := r.state()
		if ready != s.ready || !strings.Contains(why, s.why) || (s.why == "" && why != "") {
			t.Errorf("%s: %v %q, want %v %q", s.name, ready, why, s.ready, s.why)
		}
	}
}

// The endpoints stop when the operator starts stopping, and when Run
// returns (stop), whichever comes first; one that cannot be served is an
// error.
func TestServeHealth(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	for _, how := range []string{"context", "stop"} {
		t.Run(how, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			opts := Options{LivenessEndpoint: "http://" + addr + "/healthz", Settings: settings.Default(), Logger: slog.New(slog.DiscardHandler)}
			api, ready := apiserver.NewHealth("https://s", slog.New(slog.DiscardHandler), time.Minute), newReadiness(nil, slog.New(slog.DiscardHandler))
			noProbes := func(context.Context) (map[string]any, error) { return nil, nil }
			monitor, stop, err := serveHealth(ctx, opts, api, ready, noProbes, nil)
			if err != nil {
				t.Fatal(err)
			}
			if monitor == nil {
				t.Error("no monitor for the watches")
			}
			if _, _, err := serveHealth(ctx, opts, api, ready, noProbes, nil); err == nil || !strings.Contains(err.Error(), "listening on "+addr) {
				t.Errorf("the same port twice: %v", err)
			}
			if how == "context" {
				cancel()
				deadline := time.Now().Add(5 * time.Second)
				for {
					c, err := net.Dial("tcp", addr)
					if err != nil {
						break
					}
					c.Close()
					if time.Now().After(deadline) {
						t.Fatal("still served after the operator's context is done")
					}
					time.Sleep(20 * time.Millisecond)
				}
			}
			stop()
			if c, err := net.Dial("tcp", addr); err == nil {
				c.Close()
				t.Error("still served after stop")
			}
		})
	}
}
