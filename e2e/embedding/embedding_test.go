// Package embedding_test checks, against a real control plane, an operator
// embedded with kopf.Run: its options reach the operator (namespaces,
// settings, logger), WithReady is called once the served objects are
// listed, and cancelling the context stops it.
package embedding_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kopf-go/kopf"
	"github.com/kopf-go/kopf/e2e/cluster"
	"github.com/kopf-go/kopf/kopftest"
)

func TestRun(t *testing.T) {
	ctx := context.Background()
	c := cluster.Start(t)
	cs := kubernetes.NewForConfigOrDie(c.Config)

	// Objects that exist before the operator starts: its first listing.
	const ns, objects = "embedding-e2e", 3
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for i := range objects {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i)}}
		if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	var created atomic.Int32
	register := func(r *kopf.Registry) error {
		return r.AddChanging(kopf.ChangingHandler{
			ID:       "create_fn",
			Selector: kopf.Selector{Version: "v1", Name: "configmaps", Core: true},
			Reasons:  []kopf.Reason{kopf.ReasonCreate},
			Fn: func(ctx context.Context, kw *kopf.ChangingKwargs) (any, error) {
				if strings.HasPrefix(kw.Name, "cm-") {
					created.Add(1)
				}
				return nil, nil
			},
		})
	}

	logs := &kopftest.Buffer{}
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	ready := make(chan struct{})
	var readyCalls atomic.Int32
	done := make(chan error, 1)
	go func() {
		done <- kopf.Run(runCtx, register,
			kopf.WithConfig(rest.CopyConfig(c.Config)),
			kopf.WithNamespaces(ns),
			kopf.WithStandalone(),
			kopf.WithLogger(kopf.NewLogger(logs, kopf.LogFull, slog.LevelDebug)),
			kopf.WithSettings(func(s *kopf.Settings) {
				s.Persistence.DiffBaseStorage = &kopf.AnnotationsDiffBaseStorage{Prefix: "embedding.example.com", V1: true}
			}),
			kopf.WithReady(func() {
				readyCalls.Add(1)
				close(ready)
			}),
		)
	}()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("operator log:\n%s", logs.String())
		}
	})

	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("the operator stopped before it was ready: %v", err)
	case <-time.After(60 * time.Second):
		t.Fatal("the operator is not ready in 60 s")
	}
	if !strings.Contains(logs.String(), "Starting Kopf-go") {
		t.Errorf("the operator does not log to the logger of WithLogger")
	}

	// Every object of the first listing is handled, with the diff-base
	// where the settings say.
	if err := cluster.WaitFor(ctx, 60*time.Second, func(ctx context.Context) (bool, error) {
		list, err := cs.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		stored := 0
		for _, cm := range list.Items {
			if _, ok := cm.Annotations["embedding.example.com/last-handled-configuration"]; ok && strings.HasPrefix(cm.Name, "cm-") {
				stored++
			}
		}
		return stored == objects, nil
	}); err != nil {
		t.Fatalf("the diff-base is not stored as the settings say: %v", err)
	}
	if n := created.Load(); n != objects {
		t.Errorf("the creation handler ran %d times, want %d", n, objects)
	}

	// Cancelling the context is the operator's stop.
	stop()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run returned %v after a clean stop, want nil", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Run did not return in 30 s after its context was cancelled")
	}
	if n := readyCalls.Load(); n != 1 {
		t.Errorf("WithReady's function was called %d times, want 1", n)
	}
}
