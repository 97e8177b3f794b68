package emit

import (
	"fmt"

	"github.com/dave/jennifer/jen"

	"github.com/kopf-go/kopf/generator/model"
)

// conversions adds the package's conversions to the registration
// function, one kopf.Conversion per spoke, as one would write them:
//
//	if err := r.AddConversion(kopf.Conversion{
//		Group:   "example.com",
//		Kind:    "Widget",
//		Hub:     "v1",
//		Spoke:   "v1alpha1",
//		ToHub:   kopf.TypedConversionFunc(WidgetV1alpha1ToV1),
//		FromHub: kopf.TypedConversionFunc(WidgetV1ToV1alpha1),
//	}); err != nil {
//		return err
//	}
func conversions(g *jen.Group, pkg *model.Package) {
	for _, c := range pkg.Conversions {
		lit := kopf("Conversion").Custom(multiline(),
			jen.Id("Group").Op(":").Lit(c.Hub.Group),
			jen.Id("Kind").Op(":").Lit(c.Hub.Kind()),
			jen.Id("Hub").Op(":").Lit(c.Hub.Version),
			jen.Id("Spoke").Op(":").Lit(c.Spoke.Version),
			jen.Id("ToHub").Op(":").Add(kopf("TypedConversionFunc").Call(jen.Id(c.ToHub.Func))),
			jen.Id("FromHub").Op(":").Add(kopf("TypedConversionFunc").Call(jen.Id(c.FromHub.Func))),
		)
		g.If(
			jen.Err().Op(":=").Id("r").Dot("AddConversion").Call(lit),
			jen.Err().Op("!=").Nil(),
		).Block(jen.Return(jen.Err()))
	}
}

// registerDoc is the doc comment of the registration function.
func registerDoc(pkg *model.Package) string {
	switch {
	case len(pkg.Conversions) == 0:
		return fmt.Sprintf("// %s adds the package's handlers to r, in source order, and returns the\n// first error of the registry.", model.RegisterFunc)
	case len(pkg.Handlers) == 0:
		return fmt.Sprintf("// %s adds the package's conversions to r, one per spoke, and returns the\n// first error of the registry.", model.RegisterFunc)
	}
	return fmt.Sprintf("// %s adds the package's handlers to r, in source order, then its\n// conversions, one per spoke, and returns the first error of the registry.", model.RegisterFunc)
}
