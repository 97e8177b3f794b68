package main

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kopf-go/kopf/envtest"
	"github.com/kopf-go/kopf/kopftest"
)

// As Kopf's end-to-end run of this example (its E2E marks): the login
// handler logs in from the kubeconfig; the startup handlers succeed once
// each, the retried one after three temporary failures a second apart;
// a pod gets its background task, which serves it; the probes report it;
// the operator's stop runs the cleanup handler once, which stops the task.
func TestHooks(t *testing.T) {
	env := envtest.Start(t)
	// The login handler reads the kubeconfig, as kubectl does.
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := env.WriteKubeconfig(kubeconfig); err != nil {
		t.Fatal(err)
	}
	t.Setenv("KUBECONFIG", kubeconfig)
	cs := kubernetes.NewForConfigOrDie(env.Config)
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "example-pod", Namespace: "default"},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "busybox"}}},
	}
	if _, err := cs.CoreV1().Pods("default").Create(t.Context(), pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	op := kopftest.Start(t, env.Config, Register)
	op.WaitLog("Activity 'login_fn' succeeded.", 30*time.Second)
	op.WaitLog("Initial authentication has finished.", time.Second)
	op.WaitLog("Initialising the task-lock...", 10*time.Second)
	for retry, left := range []string{"3", "2", "1"} {
		op.WaitLog("Activity 'startup_fn_retried' failed temporarily: Going to succeed in "+left+"s", time.Duration(retry+5)*time.Second)
	}
	op.WaitLog("Starting retried...", 10*time.Second)
	op.WaitLog("Activity 'startup_fn_retried' succeeded.", time.Second)

	// The pod's task serves it every 1 to 10 seconds.
	op.WaitLog("[default/example-pod] Served by the background task.", 30*time.Second)
	// Nothing is watched before every startup handler has succeeded.
	logs := op.Logs()
	if started, seen := strings.Index(logs, "Activity 'startup_fn_retried' succeeded."), strings.Index(logs, "[default/example-pod]"); seen < started {
		t.Errorf("the pod is handled before the startup handlers have succeeded:\n%s", logs)
	}
	got, err := op.Probe(t.Context())
	if err != nil {
		t.Fatalf("probing: %v", err)
	}
	want := map[string]any{"tasks_count": 1, "monitored_objects": map[string][]string{"default": {"example-pod"}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("probes = %#v, want %#v", got, want)
	}

	if err := op.Stop(); err != nil {
		t.Fatalf("stopping: %v", err)
	}
	for _, line := range []string{"Cleaning up...", "All pod-tasks are requested to stop...", "[default/example-pod] Serving is finished by request."} {
		if n := op.CountLog(line); n != 1 {
			t.Errorf("%q is logged %d times, want once", line, n)
		}
	}
	// Kopf's E2E_SUCCESS_COUNTS, and the retries of startup_fn_retried.
	for id, want := range map[string]int{"startup_fn_simple": 1, "startup_fn_retried": 1, "cleanup_fn": 1, "login_fn": 1} {
		if n := op.CountLog("Activity '" + id + "' succeeded."); n != want {
			t.Errorf("%s succeeded %d times, want %d", id, n, want)
		}
	}
	if n := op.CountLog("Activity 'startup_fn_retried' failed temporarily"); n != 3 {
		t.Errorf("startup_fn_retried failed %d times, want 3", n)
	}
}
