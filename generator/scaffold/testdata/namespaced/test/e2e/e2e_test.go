// Package e2e tests the operator end to end: its handlers run in an operator
// in the test's process (kopftest), against a real etcd and kube-apiserver
// (envtest) with the CRD of config/crd/ installed, on the example object of
// config/samples/.
//
// It needs the binaries of etcd and kube-apiserver: `make test-e2e` builds
// them with `kopf-gen envtest` (once; they are cached) and runs this test.
// Elsewhere, such as `go test ./...` on a machine without them, the test is
// skipped and says so. `make test-e2e ENVTEST_CONTROLLERS=1` runs it in full
// mode, with the controllers of a cluster and simulated nodes (see
// controlPlane).
package e2e

import (
	"errors"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/kopf-go/kopf"
	"github.com/kopf-go/kopf/envtest"
	"github.com/kopf-go/kopf/kopftest"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	v1alpha1 "github.com/acme/widget-operator/api/v1alpha1"
	"github.com/acme/widget-operator/internal/handlers"
)

var gvr = schema.GroupVersionResource{Group: "example.com", Version: "v1alpha1", Resource: "widgets"}

// timeout bounds every wait of the test.
const timeout = 30 * time.Second

// requireControlPlane skips the test when there are no control-plane
// binaries, unless KOPF_E2E is set (as `make test-e2e` does): then their
// absence fails it.
func requireControlPlane(t *testing.T) {
	t.Helper()
	if _, err := envtest.Assets(); errors.Is(err, envtest.ErrNoAssets) {
		if os.Getenv("KOPF_E2E") != "" {
			t.Fatalf("no control plane, though KOPF_E2E is set: %v", err)
		}
		t.Skipf("no control plane for the end-to-end test (make test-e2e builds one with kopf-gen envtest and runs it): %v", err)
	}
}

// controlPlane starts the test's control plane with the CRD of config/crd/
// installed: etcd and kube-apiserver (fast mode) or, with
// KOPF_E2E_CONTROLLERS set (`make test-e2e ENVTEST_CONTROLLERS=1`), also
// kube-controller-manager, kube-scheduler and a kwok node (full mode: owner
// references are garbage-collected, namespaces are deleted, Deployments get
// pods that run). Handlers whose effects depend on those want full mode;
// pass envtest.WithControllers() always, then.
func controlPlane(t *testing.T) *envtest.Environment {
	t.Helper()
	opts := []envtest.Option{envtest.WithCRDs("../../config/crd")}
	if os.Getenv("KOPF_E2E_CONTROLLERS") != "" {
		t.Log("Full mode: with kube-controller-manager, kube-scheduler and kwok.")
		opts = append(opts, envtest.WithControllers())
	}
	return envtest.Start(t, opts...)
}

// TestWidget creates the example Widget, changes it and deletes it, and
// checks what each handler did.
func TestWidget(t *testing.T) {
	requireControlPlane(t)
	env := controlPlane(t)
	// The API server (envtest's, on this machine) calls the admission
	// webhooks at 127.0.0.1, on a free port, through the configurations
	// that the operator manages.
	op := kopftest.Start(t, env.Config, handlers.Register,
		kopf.WithWebhookServer(kopf.WebhookServer{Addr: "127.0.0.1", Port: freePort(t)}),
		kopf.WithManagedWebhooks("widget-operator.example.com"))
	op.WaitReady(timeout)
	objects := kopftest.NewObjects(t, env.Config, gvr, "default")

	// Validate: the API server refuses a greeting that shouts, with the
	// handler's message.
	loud := sample(t)
	loud["metadata"] = map[string]any{"name": "loud"}
	loud["spec"] = map[string]any{"greeting": "HELLO"}
	client := dynamic.NewForConfigOrDie(env.Config).Resource(gvr).Namespace("default")
	if _, err := client.Create(t.Context(), &unstructured.Unstructured{Object: loud}, metav1.CreateOptions{}); err == nil ||
		!strings.Contains(err.Error(), "spec.greeting must not shout") {
		t.Errorf("a shouting greeting: %v, want the refusal of the Validate handler", err)
	}
	// Default: a Widget created without a greeting gets one.
	quiet := sample(t)
	quiet["metadata"] = map[string]any{"name": "quiet"}
	quiet["spec"] = map[string]any{}
	objects.Create(quiet)
	if got := typed(t, objects.Get("quiet")).Spec.Greeting; got != "Hello" {
		t.Errorf("the greeting of a Widget created without one is %q, want Default's Hello", got)
	}

	// Create: the operator says hello in status.create.
	name := objects.Create(sample(t)).GetName()
	op.WaitOutcome(kopftest.Match{Name: name, Handler: "create", Result: kopftest.Succeeded}, timeout)
	if got, want := typed(t, objects.Get(name)).Status.Create, "Hello, "+name+"!"; got == nil || got.Message != want {
		t.Errorf("status.create is %+v, want the message %q", got, want)
	}
	checkReady(t, typed(t, objects.Get(name)))

	// Update: a new greeting is one change, in status.update.changes.
	objects.MergePatch(name, map[string]any{"spec": map[string]any{"greeting": "Hi"}})
	op.WaitOutcome(kopftest.Match{Name: name, Handler: "update", Result: kopftest.Succeeded}, timeout)
	if got := typed(t, objects.Get(name)).Status.Update; got == nil || got.Changes != 1 {
		t.Errorf("status.update is %+v, want 1 change", got)
	}
	checkReady(t, typed(t, objects.Get(name)))

	// Delete: the object goes once the Delete handler has succeeded and
	// the operator has removed its finalizer.
	objects.Delete(name, timeout)
	op.WaitOutcome(kopftest.Match{Name: name, Handler: "delete", Result: kopftest.Succeeded}, timeout)

	// No handler failed or had to be retried, and the operator stops cleanly.
	for _, result := range []kopftest.Result{kopftest.Failed, kopftest.Retrying} {
		for _, o := range op.Outcomes(kopftest.Match{Result: result}) {
			t.Errorf("a handler %s: %s", result, o)
		}
	}
	if err := op.Stop(); err != nil {
		t.Errorf("the operator exited with %v", err)
	}
}

// freePort returns a port that is free at the time of the call.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// sample reads the example Widget of config/samples/.
func sample(t *testing.T) map[string]any {
	t.Helper()
	data, err := os.ReadFile("../../config/samples/widgets.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var obj map[string]any
	if err := yaml.Unmarshal(data, &obj); err != nil {
		t.Fatal(err)
	}
	return obj
}

// typed converts an object read through the dynamic client to its Go type.
func typed(t *testing.T, u *unstructured.Unstructured) *v1alpha1.Widget {
	t.Helper()
	var obj v1alpha1.Widget
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &obj); err != nil {
		t.Fatal(err)
	}
	return &obj
}

// checkReady checks that the object's Ready condition is True and was set
// for its current generation.
func checkReady(t *testing.T, obj *v1alpha1.Widget) {
	t.Helper()
	ready := meta.FindStatusCondition(obj.Status.Conditions, "Ready")
	if ready == nil || ready.Status != metav1.ConditionTrue || ready.ObservedGeneration != obj.Generation {
		t.Errorf("the Ready condition is %+v, want True at generation %d", ready, obj.Generation)
	}
}
