package manifests

import (
	"encoding/json"
	"fmt"
	"go/scanner"
	"reflect"
	"sort"
	"strings"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kopf-go/kopf/generator/markers"
	"github.com/kopf-go/kopf/generator/model"
)

// Versions and conversions (docs/versions.md).
//
// The typed resources of one group and kind in several packages (one per
// version, as kubebuilder lays them out) make one CRD with every version.
// One of them is the storage version: its type is marked
// +kubebuilder:storageversion; none, or more than one, is an error at
// the versions' markers. Versions whose schemas are equal (descriptions
// aside) need no conversion: the CRD has none (the API server's None
// strategy). Versions whose schemas differ need the conversions of every
// version but the storage one (//kopf:conversion, see package model): then
// the CRD's spec.conversion is the Webhook strategy, served by the
// operator at ConvertPath of its admission server, behind the webhooks'
// Service (WebhookServiceName, WebhookServicePort, in the namespace
// ConvertNamespace, which a kustomization's namespace replaces); the
// runtime writes the CRD's caBundle (and the clientConfig where it
// serves) when it starts. Without the conversions, a kind whose schemas
// differ is an error at the markers of the versions other than the
// storage one: the API server would otherwise store those objects by
// dropping the fields that the storage version lacks.
//
// With conversions, the webhooks' Service and Role are generated as for
// admission webhooks, and the ClusterRole may get and patch those CRDs
// (by name) to write their caBundle.

// ConvertPath is the path of the conversion webhook on the operator's
// admission server.
const ConvertPath = "/convert"

// ConvertNamespace is the namespace of the webhooks' Service in a CRD's
// conversion webhook: the Service has none (it is applied in the
// operator's), so the CRD names the default one, which a kustomization's
// namespace (kopf-gen init's config/default) and the runtime replace.
const ConvertNamespace = "default"

// HasConversions reports whether the packages have conversions.
func HasConversions(pkgs []*model.Package) bool {
	for _, p := range pkgs {
		if len(p.Conversions) > 0 {
			return true
		}
	}
	return false
}

// conversionCRDs returns the names of the CRDs with conversions
// (<plural>.<group>), sorted.
func conversionCRDs(pkgs []*model.Package) []string {
	seen := map[string]bool{}
	var names []string
	for _, p := range pkgs {
		for _, c := range p.Conversions {
			plural, _ := PluralAndKind(c.Hub)
			if name := plural + "." + c.Hub.Group; !seen[name] {
				seen[name] = true
				names = append(names, name)
			}
		}
	}
	sort.Strings(names)
	return names
}

// writeConversionRules adds the rule of the CRDs with conversions to the
// ClusterRole.
func writeConversionRules(b *roleWriter, pkgs []*model.Package) {
	names := conversionCRDs(pkgs)
	if len(names) == 0 {
		return
	}
	b.WriteString("  # Conversions (//kopf:conversion): the runtime reads the CRDs of the\n" +
		"  # converted kinds (get) and writes their conversion webhook's caBundle\n" +
		"  # (patch), by name.\n")
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = fmt.Sprintf("%q", n)
	}
	fmt.Fprintf(b, "  - apiGroups: [\"apiextensions.k8s.io\"]\n    resources: [\"customresourcedefinitions\"]\n    resourceNames: [%s]\n    verbs: [\"get\", \"patch\"]\n",
		strings.Join(quoted, ", "))
}

// kinds groups typed resources by group and kind, in their order.
func kinds(resources []*model.Typed) (map[schema.GroupKind][]*model.Typed, []schema.GroupKind) {
	byKind := map[schema.GroupKind][]*model.Typed{}
	var order []schema.GroupKind
	for _, t := range resources {
		gk := schema.GroupKind{Group: t.Group, Kind: t.Kind()}
		if byKind[gk] == nil {
			order = append(order, gk)
		}
		byKind[gk] = append(byKind[gk], t)
	}
	return byKind, order
}

