package markers

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
