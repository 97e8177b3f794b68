package resources_test

import (
	"fmt"

	"github.com/kopf-go/kopf/runtime/resources"
)

func ExampleResolve() {
	served := []resources.Resource{
		{Version: "v1", Plural: "pods", Singular: "pod", Kind: "Pod", ShortNames: []string{"po"}},
		{Group: "metrics.k8s.io", Version: "v1beta1", Plural: "pods", Kind: "PodMetrics"},
		{Group: "kopf.dev", Version: "v1", Plural: "kopfexamples", Singular: "kopfexample", Kind: "KopfExample",
			Subresources: []string{"status"}},
	}
	for _, sel := range []resources.Selector{
		{Name: "pods"},
		{Group: "metrics.k8s.io", Name: "pods"},
		{Name: "KopfExample"},
		{Name: "deployments"},
	} {
		r, err := resources.Resolve(served, sel)
		if err != nil {
			fmt.Println(err)
			continue
		}
		fmt.Println(sel, "->", r, r.APIVersion(), r.HasStatusSubresource())
	}
	// Output:
	// pods -> pods.v1 v1 false
	// metrics.k8s.io/pods -> pods.v1beta1.metrics.k8s.io metrics.k8s.io/v1beta1 false
	// KopfExample -> kopfexamples.v1.kopf.dev kopf.dev/v1 true
	// no resource matches deployments
}
