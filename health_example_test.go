package kopf_test

import (
	"os"

	"github.com/kopf-go/kopf"
)

// An operator serves its liveness and its readiness for the kubelet's
// probes, as `operator run -L http://0.0.0.0:8080/healthz --readiness
// http://0.0.0.0:8080/readyz` does (the flags win over the options). See
// docs/health.md.
func ExampleWithLiveness() {
	os.Exit(kopf.Main(register,
		kopf.WithLiveness("http://0.0.0.0:8080/healthz"),
		kopf.WithReadiness("http://0.0.0.0:8080/readyz"),
	))
}
