package examples

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kopf-go/kopf/e2e/cluster"
	"github.com/kopf-go/kopf/envtest"
)

// StartCluster starts a fresh control plane for an example's end-to-end
// test, with the KopfExample CRD installed, and stops it when the test ends.
func StartCluster(t testing.TB) *cluster.Cluster {
	t.Helper()
	return cluster.Start(t, envtest.WithCRDs("../crd.yaml"))
}

// KopfExamples is the resource of Kopf's example operators.
var KopfExamples = schema.GroupVersionResource{Group: "kopf.dev", Version: "v1", Resource: "kopfexamples"}
