package kopf_test

import (
	"context"
	"net"
	"os"
	"strings"
	"testing"

	"k8s.io/client-go/rest"

	"github.com/kopf-go/kopf"
)

// An operator serves its Prometheus metrics at :8080/metrics, unless
// --metrics-bind-address says otherwise (docs/metrics.md). Not run: it
// would serve until stopped.
func ExampleWithMetrics() {
	os.Exit(kopf.Main(register, kopf.WithMetrics(":8080")))
}

// An operator asked to serve metrics on an address in use does not start.
func TestRunMetricsAddressInUse(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = busy.Close() })
	addr := busy.Addr().String()
	err = kopf.Run(context.Background(), register,
		kopf.WithConfig(&rest.Config{Host: "https://127.0.0.1:1"}), kopf.WithMetrics(addr), kopf.WithAllNamespaces())
	if err == nil || !strings.Contains(err.Error(), "serving the metrics on "+addr) || !strings.Contains(err.Error(), "address already in use") {
		t.Errorf("Run() = %v, want an error: serving the metrics on %s: ... address already in use", err, addr)
	}
}
