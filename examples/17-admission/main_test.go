package main

import (
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/kopf-go/kopf"
	"github.com/kopf-go/kopf/envtest"
	"github.com/kopf-go/kopf/examples"
	"github.com/kopf-go/kopf/kopftest"
)

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

// warnings collects the warnings that the API server sends to a client
// (kubectl's "Warning: ...").
type warnings struct {
	mu    sync.Mutex
	texts []string
}

func (w *warnings) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.texts = append(w.texts, text)
}

// take returns the warnings received since the last call.
func (w *warnings) take() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := w.texts
	w.texts = nil
	return out
}

// object is Kopf's example object (../obj.yaml) with spec.field set.
func object(t *testing.T, name, field string) *unstructured.Unstructured {
	t.Helper()
	var obj unstructured.Unstructured
	if err := yaml.Unmarshal(examples.Object, &obj.Object); err != nil {
		t.Fatal(err)
	}
	obj.SetName(name)
	obj.SetNamespace("default")
	if err := unstructured.SetNestedField(obj.Object, field, "spec", "field"); err != nil {
		t.Fatal(err)
	}
	return &obj
}

// refused checks that err is the API server's refusal by the webhook
// "<id>.auto.kopf.dev" with the handler's message and code.
func refused(t *testing.T, err error, id, message string, code int32) {
	t.Helper()
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		t.Fatalf("%v, want the refusal of %s", err, id)
	}
	want := `admission webhook "` + id + `.auto.kopf.dev" denied the request: ` + message
	if status.Status().Code != code || !strings.Contains(err.Error(), want) {
		t.Errorf("%v (code %d), want %q with code %d", err, status.Status().Code, want, code)
	}
}

// As Kopf's example, on a real control plane: envtest's kube-apiserver
// calls the operator's webhooks on 127.0.0.1 through the configurations
// that the operator manages (auto.kopf.dev), with the certificate that it
// generates. The refusals carry the handlers' messages and codes, the
// warnings reach the client, the mutation is stored, dry runs pass
// validate1, and the status subresource is checked on its own.
func TestAdmission(t *testing.T) {
	env := envtest.Start(t, envtest.WithCRDs("../crd.yaml"))
	ctx := t.Context()
	// A free port instead of 9443; the startup handler keeps it, and
	// manages the configurations as auto.kopf.dev.
	op := kopftest.Start(t, env.Config, Register,
		kopf.WithWebhookServer(kopf.WebhookServer{Addr: "127.0.0.1", Port: freePort(t)}))
	op.WaitReady(60 * time.Second)

	var warned warnings
	cfg := rest.CopyConfig(env.Config)
	cfg.WarningHandler = &warned
	objs := dynamic.NewForConfigOrDie(cfg).Resource(examples.KopfExamples).Namespace("default")

	// validate1: a wrong field is refused (Kopf's default code, 500).
	_, err := objs.Create(ctx, object(t, "wrong", "wrong"), metav1.CreateOptions{})
	refused(t, err, "validate1", "Meh! I don't like it. Change the field.", 500)
	// ... but not in a dry run, of which validate1 knows.
	if _, err := objs.Create(ctx, object(t, "dry", "wrong"), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
		t.Errorf("a dry run of a wrong object: %v", err)
	}
	// validate2: a value of the field, with its code. (Its webhook is
	// named after its id validate2/spec.field, with the "/" as a ".".)
	_, err = objs.Create(ctx, object(t, "lazy", "not-allowed"), metav1.CreateOptions{})
	refused(t, err, "validate2.spec.field", "I'm too lazy anyway. Go away!", 555)
	warned.take()

	// Kopf's example object: admitted with authhook's and
	// validate_subresources' warnings, and mutated by mutate1 (it has the
	// label somelabel=somevalue).
	if _, err := objs.Create(ctx, object(t, "kopf-example-1", "value"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(warned.take(), "\n")
	for _, want := range []string{
		"Accessing as user-agent: kube-apiserver-admission",
		"SSL peer is not identified.",
		"Also update status.field to match spec.field: 'value' != None",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("warnings:\n%s\nwant %q", got, want)
		}
	}
	stored, err := objs.Get(ctx, "kopf-example-1", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if v, found, _ := unstructured.NestedInt64(stored.Object, "spec", "injected"); !found || v != 123 {
		t.Errorf("spec.injected = %v (found: %v), want mutate1's 123; spec: %v", v, found, stored.Object["spec"])
	}
	// An object without the label is not mutated.
	plain := object(t, "plain", "value")
	plain.SetLabels(nil)
	if _, err := objs.Create(ctx, plain, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if stored, err := objs.Get(ctx, "plain", metav1.GetOptions{}); err != nil {
		t.Fatal(err)
	} else if _, found, _ := unstructured.NestedFieldNoCopy(stored.Object, "spec", "injected"); found {
		t.Errorf("an object without the label is mutated: %v", stored.Object["spec"])
	}

	// validate_subresources: a status that differs from the spec is
	// refused; one that follows it passes, and the warning is gone.
	stored.Object["status"] = map[string]any{"field": "other"}
	_, err = objs.UpdateStatus(ctx, stored, metav1.UpdateOptions{})
	refused(t, err, "validate-subresources", "status.field MUST be equal to spec.field!", 500)
	stored.Object["status"] = map[string]any{"field": "value"}
	if stored, err = objs.UpdateStatus(ctx, stored, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("a status that follows the spec: %v", err)
	}
	warned.take()
	stored.SetAnnotations(map[string]string{"touched": "yes"})
	if _, err := objs.Update(ctx, stored, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(warned.take(), "\n"); strings.Contains(got, "Also update status.field") {
		t.Errorf("a warning about a status that follows the spec:\n%s", got)
	}

	if err := op.Stop(); err != nil {
		t.Fatalf("the operator: %v", err)
	}
	if n := op.CountLog("Activity 'config' succeeded."); n != 1 {
		t.Errorf("the startup handler config succeeded %d times, want 1:\n%s", n, op.Logs())
	}
}
