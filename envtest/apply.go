package envtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
)

// Apply creates the objects of a multi-document YAML or JSON manifest in
// order (in the namespace "default" when a namespaced object names none),
// or replaces those that exist, and waits for every
// CustomResourceDefinition among them to be Established and served
// (listed by discovery, which operators resolve resources through) for up
// to 30 seconds. It returns the objects as created.
func Apply(ctx context.Context, cfg *rest.Config, manifest []byte) ([]*unstructured.Unstructured, error) {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	cached := memory.NewMemCacheClient(dc)
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(cached)
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(manifest), 4096)
	var out []*unstructured.Unstructured
	for {
		obj := &unstructured.Unstructured{}
		if err := dec.Decode(&obj.Object); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return out, fmt.Errorf("decoding the manifest: %w", err)
		}
		if len(obj.Object) == 0 {
			continue
		}
		gvk := obj.GroupVersionKind()
		mapping, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		if err != nil {
			cached.Invalidate()
			mapper.Reset()
			if mapping, err = mapper.RESTMapping(gvk.GroupKind(), gvk.Version); err != nil {
				return out, fmt.Errorf("mapping %s: %w", gvk, err)
			}
		}
		var ri dynamic.ResourceInterface = dyn.Resource(mapping.Resource)
		if mapping.Scope.Name() == "namespace" {
			ns := obj.GetNamespace()
			if ns == "" {
				ns = "default"
				obj.SetNamespace(ns)
			}
			ri = dyn.Resource(mapping.Resource).Namespace(ns)
		}
		created, err := ri.Create(ctx, obj, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			existing, gerr := ri.Get(ctx, obj.GetName(), metav1.GetOptions{})
			if gerr != nil {
				return out, gerr
			}
			obj.SetResourceVersion(existing.GetResourceVersion())
			created, err = ri.Update(ctx, obj, metav1.UpdateOptions{})
		}
		if err != nil {
			return out, fmt.Errorf("creating %s %s: %w", gvk.Kind, obj.GetName(), err)
		}
		out = append(out, created)
		if gvk.Kind == "CustomResourceDefinition" {
			if err := waitEstablished(ctx, dyn, dc, created); err != nil {
				return out, err
			}
			cached.Invalidate()
			mapper.Reset()
		}
	}
	return out, nil
}

func waitEstablished(ctx context.Context, dyn dynamic.Interface, dc discovery.DiscoveryInterface, crd *unstructured.Unstructured) error {
	gvr := schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
	plural, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "plural")
	var last error
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		ok, err := served(ctx, dyn, dc, gvr, crd.GetName(), group, plural)
		if err != nil {
			last = err // transient: discovery and the CRD settle
		}
		return ok, nil
	})
	if err != nil && last != nil {
		return fmt.Errorf("the CRD %s is not served: %w (last error: %w)", crd.GetName(), err, last)
	} else if err != nil {
		return fmt.Errorf("the CRD %s is not served: %w", crd.GetName(), err)
	}
	return nil
}

// served reports whether the CRD is Established and its resource listed by
// discovery.
func served(ctx context.Context, dyn dynamic.Interface, dc discovery.DiscoveryInterface, gvr schema.GroupVersionResource, name, group, plural string) (bool, error) {
	cur, err := dyn.Resource(gvr).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return false, err
	}
	conds, _, _ := unstructured.NestedSlice(cur.Object, "status", "conditions")
	established := false
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == "Established" && m["status"] == "True" {
			established = true
		}
	}
	if !established {
		return false, nil
	}
	// Served: discovery lists it (what operators resolve it through).
	_, lists, err := dc.ServerGroupsAndResources()
	if err != nil && len(lists) == 0 {
		return false, err
	}
	for _, l := range lists {
		gv, _ := schema.ParseGroupVersion(l.GroupVersion)
		if gv.Group != group {
			continue
		}
		for _, r := range l.APIResources {
			if r.Name == plural {
				return true, nil
			}
		}
	}
	return false, nil
}
