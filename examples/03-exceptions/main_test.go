package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kopf-go/kopf/envtest"
	"github.com/kopf-go/kopf/examples"
	"github.com/kopf-go/kopf/kopftest"
)

// As Kopf's own end-to-end run of this example: create, wait until the
// creation is processed, check the log, delete, stop.
func TestExceptions(t *testing.T) {
	ctx := context.Background()
	c := examples.StartCluster(t)
	op := kopftest.Start(t, c.Config, Register)
	if _, err := envtest.Apply(ctx, c.Config, examples.Object); err != nil {
		t.Fatal(err)
	}
	const ref = "[default/kopf-example-1] "
	op.WaitLog(ref+"Creation is processed: 1 succeeded; 3 failed.", 30*time.Second)

	for _, line := range []string{
		"Handler 'instant_failure_with_only_a_message' failed permanently: Fail once and for all.",
		"Handler 'eventual_success_with_a_few_messages' failed temporarily: Expected recoverable error.",
		"Handler 'eventual_success_with_a_few_messages' succeeded.",
		"Handler 'eventual_failure_with_tracebacks' failed with an exception and will try again in 1 seconds: An error that is supposed to be recoverable.",
		"Handler 'eventual_failure_with_tracebacks' failed with an exception and will stop now (it would exceed 3 retries on the next attempt): An error that is supposed to be recoverable.",
		"Handler 'instant_failure_with_traceback' failed with an exception and will stop now: An error that is supposed to be recoverable.",
	} {
		if !strings.Contains(op.Logs(), ref+line) {
			t.Errorf("the log lacks %q", line)
		}
	}
	if n := op.CountLog("Handler 'eventual_success_with_a_few_messages' failed temporarily"); n != 3 {
		t.Errorf("EventualSuccessWithAFewMessages failed temporarily %d times, want 3", n)
	}
	if n := op.CountLog("Handler 'eventual_failure_with_tracebacks' failed with an exception and will try again"); n != 2 {
		t.Errorf("EventualFailureWithTracebacks was retried %d times, want 2", n)
	}
	if n := op.CountLog("Handler 'instant_failure_with_only_a_message' is invoked."); n != 1 {
		t.Errorf("InstantFailureWithOnlyAMessage was invoked %d times, want 1", n)
	}

	// Fully processed: no progress left, the diff-base stored.
	objs := kopftest.NewObjects(t, c.Config, examples.KopfExamples, "default")
	obj := objs.WaitFor("kopf-example-1", 10*time.Second, func(o *unstructured.Unstructured) bool {
		_, ok := o.GetAnnotations()["kopf.zalando.org/last-handled-configuration"]
		return ok
	})
	for key := range obj.GetAnnotations() {
		if strings.HasPrefix(key, "kopf.zalando.org/") && key != "kopf.zalando.org/last-handled-configuration" {
			t.Errorf("progress left behind: %s", key)
		}
	}

	objs.Delete("kopf-example-1", 10*time.Second)
	op.WaitLog(ref+"Deleted, really deleted, and we are notified.", 10*time.Second)
}
