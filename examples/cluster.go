package examples

import (
	"context"
	"testing"

	"github.com/kopf-go/kopf/e2e/cluster"
)

// StartCluster starts a fresh control plane for an example's end-to-end
// test, with the KopfExample CRD installed, and stops it when the test ends.
func StartCluster(t testing.TB) *cluster.Cluster {
	t.Helper()
	c := cluster.Start(t)
	if _, err := cluster.Apply(context.Background(), c.Config, CRD); err != nil {
		t.Fatalf("installing the KopfExample CRD: %v", err)
	}
	return c
}
