package markers

import (
	"fmt"
	"slices"
	"strings"

	"sigs.k8s.io/controller-tools/pkg/rbac"
)

// RBAC is the marker of the rules that the handlers' own API calls need
// (creating pods, reading deployments): controller-gen's
// +kubebuilder:rbac in kopf-gen's grammar, with the same arguments and
// meaning. kopf-gen merges the rules of both into the generated role.
const RBAC = "rbac"

// Verbs are the verbs of Kubernetes' RBAC: a verb of an rbac marker that
// is not one of them but close to one is most likely a typo. Others are
// accepted (aggregated API servers may define their own).
var Verbs = []string{"get", "list", "watch", "create", "update", "patch", "delete", "deletecollection",
	"use", "bind", "escalate", "impersonate", "approve", "sign", "proxy", "*"}

func rbacDefinition() Definition {
	return Definition{
		Name:    RBAC,
		Targets: TargetFunc | TargetPackage,
		Summary: "grant the operator's role what the handlers' own API calls need (create pods, read deployments): controller-gen's +kubebuilder:rbac, which kopf-gen reads too, merged into the generated role as controller-gen merges them",
		Args: []Arg{
			{Name: "groups", Type: TypeStringList, Default: "none (with urls=)",
				Doc: "the API groups of resources=: \"\" or core for the core group (pods, secrets), apps, batch, ..."},
			{Name: "resources", Type: TypeStringList, Default: "none (with urls=)",
				Doc: "the resources, by plural, in lower case (pods, deployments, pods/log, deployments/scale), or *"},
			{Name: "resourceNames", Type: TypeStringList, Positive: true, Default: "none (every object)",
				Doc: "only the objects of these names (a create is never restricted by name: the name is unknown when it is authorized)"},
			{Name: "verbs", Type: TypeStringList, Positive: true, Required: true,
				Doc: "the verbs: get, list, watch, create, update, patch, delete, deletecollection, ... or *"},
			{Name: "urls", Type: TypeStringList, Positive: true, Default: "none",
				Doc: "non-resource URLs (/healthz, /metrics, /logs/*) instead of groups= and resources=; the ClusterRole only"},
			{Name: "namespace", Type: TypeString, Positive: true, Default: "none (the ClusterRole)",
				Doc: "the rule goes into a Role of that namespace (named as the ClusterRole, in the same file) instead of the ClusterRole; bind it with a RoleBinding there"},
		},
	}
}

// RBACRule returns the rule of a parsed //kopf:rbac marker, in the form of
// controller-gen's +kubebuilder:rbac (controller-tools' rbac.Rule).
func (m *Marker) RBACRule() rbac.Rule {
	var r rbac.Rule
	lists := map[string]*[]string{"groups": &r.Groups, "resources": &r.Resources, "resourceNames": &r.ResourceNames, "verbs": &r.Verbs, "urls": &r.URLs}
	for _, a := range m.Args {
		if l := lists[a.Name]; l != nil {
			*l, _ = a.Go.([]string)
		}
		if a.Name == "namespace" {
			r.Namespace, _ = a.Go.(string)
		}
	}
	return r
}

// CheckRBACRule returns what makes a rule of an rbac marker (//kopf:rbac
// or +kubebuilder:rbac) one that the API server refuses, or that most
// likely says what it does not mean: the rules of RBAC's validation
// (a rule is of resources or of non-resource URLs; resources need groups;
// a namespaced Role has no URLs), and verbs that are close to a
// Kubernetes verb without being one.
func CheckRBACRule(r rbac.Rule) []string {
	var out []string
	switch {
	case len(r.URLs) > 0 && (len(r.Groups) > 0 || len(r.Resources) > 0 || len(r.ResourceNames) > 0):
		out = append(out, "urls= cannot be combined with groups=, resources= or resourceNames=: a rule is of resources or of non-resource URLs; write two markers")
	case len(r.URLs) > 0 && r.Namespace != "":
		out = append(out, "urls= cannot go with namespace=: non-resource URLs are cluster-wide, and a namespaced Role cannot grant them")
	case len(r.URLs) == 0 && len(r.Resources) == 0:
		out = append(out, "missing resources= (or urls=): the rule grants nothing")
	case len(r.URLs) == 0 && len(r.Groups) == 0:
		out = append(out, `missing groups=: resources need their API groups ("" or core for the core group: pods, secrets, configmaps)`)
	}
	for _, res := range r.Resources {
		if res != strings.ToLower(res) {
			out = append(out, fmt.Sprintf("resources: %s looks like a kind: RBAC names resources by their plural in lower case", res))
		}
	}
	for _, v := range r.Verbs {
		if slices.Contains(Verbs, v) {
			continue
		}
		if s := enumSuggestion(v, Verbs); s != "" {
			out = append(out, fmt.Sprintf("verbs: %s is not a Kubernetes verb; did you mean %s?", v, s))
		}
	}
	return out
}
