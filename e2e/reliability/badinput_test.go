package reliability_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kopf-go/kopf"
	"github.com/kopf-go/kopf/kopftest"
	"github.com/kopf-go/kopf/runtime/causes"
	"github.com/kopf-go/kopf/runtime/kwargs"
)

// Bad input does not stop the operator: malformed progress records and
// diff-bases are logged and treated as absent, and the objects end up
// handled with good ones; a handler that panics is retried, while other
// objects are served meanwhile.
func TestBadInput(t *testing.T) {
	t.Parallel()
	ns := namespace(t, "bad-input")
	ri := objects(shared.Config, ns)
	var rec calls
	panicky := rec.recording("panicky_fn", func(_ context.Context, kw *kwargs.Changing) (any, error) {
		if kw.Labels["panic"] == "yes" && kw.Retry < 2 {
			var m map[string]any
			m["boom"] = kw.Retry // a genuine runtime panic: assignment to a nil map
		}
		return map[string]any{"message": "calm"}, nil
	})
	op := kopftest.Start(t, shared.Config, register(
		handler("create_fn", rec.recording("create_fn", message("created")), causes.Create),
		handler("other_fn", rec.recording("other_fn", message("created")), causes.Create),
		handler("panicky_fn", panicky, causes.Create),
	), kopf.WithNamespaces(ns))
	results := []string{"create_fn", "other_fn", "panicky_fn"}

	t.Run("malformed progress", func(t *testing.T) {
		create(t, ri, example("malformed-progress", nil, nil, map[string]string{
			prefix + "create_fn":  "not json {",                               // not JSON
			prefix + "other_fn":   `{"retries":"many","success":"yes"}`,       // wrong types
			prefix + "panicky_fn": `["started","2020-02-14T16:58:25.396364"]`, // not an object
		}))
		waitHandled(t, ri, "malformed-progress", 30*time.Second, results...)
		for _, id := range results {
			op.WaitLog(fmt.Sprintf("[%s/malformed-progress] The progress of Handler '%s' is malformed and is treated as absent", ns, id), 5*time.Second)
			calls := rec.of(id, "malformed-progress")
			if len(calls) != 1 || calls[0].Retry != 0 {
				t.Errorf("%s: invocations %+v, want one with retry 0", id, calls)
			}
		}
	})

	t.Run("malformed diff-base", func(t *testing.T) {
		for name, value := range map[string]string{
			"malformed-diffbase":  "{not json\n",
			"diffbase-not-object": "[\"spec\"]\n",
		} {
			create(t, ri, example(name, nil, nil, map[string]string{diffBaseKey: value}))
			obj := waitHandled(t, ri, name, 30*time.Second, results...)
			op.WaitLog(fmt.Sprintf("[%s/%s] The diff-base is malformed and is treated as absent", ns, name), 5*time.Second)
			diffBase(t, obj) // a good one now
			for _, id := range results {
				if calls := rec.of(id, name); len(calls) != 1 || calls[0].Reason != causes.Create {
					t.Errorf("%s: %s invocations %+v, want one for creation", name, id, calls)
				}
			}
		}
	})

	t.Run("panicking handler", func(t *testing.T) {
		create(t, ri, example("panicking", nil, map[string]string{"panic": "yes"}, nil))
		failure := fmt.Sprintf("[%s/panicking] Handler 'panicky_fn' failed with an exception and will try again in 1 seconds: panic: assignment to entry in nil map", ns)
		op.WaitLog(failure, 30*time.Second)
		// Served meanwhile: another object, while panicking is being retried.
		create(t, ri, example("bystander", nil, nil, nil))
		waitHandled(t, ri, "bystander", 10*time.Second, results...)
		obj := waitHandled(t, ri, "panicking", 30*time.Second, results...)
		if n := op.CountLog(failure); n != 2 {
			t.Errorf("the panic was logged %d times, want 2", n)
		}
		calls := rec.of("panicky_fn", "panicking")
		if len(calls) != 3 || calls[2].Retry != 2 {
			t.Errorf("panicky_fn invocations %+v, want 3, the last with retry 2", calls)
		}
		if msg := fmt.Sprint(obj.Object["status"].(map[string]any)["panicky_fn"]); !strings.Contains(msg, "calm") {
			t.Errorf("status.panicky_fn is %s", msg)
		}
		if !strings.Contains(op.Logs(), "goroutine ") {
			t.Errorf("the panic's stack is not logged")
		}
	})
}
