package main

import (
	"os"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kopf-go/kopf/envtest"
	"github.com/kopf-go/kopf/kopftest"
)

var kopfexamples = schema.GroupVersionResource{Group: "kopf.dev", Version: "v1", Resource: "kopfexamples"}

// Kopf's test_resource_lifecycle: the operator's command line runs while
// the test creates and deletes an object; the operator neither dies on
// start nor during the operation, and logs what is expected.
func TestResourceLifecycle(t *testing.T) {
	env := envtest.Start(t, envtest.WithCRDs("../crd.yaml"))
	obj, err := os.ReadFile("../obj.yaml")
	if err != nil {
		t.Fatal(err)
	}

	// Run an operator and simulate some activity with the operated resource.
	op := kopftest.StartCommand(t, env.Config, []string{"run", "--all-namespaces", "--verbose", "--standalone"}, Register)
	if err := env.Apply(t.Context(), obj); err != nil {
		t.Fatal(err)
	}
	// Instead of sleeping, wait for what the sleep was for: the handler's
	// success, as the reactor reports it.
	op.WaitOutcome(kopftest.Match{Name: "kopf-example-1", Handler: "create_fn", Result: kopftest.Succeeded}, 10*time.Second)
	kopftest.NewObjects(t, env.Config, kopfexamples, "default").Delete("kopf-example-1", 10*time.Second)

	// Ensure that the operator did not die on start, or during the operation.
	if err := op.Stop(); err != nil {
		t.Fatalf("the operator failed: %v", err)
	}

	// There are usually more than these messages, but we only check for the certain ones.
	for _, line := range []string{
		"[default/kopf-example-1] Creation is in progress:",
		"[default/kopf-example-1] Something was logged here.",
	} {
		if !strings.Contains(op.Logs(), line) {
			t.Errorf("the operator did not log %q", line)
		}
	}
}

// The same without the command line: the handlers run as Register adds
// them, and their outcomes are asserted per object, not parsed from the
// log: create_fn ran once per object and succeeded at its first attempt.
func TestCreateFnOutcomes(t *testing.T) {
	env := envtest.Start(t, envtest.WithCRDs("../crd.yaml"))
	op := kopftest.Start(t, env.Config, Register)
	objs := kopftest.NewObjects(t, env.Config, kopfexamples, "default")
	for _, name := range []string{"one", "two"} {
		objs.Create(map[string]any{
			"apiVersion": "kopf.dev/v1",
			"kind":       "KopfExample",
			"metadata":   map[string]any{"name": name},
		})
	}

	for _, name := range []string{"one", "two"} {
		got := op.WaitOutcome(kopftest.Match{Name: name, Handler: "create_fn"}, 10*time.Second)
		if got.Result != kopftest.Succeeded || got.Retry != 0 || got.Cause != "create" {
			t.Errorf("create_fn on %s: %v, want a success at the first attempt", name, got)
		}
	}
	op.WaitLog("[default/two] Creation is processed: 1 succeeded; 0 failed.", 10*time.Second)
	if err := op.Stop(); err != nil {
		t.Fatalf("the operator failed: %v", err)
	}
	if n := len(op.Outcomes(kopftest.Match{Handler: "create_fn"})); n != 2 {
		t.Errorf("create_fn ran %d times, want 2 (once per object)", n)
	}
}
