package port

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// typesWriter writes the Go types of CRDs of one group and version, as
// kopf-gen reads them back into CRDs (controller-tools' markers).
type typesWriter struct {
	b     strings.Builder
	queue []namedSchema
	names map[string]bool
	// imports are the packages the types use, by import path.
	imports map[string]string
}

type namedSchema struct {
	name, doc string
	schema    *apiextensionsv1.JSONSchemaProps
}

// apiTypes returns types.go of a package of CRDs of one group and version.
func apiTypes(pkg string, crds []*crd) string {
	w := &typesWriter{names: map[string]bool{}, imports: map[string]string{"k8s.io/apimachinery/pkg/apis/meta/v1": "metav1"}}
	var body strings.Builder
	for _, c := range crds {
		w.b.Reset()
		w.resource(c)
		for len(w.queue) > 0 {
			n := w.queue[0]
			w.queue = w.queue[1:]
			w.structType(n)
		}
		body.WriteString(w.b.String())
	}
	var out strings.Builder
	fmt.Fprintf(&out, "package %s\n\nimport (\n", pkg)
	paths := make([]string, 0, len(w.imports))
	for p := range w.imports {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		fmt.Fprintf(&out, "\t%s %q\n", w.imports[p], p)
	}
	out.WriteString(")\n\n")
	out.WriteString(body.String())
	return out.String()
}

// resource writes the object type and its list type.
func (w *typesWriter) resource(c *crd) {
	k := c.Kind
	fmt.Fprintf(&w.b, "// %s is a %s.%s object, ported from its CRD's openAPIV3Schema (version %s).\n", k, c.Plural, c.Group, c.Version)
	if len(c.Others) > 0 {
		fmt.Fprintf(&w.b, "// TODO(port): the CRD's other versions (%s) are not ported.\n", strings.Join(c.Others, ", "))
	}
	w.b.WriteString("//\n")
	res := []string{}
	if c.Scope == "Cluster" {
		res = append(res, "scope=Cluster")
	}
	if len(c.ShortNames) > 0 {
		res = append(res, "shortName="+strings.Join(c.ShortNames, ";"))
	}
	if len(c.Categories) > 0 {
		res = append(res, "categories="+strings.Join(c.Categories, ";"))
	}
	if c.Singular != "" && c.Singular != strings.ToLower(k) {
		res = append(res, "singular="+c.Singular)
	}
	if len(res) > 0 {
		fmt.Fprintf(&w.b, "// +kubebuilder:resource:%s\n", strings.Join(res, ","))
	}
	if c.StatusSubresource {
		w.b.WriteString("// +kubebuilder:subresource:status\n")
	}
	for _, col := range c.Columns {
		fmt.Fprintf(&w.b, "// +kubebuilder:printcolumn:name=%q,type=%s,JSONPath=%q", col.Name, col.Type, col.JSONPath)
		if col.Priority != 0 {
			fmt.Fprintf(&w.b, ",priority=%d", col.Priority)
		}
		if col.Description != "" {
			fmt.Fprintf(&w.b, ",description=%q", col.Description)
		}
		w.b.WriteString("\n")
	}
	for _, f := range c.Selectable {
		fmt.Fprintf(&w.b, "// +kubebuilder:selectablefield:JSONPath=%q\n", f.JSONPath)
	}
	w.b.WriteString("// +genclient\n")
	if c.Scope == "Cluster" {
		w.b.WriteString("// +genclient:nonNamespaced\n")
	}
	fmt.Fprintf(&w.b, "// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object\n//\n//kopf:resource %s/%s/%s\n", c.Group, c.Version, c.Plural)
	fmt.Fprintf(&w.b, "type %s struct {\n\tmetav1.TypeMeta   `json:\",inline\"`\n\tmetav1.ObjectMeta `json:\"metadata,omitempty\"`\n\n", k)
	w.names[k] = true
	w.names[k+"List"] = true
	if c.Schema != nil {
		w.fields(k, c.Schema, map[string]bool{"apiVersion": true, "kind": true, "metadata": true})
	}
	w.b.WriteString("}\n\n")
	fmt.Fprintf(&w.b, "// %[1]sList is a list of %[1]s objects.\n//\n// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object\n", k)
	fmt.Fprintf(&w.b, "type %[1]sList struct {\n\tmetav1.TypeMeta `json:\",inline\"`\n\tmetav1.ListMeta `json:\"metadata,omitempty\"`\n\n\tItems []%[1]s `json:\"items\"`\n}\n\n", k)
}

