package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kopf-go/kopf/envtest"
	"github.com/kopf-go/kopf/examples"
	"github.com/kopf-go/kopf/kopftest"
)

func TestSubhandlers(t *testing.T) {
	ctx := context.Background()
	c := examples.StartCluster(t)
	op := kopftest.Start(t, c.Config, Register)
	if _, err := envtest.Apply(ctx, c.Config, examples.Object); err != nil {
		t.Fatal(err)
	}
	const ref = "[default/kopf-example-1] "
	op.WaitLog(ref+"Creation is processed: 1 succeeded; 0 failed.", 30*time.Second)
	logs := op.Logs()
	// Each item in its own sub-handler, then the parent, in that order.
	order := []string{
		ref + "=== Handling creation for item1. ===",
		ref + "Handler 'create_fn/item1' succeeded.",
		ref + "=== Handling creation for item2. ===",
		ref + "Handler 'create_fn/item2' succeeded.",
		ref + "Handler 'create_fn' succeeded.",
	}
	pos := 0
	for _, line := range order {
		i := strings.Index(logs[pos:], line)
		if i < 0 {
			t.Fatalf("the log lacks %q after position %d:\n%s", line, pos, logs)
		}
		pos += i + len(line)
	}
	if n := op.CountLog("=== Handling creation for item1. ==="); n != 1 {
		t.Errorf("item1 was handled %d times, want once", n)
	}

	objs := kopftest.NewObjects(t, c.Config, examples.KopfExamples, "default")
	obj := objs.Get("kopf-example-1")
	for key := range obj.GetAnnotations() {
		if strings.HasPrefix(key, "kopf.zalando.org/") && key != "kopf.zalando.org/last-handled-configuration" {
			t.Errorf("progress left behind: %s", key)
		}
	}
	objs.Delete("kopf-example-1", 10*time.Second)
	op.WaitLog(ref+"Deleted, really deleted, and we are notified.", 10*time.Second)
}
