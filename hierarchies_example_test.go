package kopf_test

// The code shown in docs/hierarchies.md, compiled and run: each example's
// output is the page's claim.

import (
	"encoding/json"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kopf-go/kopf"
)

// kopfExample is the body of Kopf's example object, as handlers get it in
// kw.Body.
var kopfExample = kopf.Body{
	"apiVersion": "kopf.dev/v1",
	"kind":       "KopfExample",
	"metadata": map[string]any{
		"name":      "kopf-example-1",
		"namespace": "default",
		"uid":       "6b931859-5d50-4b5c-956b-ea2fed0d1058",
		"labels":    map[string]any{"somelabel": "somevalue"},
	},
}

// printJSON prints a value as JSON, keys sorted.
func printJSON(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	fmt.Println(string(b))
}

// childPod renders the pod of the object being handled, and makes it the
// object's child: its namespace, a name after it, its labels, an owner
// reference to it. The handler then creates it with any client.
func childPod(kw kopf.ChangingKwargs) (*corev1.Pod, error) {
	pod := &corev1.Pod{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "busybox"}}}}
	if err := kopf.Adopt(pod, kopf.OwnerOfBody(kw.Body)); err != nil {
		return nil, err
	}
	return pod, nil
}

// A typed child: a pod, adopted by the object being handled.
func ExampleAdopt() {
	var kw kopf.ChangingKwargs
	kw.Body = kopfExample
	pod, err := childPod(kw)
	if err != nil {
		panic(err)
	}
	fmt.Println(pod.GenerateName, pod.Namespace, pod.Labels)
	ref := pod.OwnerReferences[0]
	fmt.Println(ref.APIVersion, ref.Kind, ref.Name, ref.UID, *ref.Controller, *ref.BlockOwnerDeletion)
	// Output:
	// kopf-example-1- default map[somelabel:somevalue]
	// kopf.dev/v1 KopfExample kopf-example-1 6b931859-5d50-4b5c-956b-ea2fed0d1058 true true
}

// Untyped children, several at once, named exactly after the owner, with
// the owner's labels on the pods of the Deployment too.
func ExampleAdopt_unstructured() {
	objs := []map[string]any{
		{"kind": "Job"},
		{"kind": "Deployment", "spec": map[string]any{"template": map[string]any{}}},
	}
	err := kopf.Adopt(objs, kopf.OwnerOfBody(kopfExample), kopf.Strict(true), kopf.Forced(true), kopf.Nested{"spec.template"})
	if err != nil {
		panic(err)
	}
	for _, obj := range objs {
		printJSON(obj)
	}
	// Output:
	// {"kind":"Job","metadata":{"labels":{"somelabel":"somevalue"},"name":"kopf-example-1","namespace":"default","ownerReferences":[{"apiVersion":"kopf.dev/v1","blockOwnerDeletion":true,"controller":true,"kind":"KopfExample","name":"kopf-example-1","uid":"6b931859-5d50-4b5c-956b-ea2fed0d1058"}]}}
	// {"kind":"Deployment","metadata":{"labels":{"somelabel":"somevalue"},"name":"kopf-example-1","namespace":"default","ownerReferences":[{"apiVersion":"kopf.dev/v1","blockOwnerDeletion":true,"controller":true,"kind":"KopfExample","name":"kopf-example-1","uid":"6b931859-5d50-4b5c-956b-ea2fed0d1058"}]},"spec":{"template":{"metadata":{"labels":{"somelabel":"somevalue"}}}}}
}

// A typed owner: a Deployment got from a typed client has no apiVersion
// and kind, so they are given; its children are typed too.
func ExampleOwnerOfKind() {
	deployment := &appsv1.Deployment{}
	deployment.Name, deployment.Namespace, deployment.UID = "web", "prod", "0c3e1a2b"
	owner := kopf.OwnerOfKind(deployment, appsv1.SchemeGroupVersion.WithKind("Deployment"))

	configMaps := []corev1.ConfigMap{{}, {}}
	if err := kopf.AppendOwnerReference(configMaps, owner, kopf.Controller(false)); err != nil {
		panic(err)
	}
	for _, cm := range configMaps {
		ref := cm.OwnerReferences[0]
		fmt.Println(ref.APIVersion, ref.Kind, ref.Name, *ref.Controller, *ref.BlockOwnerDeletion)
	}
	// Output:
	// apps/v1 Deployment web false true
	// apps/v1 Deployment web false true
}

func ExampleLabel() {
	objs := []map[string]any{{"kind": "Job"}, {"kind": "Deployment", "metadata": map[string]any{"labels": map[string]any{"somelabel": "own"}}}}
	if err := kopf.Label(objs, map[string]string{"label1": "value1", "somelabel": "somevalue"}); err != nil {
		panic(err)
	}
	printJSON(objs)

	// Forced: the existing labels of the same keys are overwritten.
	if err := kopf.Label(objs, map[string]string{"somelabel": "somevalue"}, kopf.Forced(true)); err != nil {
		panic(err)
	}
	printJSON(objs)
	// Output:
	// [{"kind":"Job","metadata":{"labels":{"label1":"value1","somelabel":"somevalue"}}},{"kind":"Deployment","metadata":{"labels":{"label1":"value1","somelabel":"own"}}}]
	// [{"kind":"Job","metadata":{"labels":{"label1":"value1","somelabel":"somevalue"}}},{"kind":"Deployment","metadata":{"labels":{"label1":"value1","somelabel":"somevalue"}}}]
}

func ExampleHarmonizeNaming() {
	job := &unstructured.Unstructured{Object: map[string]any{"kind": "Job"}}
	named := &corev1.Pod{}
	named.Name = "own-name"
	if err := kopf.HarmonizeNaming([]any{job, named}, "kopf-example-1"); err != nil {
		panic(err)
	}
	fmt.Println(job.GetGenerateName(), named.Name)

	// Strict and forced: exactly the name, for every child.
	if err := kopf.HarmonizeNaming([]any{job, named}, "kopf-example-1", kopf.Strict(true), kopf.Forced(true)); err != nil {
		panic(err)
	}
	fmt.Println(job.GetName(), job.GetGenerateName() == "", named.Name)
	// Output:
	// kopf-example-1- own-name
	// kopf-example-1 true kopf-example-1
}

func ExampleAdjustNamespace() {
	pods := []*corev1.Pod{{}, {}}
	pods[1].Namespace = "elsewhere"
	if err := kopf.AdjustNamespace(pods, "default"); err != nil {
		panic(err)
	}
	fmt.Println(pods[0].Namespace, pods[1].Namespace)
	// Output:
	// default elsewhere
}

func ExampleRemoveOwnerReference() {
	owner := kopf.OwnerOfBody(kopfExample)
	pod := &corev1.Pod{}
	if err := kopf.AppendOwnerReference(pod, owner); err != nil {
		panic(err)
	}
	if err := kopf.RemoveOwnerReference(pod, owner); err != nil {
		panic(err)
	}
	fmt.Println(len(pod.OwnerReferences))
	// Output:
	// 0
}
