package kopf_test

import (
	"context"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/client-go/rest"

	"github.com/kopf-go/kopf"
)

// An operator serves its Prometheus metrics at :8443/metrics, over HTTPS
// to the clients that the API server authenticates and authorizes, unless
// --metrics-bind-address says otherwise (docs/metrics.md). Not run: it
// would serve until stopped.
func ExampleWithMetrics() {
	os.Exit(kopf.Main(register, kopf.WithMetrics(":8443")))
}

// An operator adds a series of its own to its metrics' registry, and
// serves their page itself, on the program's own server (with its own
// protection). Not run: it would serve until stopped.
func ExampleWithMetricsHandler() {
	things := prometheus.NewCounter(prometheus.CounterOpts{Name: "my_operator_things_total", Help: "Things done."})
	os.Exit(kopf.Main(register, kopf.WithMetricsHandler(func(registry *prometheus.Registry, page http.Handler) {
		registry.MustRegister(things)
		http.Handle("/metrics", page) // http.DefaultServeMux, served by the program
	})))
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
