package v1_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kopf-go/kopf"
	"github.com/kopf-go/kopf/envtest"
	v1 "github.com/kopf-go/kopf/examples/apis/kopf/v1"
	ac "github.com/kopf-go/kopf/examples/generated/applyconfiguration/kopf/v1"
	"github.com/kopf-go/kopf/examples/generated/clientset/versioned"
	"github.com/kopf-go/kopf/kopftest"
)

// TestTypedClients uses the clientset and the apply configurations that
// kopf-gen --clients generated for KopfExample against a real API server:
// create, get, apply and list, typed; then an operator's handler applies
// to its own object's status with the operator's shared clientset
// (kopf.Client), next to the handler's result that the operator stores.
func TestTypedClients(t *testing.T) {
	ctx := t.Context()
	env := envtest.Start(t, envtest.WithCRDs("../../../crd.yaml"))
	cs, err := versioned.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	kexes := cs.KopfV1().KopfExamples("default")

	created, err := kexes.Create(ctx, &v1.KopfExample{
		ObjectMeta: metav1.ObjectMeta{Name: "typed"},
		Spec:       v1.KopfExampleSpec{Field: "value", Items: []string{"item1", "item2"}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	got, err := kexes.Get(ctx, "typed", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	if got.UID != created.UID || got.Spec.Field != "value" || !slices.Equal(got.Spec.Items, []string{"item1", "item2"}) {
		t.Errorf("got %+v, want the created object", got)
	}
	applied, err := kexes.Apply(ctx,
		ac.KopfExample("applied", "default").WithSpec(ac.KopfExampleSpec().WithField("applied").WithItems("a", "b")),
		metav1.ApplyOptions{FieldManager: "kopf-example-test"})
	if err != nil {
		t.Fatalf("apply: %v", err)
	}
	if applied.Spec.Field != "applied" || !slices.Equal(applied.Spec.Items, []string{"a", "b"}) || applied.UID == "" {
		t.Errorf("applied %+v", applied)
	}
	list, err := kexes.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	if len(list.Items) != 2 {
		t.Errorf("listed %d objects, want 2", len(list.Items))
	}

	// An operator whose handler applies to its own object's status.
	var (
		mu      sync.Mutex
		clients = map[*versioned.Clientset]bool{}
	)
	createFn := func(ctx context.Context, kw kopf.TypedChangingKwargs[v1.KopfExample]) (any, error) {
		cs, err := kopf.Client(ctx, versioned.NewForConfig)
		if err != nil {
			return nil, err
		}
		mu.Lock()
		clients[cs] = true
		mu.Unlock()
		status := ac.KopfExampleStatus().WithMessage("hello " + kw.Object.Spec.Field)
		_, err = cs.KopfV1().KopfExamples(kw.Object.Namespace).ApplyStatus(ctx,
			ac.KopfExample(kw.Object.Name, kw.Object.Namespace).WithStatus(status),
			metav1.ApplyOptions{FieldManager: "kopf-example", Force: true})
		if err != nil {
			return nil, err
		}
		return map[string]any{"message": "applied"}, nil
	}
	register := func(r *kopf.Registry) error {
		return r.AddChanging(kopf.ChangingHandler{
			ID:       "create_fn",
			Selector: kopf.Selector{Group: "kopf.dev", Version: "v1", Name: "kopfexamples"},
			Reasons:  []kopf.Reason{kopf.ReasonCreate},
			Fn:       kopf.TypedChangingFunc(createFn),
		})
	}
	op := kopftest.Start(t, env.Config, register)

	for name, field := range map[string]string{"typed": "value", "applied": "applied"} {
		// The outcome is reported once the operator's patch of the result
		// is sent; the handler's own apply came before it.
		op.WaitOutcome(kopftest.Match{Name: name, Handler: "create_fn", Result: kopftest.Succeeded}, 30*time.Second)
		last, err := kexes.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if last.Status.Message != "hello "+field || last.Status.CreateFn == nil || last.Status.CreateFn.Message != "applied" {
			t.Errorf("%s: the status is %+v, want the handler's apply and its result", name, last.Status)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(clients) != 1 {
		t.Errorf("the handler got %d clientsets, want the operator's one", len(clients))
	}
}
