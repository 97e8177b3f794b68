// Command fakeclients shows handlers' unit tests with fake clients: its
// handler writes to its object's status with the operator's shared
// clientset that kopf-gen --clients generated (examples/generated), and
// its unit test (main_test.go) calls the handler with a fake of that
// clientset (clientset/versioned/fake, generated along) given through
// kopftest.WithClient, without an API server. See docs/testing.md
// ("Faking clients in unit tests").
package main

//go:generate go tool kopf-gen

import (
	"context"
	"os"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"

	"github.com/kopf-go/kopf"
	v1 "github.com/kopf-go/kopf/examples/apis/kopf/v1"
	ac "github.com/kopf-go/kopf/examples/generated/applyconfiguration/kopf/v1"
	"github.com/kopf-go/kopf/examples/generated/clientset/versioned"
)

// clientset returns the operator's shared clientset as its interface,
// versioned.Interface: kopf.Client keys shared clients by that type, so
// that a test can give the handler a fake of it (kopftest.WithClient).
func clientset(ctx context.Context) (versioned.Interface, error) {
	return kopf.Client(ctx, func(cfg *rest.Config) (versioned.Interface, error) {
		return versioned.NewForConfig(cfg)
	})
}

// CreateFn applies a greeting to the new KopfExample's status.message,
// and returns its own result, which the operator stores in
// status.create_fn. kw.Object is a *v1.KopfExample (examples/apis/kopf/v1).
//
//kopf:on.create kopfexamples
func CreateFn(ctx context.Context, kw CreateFnKwargs) (any, error) {
	cs, err := clientset(ctx)
	if err != nil {
		return nil, err
	}
	status := ac.KopfExampleStatus().WithMessage("hello " + kw.Object.Spec.Field)
	_, err = cs.KopfV1().KopfExamples(kw.Object.Namespace).ApplyStatus(ctx,
		ac.KopfExample(kw.Object.Name, kw.Object.Namespace).WithStatus(status),
		metav1.ApplyOptions{FieldManager: "fakeclients", Force: true})
	if err != nil {
		return nil, err
	}
	return &v1.CreateFnStatus{Message: "applied"}, nil
}

func main() {
	os.Exit(kopf.Main(Register))
}
