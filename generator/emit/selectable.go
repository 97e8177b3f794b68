package emit

import (
	"fmt"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/kopf-go/kopf/generator/model"
	"github.com/kopf-go/kopf/runtime/resources"
)

// selectableFields renders the declarations of the selectable fields of
// the typed resources that the package's handlers serve (their types'
// +kubebuilder:selectablefield markers, which the CRD generator turns into
// the CRD version's selectableFields), once per resource, in the order of
// the registrations: the runtime infers a field selector only on them.
//
//	if err := r.AddSelectableFields(kopf.SelectableFields{...}); err != nil {
//		return err
//	}
func selectableFields(g *jen.Group, pkg *model.Package) {
	seen := map[*model.Typed]bool{}
	for _, reg := range pkg.Registrations {
		t := reg.Typed
		if t == nil || t.Builtin != nil || len(t.SelectableFields) == 0 || seen[t] {
			continue
		}
		seen[t] = true
		sel := resources.Selector{Group: t.Group, Version: t.Version, Name: t.Names[0]}
		fields := make([]jen.Code, len(t.SelectableFields))
		for i, f := range t.SelectableFields {
			fields[i] = jen.Lit(f)
		}
		g.Comment(fmt.Sprintf("The selectable fields of %s (+kubebuilder:selectablefield): %s.", sel, strings.Join(t.SelectableFields, ", ")))
		lit := kopf("SelectableFields").Custom(multiline(),
			jen.Id("Selector").Op(":").Add(kopf("Selector").Values(selectorItems(sel)...)),
			jen.Id("Fields").Op(":").Index().String().Values(fields...),
		)
		g.If(
			jen.Err().Op(":=").Id("r").Dot("AddSelectableFields").Call(lit),
			jen.Err().Op("!=").Nil(),
		).Block(jen.Return(jen.Err()))
	}
}
