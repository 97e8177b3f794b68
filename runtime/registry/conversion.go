package registry

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"
)

// ConversionFn converts one object, a JSON object as the API server sent it
// (apiVersion, kind, metadata, spec, status...), to another version of its kind.
type ConversionFn func(ctx context.Context, obj map[string]any) (map[string]any, error)

// Conversion is the pair of conversions between a kind's hub (its storage
// version) and one other served version (a spoke): hub and spokes, as
// controller-runtime's Hub/Convertible; spoke to spoke goes through the hub.
//
// The conversion server (package runtime/conversion) calls ToHub for an
// object of the spoke's version wanted as the hub's, FromHub for the
// reverse, and both in turn between two spokes; it sets the result's
// apiVersion and kind itself, and refuses a result whose metadata changed
// other than in its labels and annotations (as the API server does).
type Conversion struct {
	Group   string       // the API group, e.g. "kopf.dev"
	Kind    string       // e.g. "KopfExample"
	Hub     string       // the storage version, e.g. "v1"
	Spoke   string       // another served version, e.g. "v1alpha1"
	ToHub   ConversionFn // Spoke → Hub
	FromHub ConversionFn // Hub → Spoke
}

// AddConversion registers the conversions between a kind's hub and one of
// its spokes. It refuses a conversion with an empty field, a hub that is
// its own spoke, a pair registered twice, and a second hub for one kind
// (every spoke of a kind converts through the same hub).
func (r *Registry) AddConversion(c Conversion) error {
	switch {
	case c.Group == "" || c.Kind == "":
		return fmt.Errorf("conversion %s/%s → %s has no group or kind", c.Spoke, c.Kind, c.Hub)
	case c.Hub == "" || c.Spoke == "":
		return fmt.Errorf("conversion of %s has no hub or spoke version", c.groupKind())
	case c.ToHub == nil || c.FromHub == nil:
		return fmt.Errorf("conversion of %s between %s and %s lacks a function (ToHub and FromHub are both needed)", c.groupKind(), c.Spoke, c.Hub)
	case c.Hub == c.Spoke:
		return fmt.Errorf("conversion of %s: the hub %s is its own spoke", c.groupKind(), c.Hub)
	}
	for _, other := range r.conversions {
		if other.Group != c.Group || other.Kind != c.Kind {
			continue
		}
		if other.Hub != c.Hub {
			return fmt.Errorf("conversion of %s: two hubs, %s and %s (a kind has one storage version)", c.groupKind(), other.Hub, c.Hub)
		}
		if other.Spoke == c.Spoke {
			return fmt.Errorf("conversion of %s between %s and %s is registered twice", c.groupKind(), c.Spoke, c.Hub)
		}
	}
	r.conversions = append(r.conversions, &c)
	return nil
}

// Conversions returns the registered conversions, in registration order.
func (r *Registry) Conversions() []*Conversion { return r.conversions }

// HasConversions reports whether any conversion is registered: the
// operator then serves ConversionReviews on its admission server.
func (r *Registry) HasConversions() bool { return len(r.conversions) > 0 }

func (c *Conversion) groupKind() string { return c.Kind + "." + c.Group }

// TypedConversionFunc adapts a user's plain conversion function between two Go types (the
// versions' structs, e.g. *v1alpha1.Widget → *v1.Widget) to a ConversionFn: it decodes obj into S,
// starts D with S's metadata (ObjectMeta), calls fn, encodes D; apiVersion and kind are set by the
// caller (the conversion server knows the target version).
//
// Decoding and encoding are apimachinery's unstructured converter's, as
// for typed handlers: an object that does not decode as S is the
// conversion's error; fields of obj that S lacks are dropped, so a
// conversion that must keep them keeps them in S (e.g. in an annotation).
func TypedConversionFunc[S, D any](fn func(src *S, dst *D) error) ConversionFn {
	return func(_ context.Context, obj map[string]any) (map[string]any, error) {
		src, dst := new(S), new(D)
		conv := runtime.DefaultUnstructuredConverter
		if err := conv.FromUnstructured(obj, src); err != nil {
			return nil, fmt.Errorf("decoding the object as %T: %w", src, err)
		}
		if meta, ok := obj["metadata"]; ok {
			if err := conv.FromUnstructured(map[string]any{"metadata": meta}, dst); err != nil {
				return nil, fmt.Errorf("copying the metadata into %T: %w", dst, err)
			}
		}
		if err := fn(src, dst); err != nil {
			return nil, err
		}
		out, err := conv.ToUnstructured(dst)
		if err != nil {
			return nil, fmt.Errorf("encoding %T: %w", dst, err)
		}
		return out, nil
	}
}
