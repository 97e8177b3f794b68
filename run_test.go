package kopf_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/kopf-go/kopf"
	"github.com/kopf-go/kopf/kopftest"
)

// Run fails at once, without contacting the cluster, when the operator
// cannot start.
func TestRunCannotStart(t *testing.T) {
	dead := kopf.WithConfig(&rest.Config{Host: "https://127.0.0.1:1"})
	tests := []struct {
		name     string
		register func(*kopf.Registry) error
		opts     []kopf.Option
		want     string
	}{
		{"the handlers do not register", func(*kopf.Registry) error { return errors.New("bad marker") },
			[]kopf.Option{dead}, "registering the handlers: bad marker"},
		{"a bad namespace pattern", func(*kopf.Registry) error { return nil },
			[]kopf.Option{dead, kopf.WithNamespaces("[")}, `bad namespace pattern "["`},
		{"a bad liveness endpoint", func(*kopf.Registry) error { return nil },
			[]kopf.Option{dead, kopf.WithAllNamespaces(), kopf.WithLiveness("tcp://0.0.0.0:8080/healthz")}, "the liveness endpoint: unsupported scheme"},
		{"a bad readiness endpoint", func(*kopf.Registry) error { return nil },
			[]kopf.Option{dead, kopf.WithAllNamespaces(), kopf.WithReadiness("http://0.0.0.0:99999/readyz")}, `the readiness endpoint: invalid port "99999"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := kopf.Run(context.Background(), tt.register, tt.opts...)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Run() = %v, want an error with %q", err, tt.want)
			}
		})
	}
}

// Settings changes apply in order, on Kopf's defaults, and the defaults
// are new settings every time.
func TestWithSettingsOrder(t *testing.T) {
	var got *kopf.Settings
	opts := []kopf.Option{
		kopf.WithSettings(func(s *kopf.Settings) { s.Queueing.WorkerLimit = 1 }),
		kopf.WithSettings(func(s *kopf.Settings) { s.Queueing.WorkerLimit *= 7; got = s }),
	}
	// Run fails on the namespace pattern after the options are collected.
	_ = kopf.Run(context.Background(), nil, append(opts, kopf.WithConfig(&rest.Config{Host: "https://127.0.0.1:1"}), kopf.WithNamespaces("["))...)
	if got == nil || got.Queueing.WorkerLimit != 7 || !got.Posting.Enabled {
		t.Errorf("the settings are %+v; want WorkerLimit 7 on Kopf's defaults", got)
	}
	if kopf.DefaultSettings().Queueing.WorkerLimit != 64 {
		t.Errorf("the defaults were changed")
	}
}

// WithPriority and WithPeering reach the operator's settings.Peering
// before its startup handlers run (Kopf's priority= and peering_name=: the
// peering named is mandatory).
func TestWithPriorityAndPeering(t *testing.T) {
	var logs kopftest.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	seen := make(chan kopf.PeeringSettings, 1)
	register := func(r *kopf.Registry) error {
		return r.AddActivity(kopf.ActivityHandler{ID: "peering", Activity: kopf.ActivityStartup, Fn: func(_ context.Context, kw *kopf.ActivityKwargs) (any, error) {
			seen <- kw.Settings.Peering
			cancel()
			return nil, nil
		}})
	}
	done := make(chan error, 1)
	go func() {
		done <- kopf.Run(ctx, register,
			kopf.WithConfig(&rest.Config{Host: "https://127.0.0.1:1"}),
			kopf.WithAllNamespaces(),
			kopf.WithLogger(kopf.NewLogger(&logs, kopf.LogPlain, slog.LevelInfo)),
			kopf.WithPriority(100),
			kopf.WithPeering("example"),
		)
	}()
	select {
	case p := <-seen:
		if p.Name != "example" || !p.Mandatory || p.Priority != 100 || p.Standalone {
			t.Errorf("settings.Peering in the startup handler = %+v, want the peering \"example\" (mandatory), priority 100", p)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("the startup handler did not run:\n%s", logs.String())
	}
	<-done
}
