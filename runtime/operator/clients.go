package operator

import (
	"fmt"

	"k8s.io/client-go/dynamic"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/rest"
)

// clients are the API clients of the reactors and watchers, sharing one
// HTTP client (one connection pool, one in-flight bound).
type clients struct {
	// dynamic decodes every response into unstructured objects.
	dynamic dynamic.Interface
	// rest sends requests by absolute path and leaves the decoding to the
	// caller: a patch's response is read for its resourceVersion only.
	rest rest.Interface
	// coordination is the typed client of the Leases (runtime/leases).
	coordination coordinationv1client.LeasesGetter
}

func newClients(cfg *rest.Config) (clients, error) {
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return clients{}, fmt.Errorf("creating the HTTP client: %w", err)
	}
	dyn, err := dynamic.NewForConfigAndClient(cfg, hc)
	if err != nil {
		return clients{}, fmt.Errorf("creating the dynamic client: %w", err)
	}
	raw := dynamic.ConfigFor(cfg) // JSON in and out, no scheme needed
	raw.GroupVersion = nil
	raw.APIPath = "/"
	rc, err := rest.UnversionedRESTClientForConfigAndClient(raw, hc)
	if err != nil {
		return clients{}, fmt.Errorf("creating the REST client: %w", err)
	}
	coord, err := coordinationv1client.NewForConfigAndClient(cfg, hc)
	if err != nil {
		return clients{}, fmt.Errorf("creating the client of the Leases: %w", err)
	}
	return clients{dynamic: dyn, rest: rc, coordination: coord}, nil
}
