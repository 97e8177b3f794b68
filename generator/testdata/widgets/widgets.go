// Package widgets serves a typed resource declared in a package it
// imports.
package widgets

import (
	"context"

	v1 "example.com/golden/api/v1"
)

// Paint gets the Widget of the api/v1 package.
//
//kopf:on.update example.com/v1alpha1/widget field=spec.parts.wheel.count when=isBlue
//kopf:on.create Widget
func Paint(ctx context.Context, kw PaintKwargs) (any, error) {
	return string(kw.Object.Spec.Color), nil
}

func isBlue(kw PaintKwargs) bool { return kw.Object.Spec.Color == v1.Blue }
