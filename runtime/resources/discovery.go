package resources

import (
	"fmt"
	"sort"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
)

// ErrNotFound means that no served resource matches a selector (e.g. its
// CRD is not created yet). ErrAmbiguous means that several do.
var (
	ErrNotFound  = fmt.Errorf("no resource matches")
	ErrAmbiguous = fmt.Errorf("several resources match")
)

// Discover lists the served resources of the cluster, in the preferred
// version of each group first.
func Discover(dc discovery.DiscoveryInterface) ([]Resource, error) {
	groups, lists, err := dc.ServerGroupsAndResources()
	if err != nil && len(lists) == 0 {
		return nil, fmt.Errorf("discovering the cluster's resources: %w", err)
	}
	preferred := map[string]string{}
	for _, g := range groups {
		preferred[g.Name] = g.PreferredVersion.Version
	}
	var out []Resource
	for _, list := range lists {
		gv, err := schema.ParseGroupVersion(list.GroupVersion)
		if err != nil {
			continue
		}
		subs := map[string][]string{}
		for _, r := range list.APIResources {
			if parent, sub, ok := strings.Cut(r.Name, "/"); ok {
				subs[parent] = append(subs[parent], sub)
			}
		}
		for _, r := range list.APIResources {
			if strings.Contains(r.Name, "/") {
				continue
			}
			out = append(out, fromAPIResource(gv, r, subs[r.Name]))
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		pi := preferred[out[i].Group] == out[i].Version
		pj := preferred[out[j].Group] == out[j].Version
		return pi && !pj
	})
	return out, nil
}

func fromAPIResource(gv schema.GroupVersion, r metav1.APIResource, subs []string) Resource {
	return Resource{
		Group:        gv.Group,
		Version:      gv.Version,
		Plural:       r.Name,
		Singular:     r.SingularName,
		Kind:         r.Kind,
		ShortNames:   r.ShortNames,
		Namespaced:   r.Namespaced,
		Subresources: subs,
		Verbs:        r.Verbs,
	}
}

// ResolveAll finds every served resource an everything selector names, in
// the preferred version of each group.
func ResolveAll(all []Resource, s Selector) []Resource {
	var out []Resource
	seen := map[string]bool{}
	for _, r := range all {
		key := r.Group + "/" + r.Plural
		if !s.Matches(r) || seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, r)
	}
	return out
}

// Resolve finds the one served resource a selector names. Without a
// version, the group's preferred version is taken; when several groups
// match, the core group wins (as in Kopf); otherwise it is ErrAmbiguous.
func Resolve(all []Resource, s Selector) (Resource, error) {
	var matches []Resource
	seenGroups := map[string]bool{}
	for _, r := range all {
		if !s.Matches(r) || seenGroups[r.Group] {
			continue
		}
		seenGroups[r.Group] = true // the first, i.e. preferred, version only
		matches = append(matches, r)
	}
	switch len(matches) {
	case 0:
		return Resource{}, fmt.Errorf("%w %s", ErrNotFound, s)
	case 1:
		return matches[0], nil
	}
	for _, r := range matches {
		if r.Group == "" {
			return r, nil
		}
	}
	names := make([]string, len(matches))
	for i, r := range matches {
		names[i] = r.String()
	}
	return Resource{}, fmt.Errorf("%w %s: %s", ErrAmbiguous, s, strings.Join(names, ", "))
}
