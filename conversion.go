package kopf

import "github.com/kopf-go/kopf/runtime/registry"

// Versioned APIs (docs/versions.md): the conversions between a kind's hub
// (its storage version) and its other served versions, which the operator
// serves as the CRD's conversion webhook on its admission server.
type (
	// Conversion is the pair of conversions between a kind's hub and one
	// spoke (Registry.AddConversion).
	Conversion = registry.Conversion
	// ConversionFn converts one object, as JSON, to another version of
	// its kind.
	ConversionFn = registry.ConversionFn
)

// TypedConversionFunc adapts a plain conversion function between two Go
// types (the versions' structs, e.g. *v1alpha1.Widget → *v1.Widget) to a
// ConversionFn: obj is decoded as S, D starts with S's metadata, fn fills
// D, D is encoded; the conversion server sets apiVersion and kind.
func TypedConversionFunc[S, D any](fn func(src *S, dst *D) error) ConversionFn {
	return registry.TypedConversionFunc(fn)
}
