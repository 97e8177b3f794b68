package reliability_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kopf-go/kopf/kopftest"
	"github.com/kopf-go/kopf/runtime/causes"
	"github.com/kopf-go/kopf/runtime/kwargs"
)

// kube-apiserver restarts (etcd stays) while the operator runs: a handler
// that finishes during the outage gets its result written once the server
// is back; objects created right after the restart (while the operator's
// watch is still reconnecting) and later are all handled; an object handled
// before the outage is not handled again.
//
// envtest restarts kube-apiserver on the same port; cluster.StopAPIServer
// and StartAPIServer keep its certificates so that existing clients, the
// operator's included, can reconnect.
func TestAPIServerRestart(t *testing.T) {
	t.Parallel()
	c := startCluster(t)
	ri := objects(c.Config, "default")
	var rec calls
	outage := make(chan struct{}) // closed once the API server is down
	fn := rec.recording("create_fn", func(ctx context.Context, kw *kwargs.Changing) (any, error) {
		if kw.Labels["finish"] == "during-outage" {
			select {
			case <-outage:
			case <-time.After(60 * time.Second):
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		return map[string]any{"message": "created"}, nil
	})
	op := kopftest.Start(t, c.Config, register(handler("create_fn", fn, causes.Create)))

	create(t, ri, example("before", nil, nil, nil))
	waitHandled(t, ri, "before", 30*time.Second, "create_fn")

	create(t, ri, example("interrupted", nil, map[string]string{"finish": "during-outage"}, nil))
	rec.wait(t, "create_fn", "interrupted", 1, 30*time.Second)
	if err := c.StopAPIServer(); err != nil {
		t.Fatalf("stopping the API server: %v", err)
	}
	close(outage)
	// The handler's result cannot be written now: the operator must notice
	// and retry rather than give up.
	op.WaitLog("[default/interrupted] Request attempt #1/9 failed; will retry: PATCH ", 10*time.Second)
	outageStart := time.Now()
	if err := c.StartAPIServer(); err != nil {
		t.Fatalf("starting the API server again: %v", err)
	}
	t.Logf("the API server was down for %s", time.Since(outageStart).Round(100*time.Millisecond))

	create(t, ri, example("right-after-1", nil, nil, nil))
	create(t, ri, example("right-after-2", nil, nil, nil))
	for _, name := range []string{"interrupted", "right-after-1", "right-after-2"} {
		waitHandled(t, ri, name, 60*time.Second, "create_fn")
	}
	create(t, ri, example("later", nil, nil, nil))
	waitHandled(t, ri, "later", 30*time.Second, "create_fn")

	// Its outcome was written by sending the same patch again once the
	// server was back (Kopf's request retries), not by running it again.
	if n := len(rec.of("create_fn", "interrupted")); n != 1 {
		t.Errorf("create_fn ran %d times for the object interrupted by the outage, want 1", n)
	}
	if n := len(rec.of("create_fn", "before")); n != 1 {
		t.Errorf("create_fn ran %d times for the object handled before the outage, want 1", n)
	}
	for _, name := range []string{"right-after-1", "right-after-2", "later"} {
		if n := len(rec.of("create_fn", name)); n != 1 {
			t.Errorf("create_fn ran %d times for %s, want 1", n, name)
		}
	}
	if strings.Contains(op.Logs(), "panic") {
		t.Errorf("the operator logged a panic")
	}
}
