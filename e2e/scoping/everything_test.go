package scoping

import (
	"context"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kopf-go/kopf"
	"github.com/kopf-go/kopf/e2e/cluster"
	"github.com/kopf-go/kopf/kopftest"
	"github.com/kopf-go/kopf/runtime/kwargs"
	"github.com/kopf-go/kopf/runtime/registry"
	"github.com/kopf-go/kopf/runtime/resources"
)

// Kopf's EVERYTHING: one handler sees the objects of every watchable
// resource (here configmaps and secrets), but never core v1 events.
func TestEverything(t *testing.T) {
	ctx := context.Background()
	c := cluster.Start(t)
	var mu sync.Mutex
	kinds := map[string]bool{}
	op := kopftest.Start(t, c.Config, func(r *registry.Registry) error {
		return r.AddEvent(registry.EventHandler{
			ID: "everything", Selector: resources.Selector{Name: resources.Everything},
			Fn: func(ctx context.Context, kw *kwargs.Event) error {
				mu.Lock()
				kinds[kw.Body.Kind()] = true
				mu.Unlock()
				return nil
			},
		})
	}, kopf.WithNamespaces("default"))
	cs := kubernetes.NewForConfigOrDie(c.Config)
	if _, err := cs.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Secrets("default").Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ev := &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Name: "ev"},
		InvolvedObject: corev1.ObjectReference{Kind: "ConfigMap", Name: "cm", Namespace: "default"},
		Reason:         "Test", Message: "test", Type: "Normal",
	}
	if _, err := cs.CoreV1().Events("default").Create(ctx, ev, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	op.WaitLog("[default/cm] Handler 'everything' succeeded.", 30*time.Second)
	op.WaitLog("[default/s] Handler 'everything' succeeded.", 30*time.Second)
	time.Sleep(time.Second) // the event, if it were served, arrives meanwhile
	mu.Lock()
	defer mu.Unlock()
	if !kinds["ConfigMap"] || !kinds["Secret"] {
		t.Errorf("kinds seen: %v, want ConfigMap and Secret among them", kinds)
	}
	if kinds["Event"] {
		t.Error("core v1 events are served by the everything selector")
	}
}
