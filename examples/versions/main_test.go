package main

import (
	"context"
	"encoding/json"
	"net"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/kopf-go/kopf"
	"github.com/kopf-go/kopf/envtest"
	v1 "github.com/kopf-go/kopf/examples/apis/greetings/v1"
	"github.com/kopf-go/kopf/examples/apis/greetings/v1alpha1"
	"github.com/kopf-go/kopf/examples/generated/clientset/versioned"
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

// message returns the handler's message in a Greeting's status, if any.
func message(t *testing.T, status []byte) string {
	t.Helper()
	var s struct {
		Greet struct {
			Message string `json:"message"`
		} `json:"greet"`
	}
	if len(status) > 0 {
		if err := json.Unmarshal(status, &s); err != nil {
			t.Fatal(err)
		}
	}
	return s.Greet.Message
}

// The CRD that kopf-gen generated (config/crd: both versions, the
// conversion webhook) on a real API server, which calls the operator's
// conversions on 127.0.0.1: a Greeting created as v1alpha1 is read as v1
// with its field renamed, and greeted by the handler typed on v1; one
// created as v1 is read as v1alpha1; the handler's result in the status
// survives the conversions.
func TestVersions(t *testing.T) {
	env := envtest.Start(t, envtest.WithCRDs("config/crd/greetings.kopf.dev_greetings.yaml"))
	op := kopftest.Start(t, env.Config, Register,
		kopf.WithWebhookServer(kopf.WebhookServer{Addr: "127.0.0.1", Port: freePort(t)}))
	op.WaitReady(60 * time.Second)
	cs := versioned.NewForConfigOrDie(env.Config)
	olds, news := cs.GreetingsV1alpha1().Greetings("default"), cs.GreetingsV1().Greetings("default")

	// The API server converts once the operator has written its URL and
	// CA bundle into the CRD.
	kopftest.Eventually(t, 30*time.Second, "the conversion webhook to answer", func(ctx context.Context) (bool, error) {
		_, err := olds.Create(ctx, &v1alpha1.Greeting{ObjectMeta: metav1.ObjectMeta{Name: "probe"}}, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err == nil, nil
	})

	ctx := t.Context()
	if _, err := olds.Create(ctx, &v1alpha1.Greeting{ObjectMeta: metav1.ObjectMeta{Name: "alice"}, Spec: v1alpha1.GreetingSpec{Name: "Alice"}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating a v1alpha1 Greeting: %v", err)
	}
	got, err := news.Get(ctx, "alice", metav1.GetOptions{})
	if err != nil || got.Spec.Greetee != "Alice" {
		t.Fatalf("the v1alpha1 Greeting read as v1: %+v, %v", got, err)
	}
	op.WaitOutcome(kopftest.Match{Name: "alice", Handler: "greet", Result: kopftest.Succeeded}, 30*time.Second)
	kopftest.Eventually(t, 30*time.Second, "the greeting in the v1alpha1 object's status", func(ctx context.Context) (bool, error) {
		old, err := olds.Get(ctx, "alice", metav1.GetOptions{})
		if err != nil || old.Status == nil {
			return false, err
		}
		return message(t, old.Status.Raw) == "hello, Alice", nil
	})

	if _, err := news.Create(ctx, &v1.Greeting{ObjectMeta: metav1.ObjectMeta{Name: "bob"}, Spec: v1.GreetingSpec{Greetee: "Bob"}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("creating a v1 Greeting: %v", err)
	}
	old, err := olds.Get(ctx, "bob", metav1.GetOptions{})
	if err != nil || old.Spec.Name != "Bob" {
		t.Fatalf("the v1 Greeting read as v1alpha1: %+v, %v", old, err)
	}
	op.WaitOutcome(kopftest.Match{Name: "bob", Handler: "greet", Result: kopftest.Succeeded}, 30*time.Second)

	// An update in v1alpha1 is stored as v1 (again on a conflict with the
	// operator's own writes).
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		old, err := olds.Get(ctx, "bob", metav1.GetOptions{})
		if err != nil {
			return err
		}
		old.Spec.Name = "Robert"
		_, err = olds.Update(ctx, old, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("updating the Greeting as v1alpha1: %v", err)
	}
	if got, err := news.Get(ctx, "bob", metav1.GetOptions{}); err != nil || got.Spec.Greetee != "Robert" {
		t.Errorf("the updated Greeting read as v1: %+v, %v", got, err)
	}
	if err := op.Stop(); err != nil {
		t.Fatalf("the operator failed: %v", err)
	}
}