// fields writes the fields of an object schema.
func (w *typesWriter) fields(owner string, s *apiextensionsv1.JSONSchemaProps, skip map[string]bool) {
	keys := make([]string, 0, len(s.Properties))
	for k := range s.Properties {
		if !skip[k] {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	required := map[string]bool{}
	for _, r := range s.Required {
		required[r] = true
	}
	used := map[string]bool{}
	for _, k := range keys {
		prop := s.Properties[k]
		name := goFieldName(k)
		for used[name] {
			name += "_"
		}
		used[name] = true
		writeDoc(&w.b, "\t", name, prop.Description)
		for _, m := range validationMarkers(&prop) {
			fmt.Fprintf(&w.b, "\t// %s\n", m)
		}
		typ := w.goType(owner+name, &prop)
		if prop.Type == "number" {
			w.b.WriteString("\t// TODO(port): a number in the CRD, a resource.Quantity here (controller-gen refuses floats).\n")
		}
		tag := k
		if !required[k] {
			tag += ",omitempty"
			w.b.WriteString("\t// +optional\n")
		} else {
			w.b.WriteString("\t// +required\n")
		}
		fmt.Fprintf(&w.b, "\t%s %s `json:%q`\n", name, typ, tag)
	}
}

// goType is the Go type of a schema; object schemas with properties or
// preserved unknown fields become named struct types (queued).
func (w *typesWriter) goType(name string, s *apiextensionsv1.JSONSchemaProps) string {
	switch {
	case s.XIntOrString:
		w.imports["k8s.io/apimachinery/pkg/util/intstr"] = "intstr"
		return "intstr.IntOrString"
	case s.Type == "string":
		if s.Format == "date-time" {
			return "metav1.Time"
		}
		return "string"
	case s.Type == "integer":
		if s.Format == "int32" {
			return "int32"
		}
		return "int64"
	case s.Type == "number":
		w.imports["k8s.io/apimachinery/pkg/api/resource"] = "resource"
		return "resource.Quantity"
	case s.Type == "boolean":
		return "bool"
	case s.Type == "array":
		if s.Items != nil && s.Items.Schema != nil {
			return "[]" + w.goType(name+"Item", s.Items.Schema)
		}
		w.imports["k8s.io/apimachinery/pkg/runtime"] = "runtime"
		return "[]runtime.RawExtension"
	case s.Type == "object" && len(s.Properties) == 0 && s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil:
		return "map[string]" + w.goType(name+"Value", s.AdditionalProperties.Schema)
	case s.Type == "object":
		for w.names[name] {
			name += "_"
		}
		w.names[name] = true
		w.queue = append(w.queue, namedSchema{name: name, schema: s})
		return name
	}
	w.imports["k8s.io/apimachinery/pkg/runtime"] = "runtime"
	return "runtime.RawExtension"
}

// structType writes a named struct type of an object schema.
func (w *typesWriter) structType(n namedSchema) {
	writeDoc(&w.b, "", n.name, n.schema.Description)
	if n.schema.Description == "" {
		fmt.Fprintf(&w.b, "// %s is a part of the object, ported from its CRD.\n", n.name)
	}
	if n.schema.XPreserveUnknownFields != nil && *n.schema.XPreserveUnknownFields {
		w.b.WriteString("//\n// +kubebuilder:pruning:PreserveUnknownFields\n")
	}
	fmt.Fprintf(&w.b, "type %s struct {\n", n.name)
	w.fields(n.name, n.schema, nil)
	w.b.WriteString("}\n\n")
}

func writeDoc(b *strings.Builder, indent, name, desc string) {
	if desc == "" {
		return
	}
	lines := strings.Split(strings.TrimSpace(desc), "\n")
	fmt.Fprintf(b, "%s// %s: %s\n", indent, name, lines[0])
	for _, l := range lines[1:] {
		fmt.Fprintf(b, "%s// %s\n", indent, l)
	}
}

// validationMarkers are the +kubebuilder:validation markers of a schema.
func validationMarkers(s *apiextensionsv1.JSONSchemaProps) []string {
	var out []string
	if len(s.Enum) > 0 {
		var vals []string
		for _, e := range s.Enum {
			vals = append(vals, string(e.Raw))
		}
		out = append(out, "+kubebuilder:validation:Enum="+strings.Join(vals, ";"))
	}
	if s.Minimum != nil {
		out = append(out, "+kubebuilder:validation:Minimum="+strconv.FormatFloat(*s.Minimum, 'f', -1, 64))
	}
	if s.Maximum != nil {
		out = append(out, "+kubebuilder:validation:Maximum="+strconv.FormatFloat(*s.Maximum, 'f', -1, 64))
	}
	if s.MaxLength != nil {
		out = append(out, fmt.Sprintf("+kubebuilder:validation:MaxLength=%d", *s.MaxLength))
	}
	if s.MinLength != nil {
		out = append(out, fmt.Sprintf("+kubebuilder:validation:MinLength=%d", *s.MinLength))
	}
	if s.Pattern != "" {
		out = append(out, "+kubebuilder:validation:Pattern=`"+s.Pattern+"`")
	}
	return out
}

// goFieldName is a JSON property's Go field name: create_fn → CreateFn,
// running-pods → RunningPods.
func goFieldName(k string) string {
	var b strings.Builder
	up := true
	for _, r := range k {
		switch {
		case r == '_' || r == '-' || r == '.' || r == '/' || r == ' ':
			up = true
		case up:
			b.WriteString(strings.ToUpper(string(r)))
			up = false
		default:
			b.WriteRune(r)
		}
	}
	s := b.String()
	if s == "" || !isLetter(s[0]) {
		s = "F" + s
	}
	return s
}
