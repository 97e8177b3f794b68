package port

import (
	"bytes"
	"fmt"
	"os"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/kopf-go/kopf/generator/builtins"
)

// resourceRef is the resource of a decorator: as Kopf's selector names it,
// and what it resolves to among the CRDs and the built-ins.
type resourceRef struct {
	group, version, name string
	everything           bool
	crd                  *crd
	builtin              *builtins.Resource
}

// selector is the marker's resource: group/version/plural when resolved,
// else as the decorator names it.
func (r *resourceRef) selector() string {
	switch {
	case r.everything:
		return "*"
	case r.crd != nil:
		return r.crd.Group + "/" + r.crd.Version + "/" + r.crd.Plural
	case r.builtin != nil:
		if r.builtin.Group == "" {
			return r.builtin.Version + "/" + r.builtin.Plural
		}
		return r.builtin.Group + "/" + r.builtin.Version + "/" + r.builtin.Plural
	case r.group != "" && r.version != "":
		return r.group + "/" + r.version + "/" + r.name
	case r.group != "":
		return r.group + "/" + r.name
	}
	return r.name
}

// resolveResource reads a decorator's resource: positional (name; group,
// name; group/version, name; group, version, name), keywords (group=,
// version=, kind=, plural=...) or kopf.EVERYTHING.
func (p *porter) resolveResource(args, kwargs []Node) (*resourceRef, []string) {
	r := &resourceRef{}
	var todo []string
	var strs []string
	for _, a := range args {
		if dottedName(a) == "kopf.EVERYTHING" {
			r.everything = true
			return r, nil
		}
		s, ok := constString(a)
		if !ok {
			todo = append(todo, "resource "+p.source(a))
			continue
		}
		strs = append(strs, s)
	}
	for _, kw := range kwargs {
		s, ok := constString(kw.Get("value"))
		switch key := kw.Str("arg"); {
		case !resourceKeywords[key]:
		case !ok:
			todo = append(todo, key+"="+p.source(kw.Get("value")))
		case key == "group":
			r.group = s
		case key == "version":
			r.version = s
		default:
			r.name = s
		}
	}
	switch len(strs) {
	case 1:
		r.name = strs[0]
	case 2:
		r.group, r.name = strs[0], strs[1]
		if g, v, ok := strings.Cut(strs[0], "/"); ok {
			r.group, r.version = g, v
		}
	case 3:
		r.group, r.version, r.name = strs[0], strs[1], strs[2]
	}
	if r.group == "" && strings.Contains(r.name, ".") {
		// plural.group or plural.version.group.
		parts := strings.SplitN(r.name, ".", 3)
		if len(parts) == 3 && isVersion(parts[1]) {
			r.name, r.version, r.group = parts[0], parts[1], parts[2]
		} else {
			r.name, r.group = parts[0], strings.TrimPrefix(r.name, parts[0]+".")
		}
	}
	p.resolve(r)
	return r, todo
}

func isVersion(s string) bool {
	return len(s) > 1 && s[0] == 'v' && s[1] >= '0' && s[1] <= '9'
}

// resolve finds the CRD or the built-in resource that r names.
func (p *porter) resolve(r *resourceRef) {
	matches := func(group, version string, names []string) bool {
		if r.group != "" && r.group != group || r.version != "" && r.version != version {
			return false
		}
		for _, n := range names {
			if strings.EqualFold(n, r.name) {
				return true
			}
		}
		return false
	}
	for _, c := range p.crds {
		if matches(c.Group, c.Version, append([]string{c.Plural, c.Singular, c.Kind}, c.ShortNames...)) {
			r.crd = c
			return
		}
	}
	for _, b := range builtins.Table() {
		if matches(b.Group, b.Version, b.Names()) {
			b := b
			r.builtin = &b
			return
		}
	}
}

// crd is a CustomResourceDefinition of the operator, at its storage
// version (the version that the Go types describe).
type crd struct {
	Group, Version, Kind, Plural, Singular string
	ShortNames, Categories                 []string
	Scope                                  string
	StatusSubresource                      bool
	Schema                                 *apiextensionsv1.JSONSchemaProps
	Columns                                []apiextensionsv1.CustomResourceColumnDefinition
	Selectable                             []apiextensionsv1.SelectableField
	// Others are the CRD's other versions, not ported.
	Others []string
}

// readCRDs reads the CRDs of YAML files (several documents each).
func readCRDs(paths []string) ([]*crd, error) {
	var out []*crd
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		for i, doc := range bytes.Split(data, []byte("\n---")) {
			if len(bytes.TrimSpace(doc)) == 0 {
				continue
			}
			var obj apiextensionsv1.CustomResourceDefinition
			if err := yaml.Unmarshal(doc, &obj); err != nil {
				return nil, fmt.Errorf("%s (document %d): %w", path, i+1, err)
			}
			if obj.Kind != "CustomResourceDefinition" {
				continue
			}
			c, err := fromCRD(&obj)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", path, err)
			}
			out = append(out, c)
		}
	}
	return out, nil
}

func fromCRD(obj *apiextensionsv1.CustomResourceDefinition) (*crd, error) {
	s := obj.Spec
	c := &crd{Group: s.Group, Kind: s.Names.Kind, Plural: s.Names.Plural, Singular: s.Names.Singular,
		ShortNames: s.Names.ShortNames, Categories: s.Names.Categories, Scope: string(s.Scope)}
	if len(s.Versions) == 0 {
		return nil, fmt.Errorf("CRD %s has no versions", obj.Name)
	}
	v := s.Versions[0]
	for _, ver := range s.Versions {
		if ver.Storage {
			v = ver
		}
	}
	for _, ver := range s.Versions {
		if ver.Name != v.Name {
			c.Others = append(c.Others, ver.Name)
		}
	}
	c.Version = v.Name
	c.StatusSubresource = v.Subresources != nil && v.Subresources.Status != nil
	if v.Schema != nil {
		c.Schema = v.Schema.OpenAPIV3Schema
	}
	c.Columns = v.AdditionalPrinterColumns
	c.Selectable = v.SelectableFields
	if c.Kind == "" || c.Plural == "" || c.Group == "" {
		return nil, fmt.Errorf("CRD %s: group, kind and plural are required", obj.Name)
	}
	return c, nil
}
