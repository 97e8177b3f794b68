// Package versions tests versioned APIs on a real control plane: a CRD
// with two versions (v1alpha1's spec.oldName is v1's spec.newName, v1
// stored) whose conversion webhook is the operator's, served on its
// admission server next to a validating webhook. The registration is
// written by hand, as kopf-gen would generate it.
package versions

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/kopf-go/kopf"
	"github.com/kopf-go/kopf/envtest"
	"github.com/kopf-go/kopf/kopftest"
)

var (
	gvrV1       = schema.GroupVersionResource{Group: "versions.kopf.dev", Version: "v1", Resource: "widgets"}
	gvrV1alpha1 = schema.GroupVersionResource{Group: "versions.kopf.dev", Version: "v1alpha1", Resource: "widgets"}
	widgetsV1   = kopf.Selector{Group: "versions.kopf.dev", Version: "v1", Name: "widgets"}
)

const crdName = "widgets.versions.kopf.dev"

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// server is a local webhook server on port, with managed webhook
// configurations (for the validating handler).
func server(port int) []kopf.Option {
	return []kopf.Option{
		kopf.WithWebhookServer(kopf.WebhookServer{Addr: "127.0.0.1", Port: port, CheckInterval: 2 * time.Second}),
		kopf.WithManagedWebhooks("versions.kopf.dev"),
	}
}

func widget(version, name string, spec map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "versions.kopf.dev/" + version, "kind": "Widget",
		"metadata": map[string]any{"name": name, "namespace": "default"},
		"spec":     spec,
	}}
}

// seen records what the handlers saw, by object name.
type seen struct {
	mu      sync.Mutex
	created map[string]string // the v1 spec.newName the create handler saw
	diffs   map[string][]string
}

func (s *seen) get(name string) (string, []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.created[name], s.diffs[name]
}

// register adds the conversions, a create and an update handler typed on
// v1, and a validating handler of v1 that refuses a negative size.
func (s *seen) register(r *kopf.Registry) error {
	s.created, s.diffs = map[string]string{}, map[string][]string{}
	return errors.Join(
		addConversions(r),
		r.AddChanging(kopf.ChangingHandler{ID: "create_fn", Selector: widgetsV1, Reasons: []kopf.Reason{kopf.ReasonCreate},
			Fn: kopf.TypedChangingFunc(func(_ context.Context, kw kopf.TypedChangingKwargs[WidgetV1]) (any, error) {
				s.mu.Lock()
				defer s.mu.Unlock()
				s.created[kw.Name] = kw.Object.Spec.NewName
				return map[string]any{"name": kw.Object.Spec.NewName}, nil
			})}),
		r.AddChanging(kopf.ChangingHandler{ID: "update_fn", Selector: widgetsV1, Reasons: []kopf.Reason{kopf.ReasonUpdate},
			Fn: kopf.TypedChangingFunc(func(_ context.Context, kw kopf.TypedChangingKwargs[WidgetV1]) (any, error) {
				s.mu.Lock()
				defer s.mu.Unlock()
				s.diffs[kw.Name] = append(s.diffs[kw.Name], fmt.Sprint(kw.Diff))
				return nil, nil
			})}),
		r.AddWebhook(kopf.WebhookHandler{ID: "validate_size", Kind: kopf.WebhookValidating, Selector: widgetsV1,
			Fn: kopf.TypedAdmissionFunc(func(_ context.Context, kw kopf.TypedAdmissionKwargs[WidgetV1]) error {
				if kw.Object.Spec.Size < 0 {
					return kopf.NewAdmissionError(fmt.Sprintf("The size %d is negative.", kw.Object.Spec.Size), 422)
				}
				return nil
			})}),
	)
}

func clients(t *testing.T, env *envtest.Environment) (v1, v1alpha1 dynamic.ResourceInterface, dyn dynamic.Interface) {
	t.Helper()
	dyn, err := dynamic.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	return dyn.Resource(gvrV1).Namespace("default"), dyn.Resource(gvrV1alpha1).Namespace("default"), dyn
}

