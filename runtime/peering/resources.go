package peering

import (
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
)

// The peering resources (Kopf's CLUSTER_PEERINGS_K/_Z and
// NAMESPACED_PEERINGS_K/_Z): kopf.dev/v1 and the legacy zalando.org/v1.
// Where both are served, both are used, as Kopf does.
var (
	ClusterPeeringsK    = schema.GroupVersionResource{Group: "kopf.dev", Version: "v1", Resource: "clusterkopfpeerings"}
	ClusterPeeringsZ    = schema.GroupVersionResource{Group: "zalando.org", Version: "v1", Resource: "clusterkopfpeerings"}
	NamespacedPeeringsK = schema.GroupVersionResource{Group: "kopf.dev", Version: "v1", Resource: "kopfpeerings"}
	NamespacedPeeringsZ = schema.GroupVersionResource{Group: "zalando.org", Version: "v1", Resource: "kopfpeerings"}
)

// Selectors are the peering resources of a mode (Kopf's guess_selectors).
func Selectors(clusterwide bool) []schema.GroupVersionResource {
	if clusterwide {
		return []schema.GroupVersionResource{ClusterPeeringsK, ClusterPeeringsZ}
	}
	return []schema.GroupVersionResource{NamespacedPeeringsK, NamespacedPeeringsZ}
}

// Resolve returns the peering resources of the mode that the API server
// serves (none: their CRDs are not installed).
func Resolve(dc discovery.DiscoveryInterface, clusterwide bool) ([]schema.GroupVersionResource, error) {
	var found []schema.GroupVersionResource
	for _, gvr := range Selectors(clusterwide) {
		list, err := dc.ServerResourcesForGroupVersion(gvr.GroupVersion().String())
		if apierrors.IsNotFound(err) {
			continue
		}
		var gd *discovery.ErrGroupDiscoveryFailed
		if errors.As(err, &gd) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("discovering %s: %w", gvr.GroupVersion(), err)
		}
		for _, r := range list.APIResources {
			if r.Name == gvr.Resource {
				found = append(found, gvr)
				break
			}
		}
	}
	return found, nil
}

// Describe is how Kopf names a list of selectors in its errors.
func Describe(gvrs []schema.GroupVersionResource) string {
	s := "["
	for i, g := range gvrs {
		if i > 0 {
			s += ", "
		}
		s += g.Resource + "." + g.Version + "." + g.Group
	}
	return s + "]"
}
