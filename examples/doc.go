// Package examples holds Go ports of Kopf's example operators, one per
// directory, each a runnable operator (package main) with its generated
// code committed and an end-to-end test against a real control plane.
//
// crd.yaml and obj.yaml are Kopf's KopfExample custom resource definition
// and object, shared by all examples; peering.yaml holds Kopf's peering
// resources.
package examples

import _ "embed"

// CRD is the KopfExample CustomResourceDefinition (kopf.dev/v1).
//
//go:embed crd.yaml
var CRD []byte

// Object is Kopf's example object default/kopf-example-1.
//
//go:embed obj.yaml
var Object []byte