// checkStorage reports the kinds of several versions with no storage
// version, or more than one.
func checkStorage(resources []*model.Typed, errs *scanner.ErrorList) {
	byKind, order := kinds(resources)
	for _, gk := range order {
		versions := byKind[gk]
		if len(versions) < 2 {
			continue
		}
		var storage *model.Typed
		for _, t := range versions {
			switch {
			case !t.Storage:
			case storage == nil:
				storage = t
			default:
				errs.Add(t.Pos, fmt.Sprintf("%s %s is marked %s, as %s at %s is: a kind has one storage version, the hub of its conversions",
					gk.Kind, t.Version, markers.StorageVersion, storage.Version, where(storage.Pos, t.Pos)))
			}
		}
		if storage != nil {
			continue
		}
		for _, t := range versions {
			errs.Add(t.Pos, fmt.Sprintf("%s has %d versions (%s) and none is its storage version: mark the type of the version that the API server stores with %s",
				gk.Kind, len(versions), versionList(versions), markers.StorageVersion))
		}
	}
}

func versionList(ts []*model.Typed) string {
	vs := make([]string, len(ts))
	for i, t := range ts {
		vs[i] = t.Version
	}
	return strings.Join(vs, ", ")
}

// setConversion sets the conversion of a CRD of several versions: the
// Webhook strategy when the kind has conversions (every version but the
// storage one needs them), none when the versions' schemas are equal; a
// kind whose schemas differ without conversions is an error at the
// versions other than the storage one.
func setConversion(c *apiextensionsv1.CustomResourceDefinition, versions []*model.Typed, convs []*model.Conversion, errs *scanner.ErrorList) {
	if len(c.Spec.Versions) < 2 {
		return
	}
	spokes := map[string]bool{}
	for _, cv := range convs {
		if cv.Hub.Group == c.Spec.Group && cv.Hub.Kind() == c.Spec.Names.Kind {
			spokes[cv.Spoke.Version] = true
		}
	}
	if len(spokes) == 0 {
		storage, equal := storageSchema(c)
		for _, t := range versions {
			if t.Version != storage && !equal[t.Version] {
				errs.Add(t.Pos, fmt.Sprintf("%s %s's schema differs from the storage version %s's, and no %s%s converts between them: the API server would convert by dropping the fields that the other version lacks; write both conversions (%s to %s and back; kopf-gen add-version writes their stubs), or make the schemas equal",
					t.Kind(), t.Version, storage, markers.Prefix, markers.Conversion, t.Version, storage))
			}
		}
		return
	}
	for _, t := range versions {
		if !t.Storage && !spokes[t.Version] {
			errs.Add(t.Pos, fmt.Sprintf("%s %s has no %s%s to and from the storage version, though other versions of %[1]s have: the API server converts every version of a kind through its webhook",
				t.Kind(), t.Version, markers.Prefix, markers.Conversion))
		}
	}
	path := ConvertPath
	port := int32(WebhookServicePort)
	c.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{
		Strategy: apiextensionsv1.WebhookConverter,
		Webhook: &apiextensionsv1.WebhookConversion{
			ConversionReviewVersions: []string{"v1"},
			ClientConfig: &apiextensionsv1.WebhookClientConfig{
				Service: &apiextensionsv1.ServiceReference{
					Namespace: ConvertNamespace,
					Name:      WebhookServiceName,
					Path:      &path,
					Port:      &port,
				},
			},
		},
	}
}

// storageSchema returns the CRD's storage version and the versions whose
// schemas equal its schema, descriptions aside.
func storageSchema(c *apiextensionsv1.CustomResourceDefinition) (string, map[string]bool) {
	var storage string
	var want any
	for _, v := range c.Spec.Versions {
		if v.Storage {
			storage, want = v.Name, bareSchema(v.Schema)
		}
	}
	equal := map[string]bool{}
	for _, v := range c.Spec.Versions {
		equal[v.Name] = reflect.DeepEqual(bareSchema(v.Schema), want)
	}
	return storage, equal
}

// bareSchema returns a version's schema as JSON values without its
// descriptions, which differ between versions that store the same.
func bareSchema(v *apiextensionsv1.CustomResourceValidation) any {
	if v == nil || v.OpenAPIV3Schema == nil {
		return nil
	}
	j, err := json.Marshal(v.OpenAPIV3Schema)
	if err != nil {
		return nil
	}
	var tree any
	if err := json.Unmarshal(j, &tree); err != nil {
		return nil
	}
	var strip func(any)
	strip = func(x any) {
		switch x := x.(type) {
		case map[string]any:
			if _, text := x["description"].(string); text { // not a property named so
				delete(x, "description")
			}
			for _, v := range x {
				strip(v)
			}
		case []any:
			for _, v := range x {
				strip(v)
			}
		}
	}
	strip(tree)
	return tree
}
