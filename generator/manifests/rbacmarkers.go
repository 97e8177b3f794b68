package manifests

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"sigs.k8s.io/controller-tools/pkg/rbac"

	"github.com/kopf-go/kopf/generator/model"
)

// roleWriter writes the rules of the ClusterRole and records what they
// grant, so that the rules of the rbac markers leave it out.
type roleWriter struct {
	strings.Builder
	granted []grant
}

// grant is the access that one of the runtime's rules gives to one
// resource ("*" for every resource or group).
type grant struct {
	group, resource string
	verbs           []string
}

// rule writes a rule and records it.
func (w *roleWriter) rule(group string, resources []string, verbs ...string) {
	writeRule(&w.Builder, group, resources, verbs...)
	for _, r := range resources {
		w.granted = append(w.granted, grant{group, r, verbs})
	}
}

// covers reports whether the rules written grant verb on the resource of
// the group, for every object.
func (w *roleWriter) covers(group, resource, verb string) bool {
	for _, g := range w.granted {
		if (g.group == group || g.group == "*") && (g.resource == resource || g.resource == "*") && slices.Contains(g.verbs, verb) {
			return true
		}
	}
	return false
}

// markerRules returns the rules of the packages' rbac markers by
// namespace ("" for the ClusterRole's), without what covers says is
// granted already, merged as controller-gen merges the rules of its
// +kubebuilder:rbac markers (controller-tools' rbac.GenerateRoles: one
// rule per resource, then rules merged when they differ in verbs only,
// then in resources only, in groups only, in URLs only; every list
// deduplicated and sorted, "core" as "", verbs with * as * alone; rules
// sorted by their groups, resources, names and URLs).
func markerRules(pkgs []*model.Package, covers func(group, resource, verb string) bool) map[string][]rbac.Rule {
	byNS := map[string][]*rbac.Rule{}
	for _, p := range pkgs {
		for _, mr := range p.RBAC {
			for _, r := range splitRule(mr.Rule) {
				if r = subtract(r, covers); r != nil {
					byNS[r.Namespace] = append(byNS[r.Namespace], r)
				}
			}
		}
	}
	out := map[string][]rbac.Rule{}
	for ns, rules := range byNS {
		out[ns] = normalizeRules(rules)
	}
	return out
}

// splitRule splits a marker's rule into one rule per resource, as
// controller-gen does before merging, with the group "core" as "".
func splitRule(r rbac.Rule) []*rbac.Rule {
	groups := make([]string, len(r.Groups))
	for i, g := range r.Groups {
		if g == "core" {
			g = ""
		}
		groups[i] = g
	}
	one := func(resources []string) *rbac.Rule {
		return &rbac.Rule{Groups: slices.Clone(groups), Resources: resources, ResourceNames: slices.Clone(r.ResourceNames),
			URLs: slices.Clone(r.URLs), Namespace: r.Namespace, Verbs: slices.Clone(r.Verbs)}
	}
	if len(r.Resources) == 0 {
		return []*rbac.Rule{one([]string{})}
	}
	out := make([]*rbac.Rule, 0, len(r.Resources))
	for _, res := range r.Resources {
		out = append(out, one([]string{res}))
	}
	return out
}

// subtract removes from a rule of one resource the verbs that covers
// grants on it in every group of the rule; nil if none is left.
func subtract(r *rbac.Rule, covers func(group, resource, verb string) bool) *rbac.Rule {
	if len(r.Resources) != 1 || len(r.Groups) == 0 {
		return r
	}
	verbs := r.Verbs[:0:0]
	for _, v := range r.Verbs {
		all := true
		for _, g := range r.Groups {
			all = all && covers(g, r.Resources[0], v)
		}
		if !all {
			verbs = append(verbs, v)
		}
	}
	if len(verbs) == 0 {
		return nil
	}
	r.Verbs = verbs
	return r
}

// ruleKey is what controller-gen merges rules by: their resources and
// non-resource URLs.
type ruleKey struct {
	groups, resources, names, urls string
}

