// Package examples holds Go ports of Kopf's example operators, one per
// directory, each a runnable operator (package main) with its generated
// code committed and an end-to-end test against a real control plane.
//
// crd.yaml and obj.yaml are Kopf's KopfExample custom resource definition
// and object, shared by all examples; peering.yaml holds Kopf's peering
// resources.
package examples

import (
	_ "embed"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// CRD is the KopfExample CustomResourceDefinition (kopf.dev/v1).
//
//go:embed crd.yaml
var CRD []byte

// Object is Kopf's example object default/kopf-example-1.
//
//go:embed obj.yaml
var Object []byte

// KopfExamples is the resource of the KopfExample objects.
var KopfExamples = schema.GroupVersionResource{Group: "kopf.dev", Version: "v1", Resource: "kopfexamples"}
