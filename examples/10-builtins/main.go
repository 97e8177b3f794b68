// Command builtins is the Go port of Kopf's 10-builtins example: handlers
// of a built-in resource, pods. Every pod in sight (created, or found at
// start) is scheduled for deletion in 30 s by a background task; deleting
// the pod earlier cancels the task. Pods in kube-* namespaces are left
// alone.
package main

//go:generate go tool kopf-gen

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kopf-go/kopf"
)

// killTimeout is how long a pod lives once in sight.
const killTimeout = 30 * time.Second

// cancelKey is where a pod's killer keeps its cancellation, in the pod's
// memo (which lives as long as the operator watches the pod).
const cancelKey = "cancel-killer"

// PodInSight starts a pod killer for every pod in sight.
//
//kopf:on.resume v1/pods
//kopf:on.create v1/pods
func PodInSight(ctx context.Context, kw PodInSightKwargs) error {
	if strings.HasPrefix(kw.Namespace, "kube-") {
		return nil
	}
	if _, running := kw.Memo[cancelKey]; running {
		return nil
	}
	// The operator's clientset, made on first use and shared by every
	// handler (Kopf's example uses its own pykube client).
	client, err := kopf.Client(ctx, kubernetes.NewForConfig)
	if err != nil {
		return err
	}
	killerCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	kw.Memo[cancelKey] = cancel
	go podKiller(killerCtx, client, kw.Namespace, kw.Name, kw.Logger)
	return nil
}

// PodDeleted cancels the pod's killer, if any.
//
//kopf:on.delete v1/pods
func PodDeleted(ctx context.Context, kw PodDeletedKwargs) error {
	if cancel, ok := kw.Memo[cancelKey].(context.CancelFunc); ok {
		cancel()
		delete(kw.Memo, cancelKey)
	}
	return nil
}

type logger interface{ Info(msg string, args ...any) }

// podKiller deletes the pod after killTimeout, unless cancelled first. It
// is no handler, but its call needs a rule: its //kopf:rbac marker grants
// it in the operator's generated role (kopf-gen --manifests).
//
//kopf:rbac groups=[""] resources=[pods] verbs=[delete]
func podKiller(ctx context.Context, client kubernetes.Interface, namespace, name string, log logger) {
	log.Info(fmt.Sprintf("=== Pod killing happens in %s.", killTimeout))
	select {
	case <-ctx.Done():
		log.Info("=== Pod killing is cancelled!")
		return
	case <-time.After(killTimeout):
	}
	log.Info("=== Pod killing happens NOW!")
	// Once begun, the killing is not cancelled, as Kopf's synchronous call
	// is not: the deletion that it asks for runs the pod's delete handler,
	// which cancels ctx, while the request may still await its response.
	if err := client.CoreV1().Pods(namespace).Delete(context.WithoutCancel(ctx), name, metav1.DeleteOptions{}); err != nil {
		log.Info(fmt.Sprintf("=== Pod killing failed: %v", err))
	}
}

func main() {
	os.Exit(kopf.Main(Register))
}