// waitConversion waits until the API server converts through the
// operator's webhook (it reads the CRD the operator patched a moment
// ago).
func waitConversion(t *testing.T, v1alpha1 dynamic.ResourceInterface) {
	t.Helper()
	kopftest.Eventually(t, 30*time.Second, "the conversion webhook to answer", func(ctx context.Context) (bool, error) {
		_, err := v1alpha1.Create(ctx, widget("v1alpha1", "probe", map[string]any{"oldName": "probe"}), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err == nil, nil
	})
}

func TestObjectsReadAsEitherVersion(t *testing.T) {
	env := envtest.Start(t, envtest.WithCRDs("testdata/widgets.yaml"))
	ctx := t.Context()
	var s seen
	port := freePort(t)
	op := kopftest.Start(t, env.Config, s.register, server(port)...)
	op.WaitReady(60 * time.Second)
	v1, v1alpha1, dyn := clients(t, env)
	checkCRDPatched(t, dyn, port)
	waitConversion(t, v1alpha1)

	// Created as v1alpha1, read as v1: the renamed field is kept.
	if _, err := v1alpha1.Create(ctx, widget("v1alpha1", "old", map[string]any{"oldName": "alpha", "size": int64(1)}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err := v1.Get(ctx, "old", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if name, _, _ := unstructured.NestedString(got.Object, "spec", "newName"); name != "alpha" || got.GetAPIVersion() != "versions.kopf.dev/v1" {
		t.Errorf("read as v1: %v %v", got.GetAPIVersion(), got.Object["spec"])
	}
	// Created as v1, read as v1alpha1.
	if _, err := v1.Create(ctx, widget("v1", "new", map[string]any{"newName": "one", "size": int64(2)}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err = v1alpha1.Get(ctx, "new", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if name, _, _ := unstructured.NestedString(got.Object, "spec", "oldName"); name != "one" || got.GetAPIVersion() != "versions.kopf.dev/v1alpha1" {
		t.Errorf("read as v1alpha1: %v %v", got.GetAPIVersion(), got.Object["spec"])
	}

	// The handler typed on v1 sees the v1 field, once per object; the
	// result stored in status survives a read as v1alpha1.
	for name, want := range map[string]string{"old": "alpha", "new": "one"} {
		op.WaitOutcome(kopftest.Match{Name: name, Handler: "create_fn", Result: kopftest.Succeeded}, 30*time.Second)
		if got, _ := s.get(name); got != want {
			t.Errorf("%s: the create handler saw newName %q, want %q", name, got, want)
		}
	}
	got, err = v1alpha1.Get(ctx, "old", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if v, _, _ := unstructured.NestedString(got.Object, "status", "create_fn", "name"); v != "alpha" {
		t.Errorf("status as v1alpha1: %v", got.Object["status"])
	}
	checkNoSpuriousUpdate(t, op, &s, v1alpha1)
	checkAdmissionShared(t, v1alpha1)
	checkBadConversions(t, op, v1alpha1)
}

// checkCRDPatched: the operator has written its URL and CA bundle into
// the CRD's conversion webhook, instead of the Service.
func checkCRDPatched(t *testing.T, dyn dynamic.Interface, port int) {
	t.Helper()
	crd, err := dyn.Resource(schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}).Get(t.Context(), crdName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cc, _, _ := unstructured.NestedMap(crd.Object, "spec", "conversion", "webhook", "clientConfig")
	if cc["url"] != fmt.Sprintf("https://127.0.0.1:%d/convert", port) || cc["service"] != nil || cc["caBundle"] == nil {
		t.Errorf("the CRD's conversion clientConfig: %v", cc)
	}
}

// checkNoSpuriousUpdate: the objects created as either version and
// handled as v1 get no update cause from their versions; a real change of
// each gets one, whose diff is that change alone. (The events of one
// object are processed in order: once the real change's update is seen,
// every earlier event of the object was processed.)
func checkNoSpuriousUpdate(t *testing.T, op *kopftest.Operator, s *seen, v1alpha1 dynamic.ResourceInterface) {
	t.Helper()
	for _, name := range []string{"old", "new"} {
		if _, err := v1alpha1.Patch(t.Context(), name, "application/merge-patch+json", []byte(`{"spec":{"size":5}}`), metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		op.WaitOutcome(kopftest.Match{Name: name, Handler: "update_fn", Result: kopftest.Succeeded}, 30*time.Second)
		_, diffs := s.get(name)
		if len(diffs) != 1 || !strings.Contains(diffs[0], "'size'") || strings.Contains(diffs[0], "Name") {
			t.Errorf("%s: update diffs %q; want one, of spec.size alone", name, diffs)
		}
	}
}

// checkAdmissionShared: the validating handler of v1 judges an object
// created as v1alpha1 (the API server converts it for the webhook through
// the conversion webhook: both on the one server).
func checkAdmissionShared(t *testing.T, v1alpha1 dynamic.ResourceInterface) {
	t.Helper()
	_, err := v1alpha1.Create(t.Context(), widget("v1alpha1", "negative", map[string]any{"oldName": "x", "size": int64(-1)}), metav1.CreateOptions{})
	if err == nil || !strings.Contains(err.Error(), "The size -1 is negative.") {
		t.Errorf("a negative size created as v1alpha1: %v; want the validating handler's refusal", err)
	}
}

// checkBadConversions: a conversion that fails or panics is a clear error
// in the API server's answer and in the operator's log; the operator
// keeps running and converting.
func checkBadConversions(t *testing.T, op *kopftest.Operator, v1alpha1 dynamic.ResourceInterface) {
	t.Helper()
	for _, tt := range []struct{ name, oldName, want string }{
		{"broken", badName, "broken from versions.kopf.dev/v1alpha1 to versions.kopf.dev/v1 failed: the name break-me cannot be converted"},
		{"panicking", panicName, "panicking from versions.kopf.dev/v1alpha1 to versions.kopf.dev/v1 failed: "},
	} {
		_, err := v1alpha1.Create(t.Context(), widget("v1alpha1", tt.name, map[string]any{"oldName": tt.oldName}), metav1.CreateOptions{})
		if err == nil || !strings.Contains(err.Error(), "Conversion of Widget ") || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: the API server's answer: %v; want the conversion's error", tt.name, err)
		}
		t.Logf("%s: the client's error: %v", tt.name, err)
		op.WaitLog(tt.want, 10*time.Second)
	}
	if _, err := v1alpha1.Create(t.Context(), widget("v1alpha1", "after", map[string]any{"oldName": "fine"}), metav1.CreateOptions{}); err != nil {
		t.Fatalf("a good object after the bad conversions: %v", err)
	}
	op.WaitOutcome(kopftest.Match{Name: "after", Handler: "create_fn", Result: kopftest.Succeeded}, 30*time.Second)
	select {
	case <-op.Done():
		t.Error("the operator has exited")
	default:
	}
}

// TestDiffBaseOfAnotherVersion: an operator that handled a Widget as
// v1alpha1 stored its diff-base (Kopf's last-handled-configuration, which
// has no apiVersion) in v1alpha1's fields; an operator that handles it as
// v1 compares that diff-base as it is, so its update handler runs once,
// with the renamed field in the diff, and stores a diff-base of v1.
func TestDiffBaseOfAnotherVersion(t *testing.T) {
	env := envtest.Start(t, envtest.WithCRDs("testdata/widgets.yaml"))
	widgetsV1alpha1 := kopf.Selector{Group: "versions.kopf.dev", Version: "v1alpha1", Name: "widgets"}
	older := kopftest.Start(t, env.Config, func(r *kopf.Registry) error {
		return errors.Join(addConversions(r),
			r.AddChanging(kopf.ChangingHandler{ID: "create_fn", Selector: widgetsV1alpha1, Reasons: []kopf.Reason{kopf.ReasonCreate},
				Fn: kopf.TypedChangingFunc(func(_ context.Context, kw kopf.TypedChangingKwargs[WidgetV1alpha1]) (any, error) {
					return map[string]any{"name": kw.Object.Spec.OldName}, nil
				})}))
	}, server(freePort(t))...)
	older.WaitReady(60 * time.Second)
	v1, v1alpha1, _ := clients(t, env)
	waitConversion(t, v1alpha1)
	if _, err := v1.Create(t.Context(), widget("v1", "switched", map[string]any{"newName": "s", "size": int64(1)}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	older.WaitOutcome(kopftest.Match{Name: "switched", Handler: "create_fn", Result: kopftest.Succeeded}, 30*time.Second)
	if err := older.Stop(); err != nil {
		t.Fatal(err)
	}

	var s seen
	newer := kopftest.Start(t, env.Config, s.register, server(freePort(t))...)
	newer.WaitReady(60 * time.Second)
	newer.WaitOutcome(kopftest.Match{Name: "switched", Handler: "update_fn", Result: kopftest.Succeeded}, 30*time.Second)
	_, diffs := s.get("switched")
	if len(diffs) != 1 || !strings.Contains(diffs[0], "('add', ('spec', 'newName'), None, 's')") || !strings.Contains(diffs[0], "('remove', ('spec', 'oldName'), 's', None)") {
		t.Errorf("update diffs: %q; want one, of the renamed field", diffs)
	}
	if created, _ := s.get("switched"); created != "" {
		t.Errorf("the newer operator's create handler ran (saw %q): the object was handled already", created)
	}
	// Its diff-base is of v1 now: a real change's diff is that change alone.
	if _, err := v1.Patch(t.Context(), "switched", "application/merge-patch+json", []byte(`{"spec":{"size":2}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	newer.WaitOutcomes(kopftest.Match{Name: "switched", Handler: "update_fn", Result: kopftest.Succeeded}, 2, 30*time.Second)
	if _, diffs := s.get("switched"); len(diffs) != 2 || strings.Contains(diffs[1], "Name") {
		t.Errorf("update diffs: %q; want a second one of spec.size alone", diffs)
	}
}
