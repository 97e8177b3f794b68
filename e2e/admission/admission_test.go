// Package admission tests the admission webhooks (Kopf's on.validate and
// on.mutate) on a real control plane: kube-apiserver calls the operator's
// webhook server over TLS, at 127.0.0.1 (envtest's API server runs on
// this machine), through the configurations the operator manages.
// Handlers are registered by hand through kopf.Registry, as generated
// code would.
package admission

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kopf-go/kopf"
	"github.com/kopf-go/kopf/envtest"
	"github.com/kopf-go/kopf/kopftest"
)

const managed = "auto.kopf.dev"

var (
	examples = kopf.Selector{Group: "kopf.dev", Version: "v1", Name: "kopfexamples"}
	gvr      = schema.GroupVersionResource{Group: "kopf.dev", Version: "v1", Resource: "kopfexamples"}
)

// freePort returns a port free at the time of the call.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// server is the operator's options of a local webhook server on port.
func server(port int) []kopf.Option {
	return []kopf.Option{
		kopf.WithWebhookServer(kopf.WebhookServer{Addr: "127.0.0.1", Port: port, CheckInterval: 2 * time.Second}),
		kopf.WithManagedWebhooks(managed),
	}
}

// warnings collects what the API server sends as warnings (kubectl's
// "Warning: ...").
type warnings struct {
	mu    sync.Mutex
	texts []string
}

func (w *warnings) HandleWarningHeader(code int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.texts = append(w.texts, text)
}

func (w *warnings) all() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.Join(w.texts, "|")
}

func client(t *testing.T, cfg *rest.Config, w *warnings) dynamic.NamespaceableResourceInterface {
	t.Helper()
	cfg = rest.CopyConfig(cfg)
	if w != nil {
		cfg.WarningHandler = w
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return dyn.Resource(gvr)
}

func example(name string, labels map[string]any, spec map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kopf.dev/v1", "kind": "KopfExample",
		"metadata": map[string]any{"name": name, "namespace": "default", "labels": labels},
		"spec":     spec,
	}}
}

func startEnv(t *testing.T) *envtest.Environment {
	t.Helper()
	return envtest.Start(t, envtest.WithCRDs("../../examples/crd.yaml"))
}

