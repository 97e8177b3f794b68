package main

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kopf-go/kopf/envtest"
	"github.com/kopf-go/kopf/examples"
	"github.com/kopf-go/kopf/kopftest"
)

const (
	name = "kopf-example-1"
	ref  = "[default/kopf-example-1] "
)

// As Kopf's end-to-end run of this example: create Kopf's example object;
// both daemons fail their first three attempts, a second apart, then
// ping; the object is deleted, the daemons are stopped (the async one by
// cancelling its ctx after its cancellation_backoff) and the finalizer is
// released.
func TestDaemons(t *testing.T) {
	env := envtest.Start(t, envtest.WithCRDs("../crd.yaml"))
	objs := kopftest.NewObjects(t, env.Config, examples.KopfExamples, "default")
	op := kopftest.Start(t, env.Config, Register)
	if err := env.Apply(t.Context(), examples.Object); err != nil {
		t.Fatal(err)
	}

	// Three failures each, retried after the error's delay of 1s (not
	// the backoff=3 of the marker: a TemporaryError's delay wins).
	for _, id := range []string{"background_sync", "background_async"} {
		fails := op.WaitOutcomes(kopftest.Match{Name: name, Handler: id, Cause: kopftest.CauseDaemon, Result: kopftest.Retrying}, 3, 30*time.Second)
		for i, o := range fails {
			if o.Retry != i || o.Delay != time.Second || o.Message != "Simulated failure." {
				t.Errorf("%s: failure %d is %v, want retry %d in 1s: Simulated failure.", id, i, o, i)
			}
			if i > 0 {
				if gap := o.Time.Sub(fails[i-1].Time); gap < 950*time.Millisecond || gap > 10*time.Second {
					t.Errorf("%s: attempt %d came %s after the previous failure, want about 1s", id, i, gap)
				}
			}
		}
	}
	op.WaitLog(ref+"=> Ping from a sync daemon: field='value', retry=3", 30*time.Second)
	op.WaitLog(ref+"=> Ping from an async daemon: field='value'", 30*time.Second)
	// The sync daemon's patch of each failure is applied: the last says 3.
	objs.WaitFor(name, 10*time.Second, func(o *unstructured.Unstructured) bool {
		msg, _, _ := unstructured.NestedString(o.Object, "status", "message")
		return msg == "Failed 3 times."
	})
	// The daemons hold the finalizer while they run.
	if f := objs.Get(name).GetFinalizers(); len(f) != 1 || f[0] != "kopf.zalando.org/KopfFinalizerMarker" {
		t.Errorf("finalizers while the daemons run: %v, want Kopf's", f)
	}

	// Deletion stops both: the sync daemon at once (it watches
	// kw.Stopped), the async one a second later (cancellation_backoff=1.0:
	// then its ctx is cancelled). The object goes once both have exited.
	started := time.Now()
	objs.Delete(name, 20*time.Second)
	if took := time.Since(started); took < time.Second {
		t.Errorf("the object was released %s after its deletion, before the async daemon's cancellation_backoff of 1s", took)
	}
	for _, line := range []string{
		"Daemon 'background_sync' has exited on request and will not be retried or restarted.",
		"Daemon 'background_async' is signalled to exit gracefully.",
		"Daemon 'background_async' is signalled to exit by force.",
		"Daemon 'background_async' is cancelled. Will escalate.",
		"Daemon 'background_async' has exited on request and will not be retried or restarted.",
	} {
		op.WaitLog(ref+line, 10*time.Second)
	}
	if n := op.CountLog("did not exit in time"); n != 0 {
		t.Errorf("a daemon was left orphaned (%d times)", n)
	}
	// Neither ran again after the deletion.
	if n := op.CountLog(ref + "Daemon 'background_sync' is invoked."); n != 4 {
		t.Errorf("background_sync was invoked %d times, want 4 (3 failures, 1 run)", n)
	}
	if err := op.Stop(); err != nil {
		t.Fatalf("the operator: %v", err)
	}
}
