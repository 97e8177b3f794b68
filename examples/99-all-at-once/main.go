// Command allatonce is the Go port of Kopf's 99-all-at-once example: most
// of the kinds of handlers in one operator. Two startup handlers (one
// retried until its fourth attempt) and a cleanup handler; three creation
// handlers: one that posts Events about the object (and about its
// children, of which Kopf's example makes none), one that fails once with a
// plain error and is retried, one that creates a child pod, adopted and
// labelled; an update handler that prints the diff, a field handler of
// spec.lst that prints its old and new values, a deletion handler, and an
// on.event handler of the pods with the child's label.
//
// On a cluster, the child pod runs (busybox sleeping for a second) and is
// garbage-collected with its KopfExample, as its owner reference asks.
//
// Run it against a cluster:
//
//	go run . run -A --standalone --verbose
package main

//go:generate go tool kopf-gen

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kopf-go/kopf"
	"github.com/kopf-go/kopf/pyfmt"
)

// StartupFnSimple takes a second to start.
//
//kopf:on.startup
func StartupFnSimple(ctx context.Context, kw StartupFnSimpleKwargs) error {
	kw.Logger.Info("Starting in 1s...")
	return sleep(ctx, time.Second)
}

// StartupFnRetried fails temporarily three times, a second apart.
//
//kopf:on.startup
func StartupFnRetried(ctx context.Context, kw StartupFnRetriedKwargs) error {
	if kw.Retry < 3 {
		return kopf.NewTemporaryError(fmt.Sprintf("Going to succeed in %ds", 3-kw.Retry), time.Second)
	}
	kw.Logger.Info("Starting retried...")
	return nil
}

// CleanupFn takes three seconds to clean up.
//
//kopf:on.cleanup
func CleanupFn(ctx context.Context, kw CleanupFnKwargs) error {
	kw.Logger.Info("Cleaning up in 3s...")
	return sleep(ctx, 3*time.Second)
}

// Create_1 posts Events about the object and its children.
//
//kopf:on.create kopfexamples
func Create_1(ctx context.Context, kw Create_1Kwargs) (any, error) {
	children := createChildren(kw.Body)

	kopf.Info(ctx, kw.Body, "AnyReason")
	kopf.Event(ctx, kw.Body, "Warning", "SomeReason", "Cannot do something")
	for _, child := range children {
		kopf.Event(ctx, child, "Normal", "SomeReason", "Created as part of the job1step")
	}
	return map[string]any{"job1-status": 100}, nil
}

// Create_2 waits for something, then fails on its first attempt: the
// operator retries it, even after a restart.
//
//kopf:on.create kopfexamples
func Create_2(ctx context.Context, kw Create_2Kwargs) (any, error) {
	if err := sleep(ctx, time.Second); err != nil { // e.g. an external API poller
		return nil, err
	}
	if kw.Retry == 0 {
		return nil, errors.New("Whoops!")
	}
	return map[string]any{"job2-status": 100}, nil
}

// Update prints the diff of every change.
//
//kopf:on.update kopfexamples
func Update(ctx context.Context, kw UpdateKwargs) error {
	fmt.Println("Handling the diff")
	fmt.Println(pyfmt.Pformat([]kopf.DiffItem(kw.Diff))) // pprint.pprint(list(diff))
	return nil
}

// UpdateLst prints the old and new spec.lst.
//
//kopf:on.field kopfexamples field=spec.lst
func UpdateLst(ctx context.Context, kw UpdateLstKwargs) error {
	fmt.Printf("Handling the FIELD = %s -> %s\n", pyfmt.Str(kw.Old), pyfmt.Str(kw.New))
	return nil
}

// Delete lets the object go.
//
//kopf:on.delete kopfexamples
func Delete(ctx context.Context, kw DeleteKwargs) error {
	return nil
}

// createChildren makes no children, as in Kopf's example.
func createChildren(owner kopf.Body) []kopf.Body {
	return nil
}

// CreatePod creates a child pod of the new object, adopted and labelled.
//
//kopf:on.create kopfexamples
//kopf:rbac groups=[""] resources=[pods] verbs=[create]
func CreatePod(ctx context.Context, kw CreatePodKwargs) error {
	pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{
		Name:    "the-only-one",
		Image:   "busybox",
		Command: []string{"sh", "-x", "-c", "sleep 1"},
	}}}}

	// Make it our child: assign the namespace, name, labels, owner references, etc.
	if err := kopf.Adopt(pod, kopf.OwnerOfBody(kw.Body)); err != nil {
		return err
	}
	if err := kopf.Label(pod, map[string]string{"application": "kopf-example-10"}); err != nil {
		return err
	}

	// Actually create an object by requesting the Kubernetes API.
	client, err := kopf.Client(ctx, kubernetes.NewForConfig)
	if err != nil {
		return err
	}
	_, err = client.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{})
	return err
}

// ExamplePodChange notes the events of the pods that CreatePod makes.
//
//kopf:on.event pods labels={application: kopf-example-10}
func ExamplePodChange(ctx context.Context, kw ExamplePodChangeKwargs) error {
	kw.Logger.Info("This pod is special for us.")
	return nil
}

// sleep waits for d, or until ctx is done.
func sleep(ctx context.Context, d time.Duration) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

func main() {
	os.Exit(kopf.Main(Register))
}
