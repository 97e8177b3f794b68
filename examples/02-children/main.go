// Command children is the Go port of Kopf's 02-children example: every new
// KopfExample gets a child pod that sleeps for the object's spec.duration
// and prints its spec.field, adopted by the object (owner reference,
// namespace, labels, a name after the owner's), and the object's status
// lists the child's uid: status.create_fn.children.
//
// The handler is typed: it gets the KopfExample as a *v1.KopfExample
// (examples/apis/kopf/v1), builds the pod as a *corev1.Pod, adopts it with
// kopf.Adopt (kopf.OwnerOfKind names the owner's kind as its Go type is
// registered; kopf.OwnerOf(kw.Object) would take it from the object's
// TypeMeta), and creates it with the operator's shared
// clientset (kopf.Client) where Kopf's example makes a pykube client per
// call.
package main

//go:generate go tool kopf-gen

import (
	"context"
	"fmt"
	"os"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kopf-go/kopf"
	v1 "github.com/kopf-go/kopf/examples/apis/kopf/v1"
)

// CreateFn creates the child pod of a new KopfExample: a call of its own,
// which its //kopf:rbac marker grants in the operator's generated role
// (kopf-gen --manifests).
//
//kopf:on.create kopfexamples
//kopf:rbac groups=[""] resources=[pods] verbs=[create]
func CreateFn(ctx context.Context, kw CreateFnKwargs) (any, error) {
	spec := kw.Object.Spec
	duration, field := spec.Duration, spec.Field
	if duration == "" {
		duration = "0"
	}
	if field == "" {
		field = "default-value"
	}
	// Render the pod with some spec fields used in the template.
	pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{
		Name:    "the-only-one",
		Image:   "busybox",
		Command: []string{"sh", "-x", "-c"},
		Args:    []string{fmt.Sprintf("echo \"FIELD=$FIELD\"\nsleep %s\n", duration)},
		Env:     []corev1.EnvVar{{Name: "FIELD", Value: field}},
	}}}}

	// Make it our child: assign the namespace, name, labels, owner references, etc.
	// The owner is the KopfExample, of the kind its Go type is registered as.
	owner := kopf.OwnerOfKind(kw.Object, v1.SchemeGroupVersion.WithKind("KopfExample"))
	if err := kopf.Adopt(pod, owner); err != nil {
		return nil, err
	}

	// Actually create an object by requesting the Kubernetes API.
	client, err := kopf.Client(ctx, kubernetes.NewForConfig)
	if err != nil {
		return nil, err
	}
	created, err := client.CoreV1().Pods(pod.Namespace).Create(ctx, pod, metav1.CreateOptions{})
	if err != nil {
		return nil, err
	}

	// Update the parent's status.
	return map[string]any{"children": []string{string(created.UID)}}, nil
}

func main() {
	os.Exit(kopf.Main(Register))
}
