package reliability_test

import (
	"fmt"
	"net/url"
	"testing"
	"time"

	"k8s.io/client-go/rest"

	"github.com/kopf-go/kopf"
	"github.com/kopf-go/kopf/kopftest"
	"github.com/kopf-go/kopf/runtime/causes"
)

// The operator's connections to the API server go silent (a TCP proxy
// stops forwarding without closing anything) while an object is created
// through another connection. With a short inactivity timeout, the
// operator gives up the silent watch, connects again (the proxy lets new
// connections through) and handles the object, warning about the silent
// stream.
func TestSilentWatch(t *testing.T) {
	t.Parallel()
	ns := namespace(t, "silent-watch")
	ri := objects(shared.Config, ns)
	host, err := url.Parse(shared.Config.Host)
	if err != nil {
		t.Fatal(err)
	}
	proxy := startProxy(t, host.Host)
	cfg := rest.CopyConfig(shared.Config)
	cfg.Host = "https://" + proxy.Addr()

	const inactivity = 3 * time.Second
	s := fastSettings()
	s.Watching.InactivityTimeout = inactivity
	var rec calls
	op := kopftest.Start(t, cfg, register(handler("create_fn", rec.recording("create_fn", message("created")), causes.Create)), kopf.WithNamespaces(ns), withSettings(s))

	// Through the proxy, the operator works.
	create(t, ri, example("before-freeze", nil, nil, nil))
	waitHandled(t, ri, "before-freeze", 30*time.Second, "create_fn")

	accepted := proxy.Accepted()
	frozen := proxy.Freeze()
	frozenAt := time.Now()
	warning := fmt.Sprintf("The watch stream of kopfexamples.v1.kopf.dev in %s has been silent for 3 seconds; re-establishing it.", ns)
	warnings := op.CountLog(warning)
	t.Logf("froze %d connection(s)", frozen)

	create(t, ri, example("while-frozen", nil, nil, nil))
	// The inactivity timeout plus a few seconds for reconnecting.
	_, err = tryHandled(ri, "while-frozen", inactivity+12*time.Second, "create_fn")
	if err != nil {
		t.Errorf("not handled in %s of the freeze: %v", time.Since(frozenAt).Round(100*time.Millisecond), err)
	} else {
		t.Logf("handled %s after the freeze", time.Since(frozenAt).Round(100*time.Millisecond))
	}
	if op.CountLog(warning) <= warnings {
		t.Errorf("no warning about the silent watch stream after the freeze; want %q", warning)
	}
	if proxy.Accepted() <= accepted {
		t.Errorf("the operator made no new connection after the freeze: its requests went to the frozen one(s)")
	}
	if n := len(rec.of("create_fn", "while-frozen")); err == nil && n != 1 {
		t.Errorf("create_fn ran %d times for while-frozen, want 1", n)
	}
}
