package examples

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/kopf-go/kopf"
)

var (
	crdResource = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	// KopfExamplesResource is the resource of Kopf's example objects.
	KopfExamplesResource = schema.GroupVersionResource{Group: "kopf.dev", Version: "v1", Resource: "kopfexamples"}
)

// InstallCRD creates the KopfExample CRD (crd.yaml) in the cluster of cfg
// and waits until its objects are served.
func InstallCRD(t testing.TB, cfg *rest.Config) {
	t.Helper()
	ctx := context.Background()
	var crd unstructured.Unstructured
	if err := yaml.Unmarshal(CRD, &crd.Object); err != nil {
		t.Fatal(err)
	}
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dc.Resource(crdResource).Create(ctx, &crd, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatalf("creating the KopfExample CRD: %v", err)
	}
	if err := Poll(ctx, 30*time.Second, func() bool {
		_, err := dc.Resource(KopfExamplesResource).List(ctx, metav1.ListOptions{Limit: 1})
		return err == nil
	}); err != nil {
		t.Fatalf("the KopfExample CRD is not served: %v", err)
	}
}

// RunOperator runs an operator of register (all namespaces, standalone)
// in the background until the test ends, its log in the test's log, and
// fails the test if it exits with an error.
func RunOperator(t testing.TB, cfg *rest.Config, register func(*kopf.Registry) error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	logger := kopf.NewLogger(testWriter{t}, kopf.LogPlain, slog.LevelDebug)
	go func() {
		done <- kopf.Run(ctx, register, kopf.WithConfig(cfg), kopf.WithAllNamespaces(), kopf.WithStandalone(), kopf.WithLogger(logger))
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("the operator exited with %v", err)
		}
	})
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

// Poll calls cond every 100 ms until it is true; it fails after timeout.
func Poll(ctx context.Context, timeout time.Duration, cond func() bool) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-ctx.Done():
			return errors.New("timed out")
		case <-tick.C:
		}
	}
	return nil
}
