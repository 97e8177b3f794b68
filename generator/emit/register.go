package emit

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/dave/jennifer/jen"
)

// Scheme registration: zz_generated.register.go.
//
// The file has the shape of code-generator's register-gen output (and of
// the register.go of k8s.io/api's packages), without init():
//
//	const GroupName = "kopf.dev"
//	var SchemeGroupVersion = schema.GroupVersion{Group: GroupName, Version: "v1"}
//	func Kind(kind string) schema.GroupKind
//	func Resource(resource string) schema.GroupResource
//	var (
//		SchemeBuilder      = runtime.NewSchemeBuilder(addKnownTypes)
//		localSchemeBuilder = &SchemeBuilder
//		AddToScheme        = localSchemeBuilder.AddToScheme
//	)
//	func addKnownTypes(scheme *runtime.Scheme) error
//
// addKnownTypes adds the types to the scheme under SchemeGroupVersion and
// registers the meta/v1 options types for it (metav1.AddToGroupVersion),
// as client-go's schemes expect.

// RegisterNames are the names that the scheme registration file declares,
// in the order it declares them.
var RegisterNames = []string{"GroupName", "SchemeGroupVersion", "Kind", "Resource", "SchemeBuilder", "localSchemeBuilder", "AddToScheme", "addKnownTypes"}

// Registration is what one package's scheme registration holds.
type Registration struct {
	// PkgPath and Name are the package's import path and name.
	PkgPath, Name string
	// Group and Version are the API group and version of every type.
	Group, Version string
	// Types are the names of the types to register (each a
	// runtime.Object), in order.
	Types []string
}

const (
	schemaPath  = "k8s.io/apimachinery/pkg/runtime/schema"
	runtimePath = "k8s.io/apimachinery/pkg/runtime"
	metav1Path  = "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// RegisterFile renders the scheme registration file of a package.
func RegisterFile(r Registration, version string) ([]byte, error) {
	if len(r.Types) == 0 {
		return nil, fmt.Errorf("package %s has no types to register", r.PkgPath)
	}
	f := jen.NewFilePathName(r.PkgPath, r.Name)
	f.HeaderComment(strings.TrimPrefix(Header(version), "// "))
	f.ImportName(schemaPath, "schema")
	f.ImportName(runtimePath, "runtime")
	f.ImportAlias(metav1Path, "metav1")

	apiVersion := r.Version
	if r.Group != "" {
		apiVersion = r.Group + "/" + r.Version
	}
	f.Comment("GroupName is the API group of the package's resources.")
	f.Const().Id("GroupName").Op("=").Lit(r.Group)
	f.Line()
	f.Comment(fmt.Sprintf("SchemeGroupVersion is the group and version of the package's resources, %s.", apiVersion))
	f.Var().Id("SchemeGroupVersion").Op("=").Qual(schemaPath, "GroupVersion").Values(jen.Dict{
		jen.Id("Group"):   jen.Id("GroupName"),
		jen.Id("Version"): jen.Lit(r.Version),
	})
	f.Line()
	f.Comment("Kind takes an unqualified kind and returns it qualified with the package's group.")
	f.Func().Id("Kind").Params(jen.Id("kind").String()).Qual(schemaPath, "GroupKind").Block(
		jen.Return(jen.Id("SchemeGroupVersion").Dot("WithKind").Call(jen.Id("kind")).Dot("GroupKind").Call()),
	)
	f.Line()
	f.Comment("Resource takes an unqualified resource and returns it qualified with the package's group.")
	f.Func().Id("Resource").Params(jen.Id("resource").String()).Qual(schemaPath, "GroupResource").Block(
		jen.Return(jen.Id("SchemeGroupVersion").Dot("WithResource").Call(jen.Id("resource")).Dot("GroupResource").Call()),
	)
	f.Line()
	f.Var().Defs(
		jen.Comment("SchemeBuilder adds the package's types to a scheme."),
		jen.Id("SchemeBuilder").Op("=").Qual(runtimePath, "NewSchemeBuilder").Call(jen.Id("addKnownTypes")),
		jen.Comment("localSchemeBuilder is what code-generator's defaulter-gen and conversion-gen register their functions with."),
		jen.Id("localSchemeBuilder").Op("=").Op("&").Id("SchemeBuilder"),
		jen.Comment("AddToScheme adds the package's types to a scheme, such as client-go's"),
		jen.Comment("scheme.Scheme or a clientset's, so that they encode and decode as "+apiVersion+"."),
		jen.Id("AddToScheme").Op("=").Id("localSchemeBuilder").Dot("AddToScheme"),
	)
	f.Line()
	f.Comment("addKnownTypes adds the package's types to scheme, with the options types of meta/v1.")
	f.Func().Id("addKnownTypes").Params(jen.Id("scheme").Op("*").Qual(runtimePath, "Scheme")).Error().Block(
		jen.Id("scheme").Dot("AddKnownTypes").CallFunc(func(g *jen.Group) {
			g.Line().Id("SchemeGroupVersion")
			for _, t := range r.Types {
				g.Line().Op("&").Id(t).Values()
			}
			g.Line()
		}),
		jen.Qual(metav1Path, "AddToGroupVersion").Call(jen.Id("scheme"), jen.Id("SchemeGroupVersion")),
		jen.Return(jen.Nil()),
	)

	var buf bytes.Buffer
	if err := f.Render(&buf); err != nil {
		return nil, fmt.Errorf("rendering the scheme registration of %s: %w", r.PkgPath, err)
	}
	return buf.Bytes(), nil
}
