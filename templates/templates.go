// Package templates holds what `kopf-gen init` scaffolds: an operator
// repository, as text/template files embedded in the kopf-gen binary.
//
// It is a package of the root module (kopf-go's runtime) that depends on
// nothing but the standard library, so that the templates live at the
// repository's top level next to the runtime they build on. Only
// generator/scaffold imports it; operators never do, so their binaries do
// not embed it.
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
