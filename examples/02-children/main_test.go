package main

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kopf-go/kopf/envtest"
	v1 "github.com/kopf-go/kopf/examples/apis/kopf/v1"
	"github.com/kopf-go/kopf/examples/generated/clientset/versioned"
	"github.com/kopf-go/kopf/kopftest"
)

// Kopf's example object gets one child pod, adopted, and its uid in
// status.create_fn.children; the test reads both typed. Nothing schedules
// pods here, which the handler does not need.
func TestChildren(t *testing.T) {
	ctx := t.Context()
	env := envtest.Start(t, envtest.WithCRDs("../crd.yaml"))
	op := kopftest.Start(t, env.Config, Register)
	kexes := versioned.NewForConfigOrDie(env.Config).KopfV1().KopfExamples("default")
	pods := kubernetes.NewForConfigOrDie(env.Config).CoreV1().Pods("default")

	owner, err := kexes.Create(ctx, &v1.KopfExample{
		ObjectMeta: metav1.ObjectMeta{Name: "kopf-example-1", Labels: map[string]string{"somelabel": "somevalue"}},
		Spec:       v1.KopfExampleSpec{Duration: "1m", Field: "value", Items: []string{"item1", "item2"}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// The handler's outcome is reported once its patch is sent: the status
	// is there to read.
	op.WaitOutcome(kopftest.Match{Name: owner.Name, Handler: "create_fn", Result: kopftest.Succeeded}, 30*time.Second)
	got, err := kexes.Get(ctx, owner.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Status.CreateFn == nil {
		t.Fatalf("no status.create_fn after the handler succeeded: %+v", got.Status)
	}
	children := got.Status.CreateFn.Children
	list, err := pods.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(children) != 1 || len(list.Items) != 1 || string(list.Items[0].UID) != children[0] {
		t.Fatalf("children %v, pods %d: want the one pod's uid", children, len(list.Items))
	}
	pod := list.Items[0]
	refs := pod.OwnerReferences
	if len(refs) != 1 || refs[0].APIVersion != "kopf.dev/v1" || refs[0].Kind != "KopfExample" ||
		refs[0].Name != owner.Name || refs[0].UID != owner.UID || refs[0].Controller == nil || !*refs[0].Controller ||
		refs[0].BlockOwnerDeletion == nil || !*refs[0].BlockOwnerDeletion {
		t.Errorf("owner references %+v", refs)
	}
	if !strings.HasPrefix(pod.Name, "kopf-example-1-") || pod.Labels["somelabel"] != "somevalue" {
		t.Errorf("the pod is %s with labels %v: not named and labelled after its owner", pod.Name, pod.Labels)
	}
	container := pod.Spec.Containers[0]
	if len(container.Args) != 1 || !strings.Contains(container.Args[0], "sleep 1m") ||
		len(container.Env) != 1 || container.Env[0].Value != "value" {
		t.Errorf("the container is %+v", container)
	}
}
