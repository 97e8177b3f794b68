package reactor

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/kopf-go/kopf/runtime/resources"
)

// Patcher sends the reactor's writes, which are all patches of its
// resource's objects: merge patches of the object or of a subresource
// ("status"), and JSON patches (the finalizer's, which carry a "test" of
// the resourceVersion they were computed from). It returns the patched
// object's resourceVersion, the version whose arrival in the watch the
// reactor awaits before it judges the object again.
//
// Errors are the API server's (as client-go returns them, so that
// apierrors.IsNotFound, IsConflict and IsInvalid tell them apart): a
// Patcher that adds a precondition of its own (sharding's fence) reports
// its failure as a Conflict, which the reactor handles as any conflict.
// The reactor bounds each call with settings.Networking.RequestTimeout
// and retries it as a request (see retryRequest). It is called from the
// workers, concurrently for different objects.
//
// The method set uses no type of this package, so that an implementation
// (a wrapper of ClientPatcher) needs not import it.
type Patcher interface {
	Patch(ctx context.Context, namespace, name string, pt types.PatchType, data []byte, subresources ...string) (resourceVersion string, err error)
}

// ClientPatcher is the default Patcher: it sends the patch as it is, by
// REST if set (the response is read for the resourceVersion only, not
// decoded whole), else by Client.
type ClientPatcher struct {
	Resource resources.Resource
	Client   dynamic.NamespaceableResourceInterface
	REST     rest.Interface
}

// Patch sends one patch; see Patcher.
func (p ClientPatcher) Patch(ctx context.Context, namespace, name string, pt types.PatchType, data []byte, sub ...string) (string, error) {
	if p.REST == nil {
		client := dynamic.ResourceInterface(p.Client)
		if p.Resource.Namespaced && namespace != "" {
			client = p.Client.Namespace(namespace)
		}
		resp, err := client.Patch(ctx, name, pt, data, metav1.PatchOptions{}, sub...)
		if err != nil {
			return "", err
		}
		return resp.GetResourceVersion(), nil
	}
	res := p.REST.Patch(pt).AbsPath(append([]string{p.Resource.Path(namespace), name}, sub...)...).Body(data).Do(ctx)
	if err := res.Error(); err != nil { // Error, not Raw: it decodes the API's Status
		return "", err
	}
	raw, _ := res.Raw()
	rv, err := resourceVersionOf(raw)
	if err != nil {
		return "", fmt.Errorf("decoding the patch response: %w", err)
	}
	return rv, nil
}

// patcher is r.Patcher, or the default over r's clients.
func (r *Reactor) patcher() Patcher {
	if r.Patcher != nil {
		return r.Patcher
	}
	return ClientPatcher{Resource: r.Resource, Client: r.Client, REST: r.REST}
}