func (k ruleKey) String() string {
	return fmt.Sprintf("%s + %s + %s + %s", k.groups, k.resources, k.names, k.urls)
}

// keyOf normalizes a rule (every list deduplicated and sorted) and
// returns its key.
func keyOf(r *rbac.Rule) ruleKey {
	r.Groups, r.Resources, r.ResourceNames = dedupSorted(r.Groups), dedupSorted(r.Resources), dedupSorted(r.ResourceNames)
	r.Verbs, r.URLs = dedupSorted(r.Verbs), dedupSorted(r.URLs)
	return ruleKey{strings.Join(r.Groups, "&"), strings.Join(r.Resources, "&"), strings.Join(r.ResourceNames, "&"), strings.Join(r.URLs, "&")}
}

// dedupSorted returns the distinct strings, sorted; nil for none.
func dedupSorted(ss []string) []string {
	var out []string
	for _, s := range ss {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return out
}

// normalizeRules merges and sorts the rules of one role as controller-gen
// does (see markerRules); the passes are controller-tools' own, in its
// order.
func normalizeRules(rules []*rbac.Rule) []rbac.Rule {
	byKey := map[ruleKey]*rbac.Rule{}
	for _, r := range rules {
		k := keyOf(r)
		if have := byKey[k]; have != nil {
			have.Verbs = dedupSorted(append(have.Verbs, r.Verbs...))
			continue
		}
		byKey[k] = r
	}
	verbs := func(r *rbac.Rule) string { return strings.Join(r.Verbs, "&") }
	byKey = mergeBy(byKey, func(k ruleKey, r *rbac.Rule) string {
		return k.groups + " + " + k.names + " + " + k.urls + " + " + verbs(r)
	},
		func(into, r *rbac.Rule) { into.Resources = append(into.Resources, r.Resources...) })
	byKey = mergeBy(byKey, func(k ruleKey, r *rbac.Rule) string {
		return k.resources + " + " + k.names + " + " + k.urls + " + " + verbs(r)
	},
		func(into, r *rbac.Rule) { into.Groups = append(into.Groups, r.Groups...) })
	byKey = mergeBy(byKey, func(k ruleKey, r *rbac.Rule) string {
		return k.groups + " + " + k.resources + " + " + k.names + " + " + verbs(r)
	},
		func(into, r *rbac.Rule) { into.URLs = append(into.URLs, r.URLs...) })
	keys := make([]ruleKey, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	sort.SliceStable(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
	out := make([]rbac.Rule, 0, len(keys))
	for _, k := range keys {
		r := *byKey[k]
		if slices.Contains(r.Verbs, "*") {
			r.Verbs = []string{"*"}
		}
		out = append(out, r)
	}
	return out
}

// mergeBy merges the rules that have the same key by, with merge, and
// returns them by their new keys.
func mergeBy(rules map[ruleKey]*rbac.Rule, by func(ruleKey, *rbac.Rule) string, merge func(into, r *rbac.Rule)) map[ruleKey]*rbac.Rule {
	groups := map[string][]*rbac.Rule{}
	var order []string
	for k, r := range rules {
		g := by(k, r)
		if groups[g] == nil {
			order = append(order, g)
		}
		groups[g] = append(groups[g], r)
	}
	out := make(map[ruleKey]*rbac.Rule, len(groups))
	for _, g := range order {
		first := groups[g][0]
		for _, r := range groups[g][1:] {
			merge(first, r)
		}
		out[keyOf(first)] = first
	}
	return out
}

// writePolicyRule writes a rule of a marker: its groups, resources,
// resource names and non-resource URLs, those that it has, and its verbs.
func writePolicyRule(b *strings.Builder, r rbac.Rule) {
	lead := "  - "
	field := func(name string, values []string) {
		if len(values) == 0 {
			return
		}
		fmt.Fprintf(b, "%s%s: [%s]\n", lead, name, quoteAll(values))
		lead = "    "
	}
	field("apiGroups", r.Groups)
	field("resources", r.Resources)
	field("resourceNames", r.ResourceNames)
	field("nonResourceURLs", r.URLs)
	field("verbs", r.Verbs)
}
