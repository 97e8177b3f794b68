package markers

import "github.com/kopf-go/kopf/runtime/resources"

// Conversion is the marker of conversion functions: plain Go functions
// between two versions of one kind (one of them its storage version, the
// hub), which the operator serves to the API server as its CRD's
// conversion webhook (docs/versions.md).
const Conversion = "conversion"

// StorageVersion is controller-tools' marker of a kind's storage version
// (the hub of its conversions), on the version's Go type.
const StorageVersion = "+kubebuilder:storageversion"

func conversionDefinition() Definition {
	return Definition{
		Name:    Conversion,
		Targets: TargetFunc,
		Summary: "convert an object between two versions of one kind, the storage version (the hub, marked +kubebuilder:storageversion) and another (a spoke): func(src *v1alpha1.Widget, dst *v1.Widget) error; every spoke needs both directions; the operator serves them as the CRD's conversion webhook",
	}
}

// ResourceOf returns the group, version and name (plural or kind) of the
// resource of a parsed //kopf:resource marker ("" for other markers).
func ResourceOf(m *Marker) (group, version, name string) {
	if m == nil || m.Name != Resource || len(m.Positional) == 0 {
		return "", "", ""
	}
	sel, ok := m.Positional[0].Go.(resources.Selector)
	if !ok {
		return "", "", ""
	}
	return sel.Group, sel.Version, sel.Name
}
