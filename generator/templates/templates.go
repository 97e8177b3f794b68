// Package templates holds what `kopf-gen init` scaffolds: an operator
// repository, as text/template files embedded in the kopf-gen binary.
//
// FS holds the repository under the directory operator/. Every file name
// ends with ".tmpl", which the scaffold drops, so that no template is Go
// source of this module (nor a go.mod that would split it). A path element
// VERSION stands for the API version and a file name PLURAL.yaml for the
// resource's plural; everything else is rendered by text/template with
// the data that package generator/scaffold documents.
package templates

import "embed"

// FS is the embedded templates; Root is the directory within it that
// holds the operator repository.
//
//go:embed all:operator
var FS embed.FS

// Root is the directory of FS that holds the operator repository.
const Root = "operator"
