package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kopf-go/kopf/envtest"
	"github.com/kopf-go/kopf/examples"
	"github.com/kopf-go/kopf/kopftest"
)

// The example as it behaves in a cluster, on a control plane with
// controllers (the deployment and replicaset controllers, the scheduler,
// kwok's simulated node and pod lifecycle): the pods of a Deployment,
// selected by their label app=web, run; the timer lists them in the
// object's status.running-pods, and the probes count and name them.
// TestIndexing follows phases set by hand, faster, without controllers.
func TestIndexingRunningPods(t *testing.T) {
	env := envtest.Start(t, envtest.WithCRDs("../crd.yaml"), envtest.WithControllers())
	ctx := t.Context()
	cs := kubernetes.NewForConfigOrDie(env.Config)
	op := kopftest.Start(t, env.Config, Register)
	op.WaitReady(30 * time.Second)
	if err := env.Apply(ctx, examples.Object); err != nil {
		t.Fatal(err)
	}
	labels := map[string]string{"app": "web"}
	deployment := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "web"},
		Spec: appsv1.DeploymentSpec{
			Replicas: new(int32(2)),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "nginx"}}},
			},
		},
	}
	if _, err := cs.AppsV1().Deployments("default").Create(ctx, deployment, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	// The Deployment's pods, by their label, once both run.
	var names []string
	kopftest.Eventually(t, 60*time.Second, "the Deployment's 2 pods to run", func(ctx context.Context) (bool, error) {
		list, err := cs.CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
		if err != nil {
			return false, err
		}
		names = nil
		for _, p := range list.Items {
			if p.Status.Phase == corev1.PodRunning {
				names = append(names, p.Name)
			}
		}
		return len(names) == 2 && len(list.Items) == 2, nil
	})
	slices.Sort(names)

	objs := kopftest.NewObjects(t, env.Config, examples.KopfExamples, "default")
	waitRunning(t, objs, []string{"default::" + names[0], "default::" + names[1]})

	want := map[string]string{"pod_count": "2", "pod_names": fmt.Sprint(names)}
	var got map[string]string
	kopftest.Eventually(t, 10*time.Second, fmt.Sprintf("the probes to report %v", want), func(ctx context.Context) (bool, error) {
		probes, err := op.Probe(ctx)
		if err != nil {
			return false, err
		}
		got = map[string]string{}
		for id, v := range probes {
			got[id] = fmt.Sprint(v)
		}
		return maps.Equal(got, want), nil
	})
	if n := op.CountLog("failed with an exception"); n != 0 {
		t.Errorf("%d failures in the log:\n%s", n, op.Logs())
	}
}
