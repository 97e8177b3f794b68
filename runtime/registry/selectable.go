package registry

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kopf-go/kopf/runtime/resources"
)

// SelectableFields declares fields that the API server selects on for a
// resource beyond metadata.name and metadata.namespace, which every
// resource has: the selectableFields of a CustomResourceDefinition's
// version (Kubernetes 1.32+), or a built-in resource's own field labels
// (pods' spec.nodeName). kopf-go infers a field selector for a watch only
// on fields the API server selects on (docs/filters.md, "Server-side
// selectors"): one it does not, and the watch fails with 400 Bad Request.
// kopf-gen declares those of the CRDs it generates, from the types'
// +kubebuilder:selectablefield markers; a hand-written registration
// declares them itself.
type SelectableFields struct {
	// Selector names the resource. The selectable fields of a CRD are its
	// version's: a Selector with a group and a version declares them only
	// for the version the operator watches, if it is that one.
	Selector resources.Selector
	// Fields are the paths as a field selector names them: a CRD's
	// jsonPath without its leading dot, e.g. "spec.phase".
	Fields []string
}

// AddSelectableFields declares selectable fields of a resource. A leading
// dot of a path (as a CRD's jsonPath writes it) is dropped.
func (r *Registry) AddSelectableFields(s SelectableFields) error {
	if s.Selector.Name == "" {
		return fmt.Errorf("selectable fields %v: no resource", s.Fields)
	}
	paths := make([]string, 0, len(s.Fields))
	for _, f := range s.Fields {
		p := strings.TrimPrefix(f, ".")
		if p == "" || strings.HasPrefix(p, ".") || strings.HasSuffix(p, ".") || strings.Contains(p, "..") || strings.ContainsAny(p, "[]*=!, ") {
			return fmt.Errorf("selectable field %q of %s: not a dotted path such as spec.phase", f, s.Selector)
		}
		paths = append(paths, p)
	}
	s.Fields = paths
	r.selectable = append(r.selectable, &s)
	return nil
}

// SelectableFields returns the selectable fields declared for a resource
// (metadata.name and metadata.namespace not included), without
// duplicates, in declaration order.
func (r *Registry) SelectableFields(res resources.Resource) []string {
	var out []string
	for _, s := range r.selectable {
		if !s.Selector.Matches(res) {
			continue
		}
		for _, f := range s.Fields {
			if !slices.Contains(out, f) {
				out = append(out, f)
			}
		}
	}
	return out
}