// TestValidateAndMutate: rejections with the handler's message and code,
// warnings, mutations stored, dry runs, a status subresource handler.
func TestValidateAndMutate(t *testing.T) {
	env := startEnv(t)
	ctx := t.Context()
	var dryRuns, statusCalls atomic.Int32
	var seen atomic.Pointer[kopf.AdmissionKwargs]
	op := kopftest.Start(t, env.Config, func(r *kopf.Registry) error {
		return errors.Join(
			r.AddWebhook(kopf.WebhookHandler{ID: "validate1", Kind: kopf.WebhookValidating, Selector: examples,
				Fn: kopf.AdmissionFunc(func(_ context.Context, kw kopf.AdmissionKwargs) error {
					if kw.DryRun {
						dryRuns.Add(1)
					}
					if kw.Name == "good" {
						seen.Store(&kw)
					}
					switch kw.Spec["field"] {
					case "wrong":
						return kopf.NewAdmissionError("Meh! I don't like it. Change the field.", 400)
					case "warn":
						kw.Warn("The field is suspicious.")
					}
					return nil
				})}),
			r.AddWebhook(kopf.WebhookHandler{ID: "mutate1", Kind: kopf.WebhookMutating, Selector: examples, Operations: []string{"CREATE"},
				Fn: kopf.AdmissionFunc(func(_ context.Context, kw kopf.AdmissionKwargs) error {
					kw.Patch.Spec()["injected"] = "by mutate1"
					kw.Patch.Dict("metadata", "labels")["mutated"] = "yes"
					return nil
				})}),
			r.AddWebhook(kopf.WebhookHandler{ID: "status1", Kind: kopf.WebhookValidating, Selector: examples, Subresource: "status",
				Fn: kopf.AdmissionFunc(func(_ context.Context, kw kopf.AdmissionKwargs) error {
					statusCalls.Add(1)
					if kw.Subresource != "status" {
						return fmt.Errorf("subresource %q", kw.Subresource)
					}
					if kw.Status["bad"] == true {
						return kopf.NewAdmissionError("No bad status.", 422)
					}
					return nil
				})}),
		)
	}, server(freePort(t))...)
	op.WaitReady(60 * time.Second)

	var warned warnings
	objs := client(t, env.Config, &warned).Namespace("default")

	// A rejection: the handler's message and code reach the client.
	_, err := objs.Create(ctx, example("wrong", nil, map[string]any{"field": "wrong"}), metav1.CreateOptions{})
	var status apierrors.APIStatus
	if !errors.As(err, &status) || status.Status().Code != 400 || !strings.Contains(err.Error(), "Meh! I don't like it. Change the field.") {
		t.Fatalf("a wrong object: %v (want code 400 and the handler's message)", err)
	}
	if !strings.Contains(err.Error(), `admission webhook "validate1.auto.kopf.dev" denied the request`) {
		t.Errorf("the rejection does not name the webhook: %v", err)
	}

	// Warnings.
	if _, err := objs.Create(ctx, example("warn", nil, map[string]any{"field": "warn"}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := warned.all(); !strings.Contains(got, "The field is suspicious.") {
		t.Errorf("warnings = %q, want the handler's", got)
	}

	// A mutation, visible on the stored object.
	if _, err := objs.Create(ctx, example("good", nil, map[string]any{"field": "good"}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	stored, err := objs.Get(ctx, "good", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if v, _, _ := unstructured.NestedString(stored.Object, "spec", "injected"); v != "by mutate1" {
		t.Errorf("spec.injected = %q, want the mutation", v)
	}
	if stored.GetLabels()["mutated"] != "yes" {
		t.Errorf("labels = %v, want the mutation", stored.GetLabels())
	}
	// The validating handler saw the request as the API server sent it,
	// after the mutation.
	if kw := seen.Load(); kw == nil {
		t.Error("validate1 did not see the object")
	} else {
		if kw.Operation != "CREATE" || kw.Subresource != "" || kw.Old != nil || kw.New == nil || kw.UserInfo.Username == "" {
			t.Errorf("kwargs: operation %q, subresource %q, old %v, user %q", kw.Operation, kw.Subresource, kw.Old, kw.UserInfo.Username)
		}
		if kw.Spec["injected"] != "by mutate1" {
			t.Errorf("validate1 saw spec %v, want the mutation (validating webhooks run after the mutating ones)", kw.Spec)
		}
		if !strings.HasPrefix(kw.Headers["Content-Type"], "application/json") {
			t.Errorf("headers: %v", kw.Headers)
		}
	}

	// A dry run: the handlers know it; nothing is stored.
	before := dryRuns.Load()
	if _, err := objs.Create(ctx, example("dry", nil, map[string]any{"field": "dry"}), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}}); err != nil {
		t.Fatal(err)
	}
	if dryRuns.Load() != before+1 {
		t.Errorf("the handler saw %d dry runs, want 1", dryRuns.Load()-before)
	}
	if _, err := objs.Get(ctx, "dry", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("a dry-run object is stored: %v", err)
	}

	// The status subresource: its own handler, not the main one's.
	if statusCalls.Load() != 0 {
		t.Errorf("the status handler was called %d times for the main resource", statusCalls.Load())
	}
	stored.Object["status"] = map[string]any{"bad": true}
	_, err = objs.UpdateStatus(ctx, stored, metav1.UpdateOptions{})
	if !errors.As(err, &status) || status.Status().Code != 422 || !strings.Contains(err.Error(), "No bad status.") {
		t.Fatalf("a bad status: %v (want code 422 and the handler's message)", err)
	}
	stored.Object["status"] = map[string]any{"good": true}
	if _, err := objs.UpdateStatus(ctx, stored, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("a good status: %v", err)
	}
	if statusCalls.Load() != 2 {
		t.Errorf("the status handler was called %d times, want 2", statusCalls.Load())
	}
	op.WaitLog("Webhook 'validate1' succeeded.", 5*time.Second)
	op.WaitLog("Webhook 'validate1' failed permanently: Meh! I don't like it. Change the field.", 5*time.Second)
}

// TestFailurePolicy: with the operator gone, a persistent webhook that
// ignores failures lets requests through, one that does not refuses them.
func TestFailurePolicy(t *testing.T) {
	env := startEnv(t)
	ctx := t.Context()
	allow := kopf.AdmissionFunc(func(context.Context, kopf.AdmissionKwargs) error { return nil })
	op := kopftest.Start(t, env.Config, func(r *kopf.Registry) error {
		return errors.Join(
			r.AddWebhook(kopf.WebhookHandler{ID: "strict", Kind: kopf.WebhookValidating, Selector: examples, Fn: allow, Persistent: true,
				Filter: kopf.Filter{Labels: map[string]kopf.Matcher{"policy": kopf.Equal("strict")}}}),
			r.AddWebhook(kopf.WebhookHandler{ID: "lenient", Kind: kopf.WebhookValidating, Selector: examples, Fn: allow, Persistent: true, IgnoreFailures: true,
				Filter: kopf.Filter{Labels: map[string]kopf.Matcher{"policy": kopf.Equal("lenient")}}}),
			r.AddWebhook(kopf.WebhookHandler{ID: "transient", Kind: kopf.WebhookValidating, Selector: examples, Fn: allow,
				Filter: kopf.Filter{Labels: map[string]kopf.Matcher{"policy": kopf.Equal("transient")}}}),
		)
	}, server(freePort(t))...)
	op.WaitReady(60 * time.Second)
	objs := client(t, env.Config, nil).Namespace("default")
	for _, policy := range []string{"strict", "lenient", "transient"} {
		if _, err := objs.Create(ctx, example(policy+"-up", map[string]any{"policy": policy}, nil), metav1.CreateOptions{}); err != nil {
			t.Fatalf("%s, the operator up: %v", policy, err)
		}
	}
	if err := op.Stop(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(op.Logs(), "Cleaning up the admission webhook auto.kopf.dev.") {
		t.Errorf("the last replica did not clean up:\n%s", op.Logs())
	}
	cs := kubernetes.NewForConfigOrDie(env.Config)
	cfg, err := cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(ctx, managed, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, w := range cfg.Webhooks {
		names = append(names, w.Name)
	}
	if strings.Join(names, ",") != "strict.auto.kopf.dev,lenient.auto.kopf.dev" {
		t.Errorf("webhooks after the exit: %v, want the persistent ones", names)
	}
	if _, err := objs.Create(ctx, example("lenient-down", map[string]any{"policy": "lenient"}, nil), metav1.CreateOptions{}); err != nil {
		t.Errorf("failurePolicy Ignore, the operator down: %v", err)
	}
	if _, err := objs.Create(ctx, example("transient-down", map[string]any{"policy": "transient"}, nil), metav1.CreateOptions{}); err != nil {
		t.Errorf("a removed webhook, the operator down: %v", err)
	}
	_, err = objs.Create(ctx, example("strict-down", map[string]any{"policy": "strict"}, nil), metav1.CreateOptions{})
	if err == nil || !strings.Contains(err.Error(), `failed calling webhook "strict.auto.kopf.dev"`) {
		t.Errorf("failurePolicy Fail, the operator down: %v, want a refusal", err)
	}
}

// TestReplicasShareTheCertificate: two operators serve the certificate of
// one Secret, which the configuration's caBundle verifies; the webhooks
// stay while one of them lives.
func TestReplicasShareTheCertificate(t *testing.T) {
	env := startEnv(t)
	ctx := t.Context()
	register := func(r *kopf.Registry) error {
		return r.AddWebhook(kopf.WebhookHandler{ID: "validate1", Kind: kopf.WebhookValidating, Selector: examples,
			Fn: kopf.AdmissionFunc(func(_ context.Context, kw kopf.AdmissionKwargs) error {
				if kw.Spec["field"] == "wrong" {
					return kopf.NewAdmissionError("wrong", 400)
				}
				return nil
			})})
	}
	ports := []int{freePort(t), freePort(t)}
	// Both start at once, and race to create the Secret.
	ops := []*kopftest.Operator{
		kopftest.Start(t, env.Config, register, server(ports[0])...),
		kopftest.Start(t, env.Config, register, server(ports[1])...),
	}
	for _, op := range ops {
		op.WaitReady(60 * time.Second)
	}
	cs := kubernetes.NewForConfigOrDie(env.Config)
	cfg, err := cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(ctx, managed, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if len(cfg.Webhooks) != 1 || !pool.AppendCertsFromPEM(cfg.Webhooks[0].ClientConfig.CABundle) {
		t.Fatalf("the configuration has no CA bundle: %+v", cfg.Webhooks)
	}
	var served [][]byte
	for _, port := range ports {
		conn, err := tls.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port), &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"})
		if err != nil {
			t.Fatalf("the caBundle does not verify the server on port %d: %v", port, err)
		}
		served = append(served, conn.ConnectionState().PeerCertificates[0].Raw)
		_ = conn.Close()
	}
	if string(served[0]) != string(served[1]) {
		t.Error("the replicas serve different certificates")
	}
	secret, err := cs.CoreV1().Secrets("default").Get(ctx, "kopf-webhook-cert", metav1.GetOptions{})
	if err != nil || len(secret.Data["tls.crt"]) == 0 {
		t.Fatalf("the certificate secret: %v", err)
	}

	// One replica exits: the webhooks stay and work.
	if err := ops[1].Stop(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(ops[1].Logs(), "Keeping the admission webhook auto.kopf.dev: other replicas serve it.") {
		t.Errorf("a replica cleaned up while another lives:\n%s", ops[1].Logs())
	}
	objs := client(t, env.Config, nil).Namespace("default")
	// The configuration may point at the replica that exited (each
	// replica writes its own URL): the live one takes it over within its
	// check interval.
	deadline := time.Now().Add(30 * time.Second)
	for {
		_, err = objs.Create(ctx, example("wrong", nil, map[string]any{"field": "wrong"}), metav1.CreateOptions{})
		if err != nil && strings.Contains(err.Error(), "denied the request: wrong") {
			break
		}
		if err == nil {
			t.Fatal("a wrong object admitted: the webhook is gone")
		}
		if time.Now().After(deadline) {
			t.Fatalf("the remaining replica does not answer: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	// The last replica exits: the webhooks go.
	if err := ops[0].Stop(); err != nil {
		t.Fatal(err)
	}
	cfg, err = cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(ctx, managed, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.Webhooks) != 0 {
		t.Errorf("webhooks after the last replica's exit: %d", len(cfg.Webhooks))
	}
}

// TestConfigurationsWrittenOnlyWhenTheyDiffer: an operator that starts
// again with the same handlers, server and certificate writes nothing;
// one whose handlers change rewrites its configuration.
func TestConfigurationsWrittenOnlyWhenTheyDiffer(t *testing.T) {
	env := startEnv(t)
	ctx := t.Context()
	port := freePort(t)
	register := func(ids ...string) func(r *kopf.Registry) error {
		return func(r *kopf.Registry) error {
			for _, id := range ids {
				if err := r.AddWebhook(kopf.WebhookHandler{ID: id, Kind: kopf.WebhookValidating, Selector: examples, Persistent: true,
					Fn: kopf.AdmissionFunc(func(context.Context, kopf.AdmissionKwargs) error { return nil })}); err != nil {
					return err
				}
			}
			return nil
		}
	}
	cs := kubernetes.NewForConfigOrDie(env.Config)
	version := func() string {
		t.Helper()
		cfg, err := cs.AdmissionregistrationV1().ValidatingWebhookConfigurations().Get(ctx, managed, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return cfg.ResourceVersion
	}
	run := func(ids ...string) *kopftest.Operator {
		t.Helper()
		op := kopftest.Start(t, env.Config, register(ids...), server(port)...)
		op.WaitReady(60 * time.Second)
		return op
	}
	op := run("a", "b")
	first := version()
	if err := op.Stop(); err != nil { // persistent: nothing to clean
		t.Fatal(err)
	}
	if v := version(); v != first {
		t.Errorf("the exit rewrote the configuration of persistent webhooks (%s → %s)", first, v)
	}
	op = run("a", "b")
	if v := version(); v != first {
		t.Errorf("a restart rewrote the configuration (%s → %s)", first, v)
	}
	if n := op.CountLog("Reconfiguring the validating webhook"); n != 0 {
		t.Errorf("a restart logged %d reconfigurations", n)
	}
	if err := op.Stop(); err != nil {
		t.Fatal(err)
	}
	op = run("a")
	if v := version(); v == first {
		t.Error("a handler removed: the configuration is not rewritten")
	}
	op.WaitLog("Reconfiguring the validating webhook auto.kopf.dev.", 5*time.Second)
}

// TestCertificateRenewal: a serving certificate due for renewal is
// replaced in the Secret and served at once, signed by the same CA, so
// the API server keeps calling the webhook without a restart.
func TestCertificateRenewal(t *testing.T) {
	env := startEnv(t)
	ctx := t.Context()
	port := freePort(t)
	op := kopftest.Start(t, env.Config, func(r *kopf.Registry) error {
		return r.AddWebhook(kopf.WebhookHandler{ID: "validate1", Kind: kopf.WebhookValidating, Selector: examples,
			Fn: kopf.AdmissionFunc(func(_ context.Context, kw kopf.AdmissionKwargs) error {
				if kw.Spec["field"] == "wrong" {
					return kopf.NewAdmissionError("wrong", 400)
				}
				return nil
			})})
	},
		// Valid 45 s (and a minute before): due for renewal ~10 s after it is made.
		kopf.WithWebhookServer(kopf.WebhookServer{Addr: "127.0.0.1", Port: port, CheckInterval: time.Second, CertValidity: 45 * time.Second}),
		kopf.WithManagedWebhooks(managed),
	)
	op.WaitReady(60 * time.Second)
	served := func() []byte {
		t.Helper()
		conn, err := tls.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port), &tls.Config{InsecureSkipVerify: true})
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		return conn.ConnectionState().PeerCertificates[0].Raw
	}
	first := served()
	deadline := time.Now().Add(40 * time.Second)
	for string(served()) == string(first) {
		if time.Now().After(deadline) {
			t.Fatal("the certificate is not renewed")
		}
		time.Sleep(200 * time.Millisecond)
	}
	op.WaitLog("Serving the renewed webhook certificate", 5*time.Second)
	objs := client(t, env.Config, nil).Namespace("default")
	_, err := objs.Create(ctx, example("wrong", nil, map[string]any{"field": "wrong"}), metav1.CreateOptions{})
	if err == nil || !strings.Contains(err.Error(), "denied the request: wrong") {
		t.Fatalf("after the renewal: %v, want the webhook's refusal", err)
	}
	if n := op.CountLog("Reconfiguring the validating webhook"); n != 1 {
		t.Errorf("the renewal with the same CA reconfigured the webhooks: %d reconfigurations, want 1", n)
	}
}
