// Command children is the Go port of Kopf's 02-children example: every new
// KopfExample gets a child pod that sleeps for the object's spec.duration
// and prints its spec.field, adopted by the object (owner reference,
// namespace, labels, a name after the owner's), and the object's status
// lists the child's uid: status.create_fn.children.
//
// The handler is typed: it gets the KopfExample as a *v1.KopfExample
// (examples/apis/kopf/v1), builds the pod as a *corev1.Pod, and creates it
// with the operator's shared clientset (kopf.Client) where Kopf's example
// makes a pykube client per call.
package main

//go:generate go tool kopf-gen

import (
	"context"
	"fmt"
	"maps"
	"os"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kopf-go/kopf"
	v1 "github.com/kopf-go/kopf/examples/apis/kopf/v1"
)

// CreateFn creates the child pod of a new KopfExample.
//
//kopf:on.create kopfexamples
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
	adopt(pod, kw.Object)

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

// adopt makes obj a child of owner, as kopf.adopt() does: owner's
// namespace, a name generated after owner's, owner's labels (obj's own
// win), and a controlling owner reference, whose kind comes from the
// types' scheme registration (v1.SchemeGroupVersion).
func adopt(obj metav1.Object, owner *v1.KopfExample) {
	if obj.GetName() == "" && obj.GetGenerateName() == "" {
		obj.SetGenerateName(owner.Name + "-")
	}
	if obj.GetNamespace() == "" {
		obj.SetNamespace(owner.Namespace)
	}
	labels := maps.Clone(owner.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	maps.Copy(labels, obj.GetLabels())
	obj.SetLabels(labels)
	ref := metav1.NewControllerRef(owner, v1.SchemeGroupVersion.WithKind("KopfExample"))
	obj.SetOwnerReferences(append(obj.GetOwnerReferences(), *ref))
}

func main() {
	os.Exit(kopf.Main(Register))
}
