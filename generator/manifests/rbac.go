package manifests

import (
	"fmt"
	"go/scanner"
	"sort"
	"strings"

	"github.com/gobuffalo/flect"
	"sigs.k8s.io/controller-tools/pkg/rbac"

	"github.com/kopf-go/kopf/generator/builtins"
	"github.com/kopf-go/kopf/generator/markers"
	"github.com/kopf-go/kopf/generator/model"
	"github.com/kopf-go/kopf/runtime/resources"
)

// RoleOptions say how to render the role.
type RoleOptions struct {
	// Name is the ClusterRole's name; it must be a DNS-1123 subdomain.
	Name string
	// Peering adds the rules of Kopf's peering objects and of the Lease of
	// the active replica (docs/peering.md).
	Peering bool
	// Version is kopf-gen's version, for the header.
	Version string
}

// rule is the access to one resource.
type rule struct {
	group, plural string
	// changing is set when a changing handler serves the resource,
	// spawning when a daemon or timer does, reconciling when a reconcile
	// handler does; related when a reconcile handler owns or watches it
	// (reconcile.go).
	changing, spawning, reconciling, related bool
	// markers are the names of the markers that serve it.
	markers map[string]bool
}

// Role renders the ClusterRole that the handlers of the packages need; see
// the package doc for its rules. Selectors whose API group or plural
// cannot be told are reported as a scanner.ErrorList.
func Role(pkgs []*model.Package, opts RoleOptions) ([]byte, error) {
	if !IsDNSSubdomain(opts.Name) {
		return nil, fmt.Errorf("role name %q is not a valid object name: lower-case letters, digits, '-' and '.', starting and ending with a letter or digit", opts.Name)
	}
	rules, handlers, err := collectRules(pkgs)
	if err != nil {
		return nil, err
	}
	w := &roleWriter{}
	for _, ru := range rules {
		writeResourceRules(w, ru)
	}
	if handlers > 0 {
		// Granted to every operator with handlers, though most of the
		// examples' operators create none (e2e/deployed audits them):
		// whether a handler calls kopf.Info and the like cannot be told from
		// the markers, and settings.Posting.Loggers is a run-time setting.
		w.WriteString("  # Kubernetes events: those that handlers post (kopf.Info, kopf.Warn,\n" +
			"  # kopf.Exception, kopf.Event) and, with settings.Posting.Loggers, the\n" +
			"  # log records about objects (the handlers' progress and errors).\n")
		w.rule("", []string{"events"}, "create")
	}
	validating, mutating := WebhookKinds(pkgs)
	writeWebhookRules(w, validating, mutating)
	writeConversionRules(w, pkgs)
	if opts.Peering {
		writePeeringRules(w)
	}
	calls := markerRules(pkgs, w.covers)
	if len(calls[""]) > 0 {
		w.WriteString("  # The handlers' own API calls, from their //kopf:rbac and +kubebuilder:rbac\n" +
			"  # markers, merged as controller-gen merges them, without what the rules\n" +
			"  # above grant.\n")
		for _, r := range calls[""] {
			writePolicyRule(&w.Builder, r)
		}
	}
	var b strings.Builder
	writeRoleHeader(&b, opts, anyRelated(rules))
	if w.Len() == 0 {
		b.WriteString("rules: []\n")
	} else {
		b.WriteString("rules:\n" + w.String())
	}
	writeNamespacedRoles(&b, opts.Name, calls)
	return []byte(b.String()), nil
}

// writeNamespacedRoles writes, after the ClusterRole, a Role per namespace
// of the rbac markers with namespace=, as controller-gen writes them: named
// as the ClusterRole, in namespace order.
func writeNamespacedRoles(b *strings.Builder, name string, byNS map[string][]rbac.Rule) {
	namespaces := make([]string, 0, len(byNS))
	for ns := range byNS {
		if ns != "" && len(byNS[ns]) > 0 {
			namespaces = append(namespaces, ns)
		}
	}
	sort.Strings(namespaces)
	for _, ns := range namespaces {
		fmt.Fprintf(b, "---\n# The handlers' own API calls in the namespace %s (their rbac markers\n"+
			"# with namespace=%[1]s): bind this Role to the operator's service\n"+
			"# account with a RoleBinding there.\n", ns)
		fmt.Fprintf(b, "apiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata:\n  name: %s\n  namespace: %s\nrules:\n", name, ns)
		for _, r := range byNS[ns] {
			writePolicyRule(b, r)
		}
	}
}

// collectRules returns the rules of the resources that the packages'
// handlers serve, sorted by group and plural, and how many handlers may
// post events (those of resources and webhooks); selectors whose group or
// plural cannot be told are a scanner.ErrorList.
func collectRules(pkgs []*model.Package) ([]*rule, int, error) {
	var declared []*model.Typed
	for _, p := range pkgs {
		declared = append(declared, p.Resources...)
	}
	rules := map[[2]string]*rule{}
	var errs scanner.ErrorList
	handlers := 0
	for _, p := range pkgs {
		for _, r := range p.Registrations {
			if r.Handler.Kind.IsActivity() {
				continue // serves no resource
			}
			if r.Handler.Kind == model.Webhook {
				handlers++ // kopf.Info and the like post events from them too
				continue   // called by the API server: nothing is watched (webhooks.go)
			}
			group, plural, why := resolve(r, declared)
			if why != "" {
				errs.Add(r.SelectorPos, "resource: "+why)
				continue
			}
			handlers++
			key := [2]string{group, plural}
			ru := rules[key]
			if ru == nil {
				ru = &rule{group: group, plural: plural, markers: map[string]bool{}}
				rules[key] = ru
			}
			ru.add(r)
			if r.Handler.Kind == model.Reconcile {
				addRelated(rules, r, declared, &errs)
			}
		}
	}
	if len(errs) > 0 {
		errs.Sort()
		return nil, 0, errs
	}
	sorted := make([]*rule, 0, len(rules))
	for _, ru := range rules {
		sorted = append(sorted, ru)
	}
	sort.Slice(sorted, func(i, j int) bool {
		if sorted[i].group != sorted[j].group {
			return sorted[i].group < sorted[j].group
		}
		return sorted[i].plural < sorted[j].plural
	})
	return sorted, handlers, nil
}

// add records a registration that the rule's resource serves.
func (ru *rule) add(r *model.Registration) {
	ru.changing = ru.changing || r.Handler.Kind == model.Changing
	ru.spawning = ru.spawning || r.Handler.Kind.Spawning()
	ru.reconciling = ru.reconciling || r.Handler.Kind == model.Reconcile
	for _, m := range r.Markers {
		name, _, _ := strings.Cut(strings.TrimPrefix(m, markers.Prefix), " ")
		ru.markers[name] = true
	}
}

// writeRoleHeader writes the role's header comment and its metadata.
func writeRoleHeader(b *strings.Builder, opts RoleOptions, related bool) {
	b.WriteString(Header(opts.Version))
	header := `#
# The ClusterRole of the operator: exactly what the kopf-go runtime does for
# the handlers that the //kopf: markers declare, then what the handlers do
# themselves (create pods, read secrets, ...) as their //kopf:rbac and
# +kubebuilder:rbac markers say. This file is rewritten by kopf-gen: change
# the markers, not the file.
#
# Not here, because the runtime does not need it: get (it lists and watches,
# never reads single objects), update and delete (it only patches), discovery
# (the default system:discovery role allows /api and /apis to everyone
# authenticated), customresourcedefinitions and namespaces (it finds resources
# through discovery and filters namespaces itself).
`
	if related {
		header = strings.Replace(header, `get (it lists and watches,
# never reads single objects), update and delete (it only patches), discovery
# (the default system:discovery role allows /api and /apis to everyone
# authenticated), customresourcedefinitions`, `get (it lists and watches,
# never reads single objects, but for the resources that reconcile handlers
# own or watch), update and delete (it only patches), discovery (the default
# system:discovery role allows /api and /apis to everyone authenticated),
# customresourcedefinitions`, 1)
	}
	b.WriteString(header)
	if !opts.Peering {
		b.WriteString("# Without the rules of peering (kopf-gen --peering), run the operator with --standalone (docs/peering.md).\n")
	}
	fmt.Fprintf(b, "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: %s\n", opts.Name)
}

// writeResourceRules writes the rules of one resource, with a comment that
// says which handlers need them and why.
func writeResourceRules(b *roleWriter, ru *rule) {
	if len(ru.markers) == 0 {
		writeRelatedRules(b, ru.qualified(), ru)
		return
	}
	names := make([]string, 0, len(ru.markers))
	for name := range ru.markers {
		names = append(names, name)
	}
	sort.Strings(names)
	fmt.Fprintf(b, "  # %s: served by %s handlers.\n", ru.qualified(), strings.Join(names, ", "))
	if ru.related {
		b.WriteString("  # get: on.reconcile handlers also own or watch them (owns=, watches=).\n")
	}
	// list stays though an API server of Kubernetes 1.35 audits none
	// (e2e/deployed): client-go's reflector streams the initial listing
	// through a watch (WatchListClient) where the API server supports it,
	// and lists where it does not, or when the stream fails. So do the
	// peering objects' rules.
	if !ru.changing && !ru.spawning && !ru.reconciling {
		b.WriteString("  # list, watch: the runtime watches them (on.event handlers and indices cause no writes).\n")
		b.rule(ru.group, []string{ru.plural}, ru.verbs("list", "watch")...)
		return
	}
	switch {
	case !ru.changing && !ru.spawning:
		b.WriteString("  # list, watch: the runtime watches them. patch: it applies the reconcile\n" +
			"  # handlers' kw.Patch (their conditions), and adds and removes its\n" +
			"  # finalizer for those with finalize=true.\n")
	case !ru.changing:
		b.WriteString("  # list, watch: the runtime watches them. patch: it stores the daemons' and\n" +
			"  # timers' results, and adds and removes its finalizer, which it holds\n" +
			"  # while they run.\n")
	case ru.spawning:
		b.WriteString("  # list, watch: the runtime watches them. patch: it stores the handlers'\n" +
			"  # progress and results and the last handled state, and adds and removes\n" +
			"  # its finalizer, which it also holds while daemons and timers run.\n")
	default:
		b.WriteString("  # list, watch: the runtime watches them. patch: it stores the handlers'\n" +
			"  # progress and results and the last handled state, and adds and removes\n" +
			"  # its finalizer.\n")
	}
	if ru.reconciling && (ru.changing || ru.spawning) {
		b.WriteString("  # patch: also the reconcile handlers' kw.Patch (their conditions).\n")
	}
	b.rule(ru.group, []string{ru.plural}, ru.verbs("list", "watch", "patch")...)
	b.WriteString("  # The status subresource: when the resource has one, the status part of\n" +
		"  # the runtime's patches goes there.\n")
	b.rule(ru.group, []string{ru.plural + "/status"}, "patch")
}

// writePeeringRules writes the rules of Kopf's peering objects and of the
// Lease of the replicas' election.
func writePeeringRules(b *roleWriter) {
	b.WriteString("  # Peering: Kopf's objects for knowing which other operators serve the same\n" +
		"  # resources (cluster-wide and per namespace), in kopf.dev and the legacy\n" +
		"  # zalando.org: read and watched, the operator's record patched in.\n")
	b.rule("kopf.dev", []string{"clusterkopfpeerings", "kopfpeerings"}, "get", "list", "watch", "patch")
	b.rule("zalando.org", []string{"clusterkopfpeerings", "kopfpeerings"}, "get", "list", "watch", "patch")
	b.WriteString("  # The Lease through which replicas of equal priority elect the active one.\n")
	b.rule("coordination.k8s.io", []string{"leases"}, "get", "create", "update")
}

func writeRule(b *strings.Builder, group string, resources []string, verbs ...string) {
	fmt.Fprintf(b, "  - apiGroups: [%q]\n    resources: [%s]\n    verbs: [%s]\n", group, quoteAll(resources), quoteAll(verbs))
}

func quoteAll(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, ", ")
}

// qualified is the rule's resource as plural.group (plural for the core
// group).
func (ru *rule) qualified() string {
	if ru.group != "" {
		return ru.plural + "." + ru.group
	}
	return ru.plural
}

// resolve returns the API group and plural of a registration's resource,
// or why they cannot be told.
func resolve(r *model.Registration, declared []*model.Typed) (group, plural, why string) {
	return resolveSelector(r.Selector, r.Typed, declared)
}

// resolveSelector returns the API group and plural of a selector, whose
// typed resource (nil if none) and the typed resources declared by the
// run's packages help, or why they cannot be told.
func resolveSelector(sel resources.Selector, typed *model.Typed, declared []*model.Typed) (group, plural, why string) {
	if sel.Name == markers.Everything {
		// Every watchable resource (of a group, if given): the runtime
		// discovers them at run time, so RBAC cannot be narrower.
		group = sel.Group
		if group == "" && !sel.Core {
			group = "*"
		}
		return group, "*", ""
	}
	if t := typed; t != nil {
		if t.Builtin != nil {
			return t.Builtin.Group, t.Builtin.Plural, ""
		}
		plural, _ := PluralAndKind(t)
		return t.Group, plural, ""
	}
	var found []*model.Typed
	for _, t := range declared {
		if t.Matches(sel) {
			found = append(found, t)
		}
	}
	switch len(found) {
	case 1:
		plural, _ := PluralAndKind(found[0])
		return found[0].Group, plural, ""
	case 0:
	default:
		var names []string
		for _, t := range found {
			names = append(names, fmt.Sprintf("%s (%s)", resources.Selector{Group: t.Group, Version: t.Version, Name: t.Names[0]}, t.Object.Obj().Name()))
		}
		return "", "", fmt.Sprintf("%s names several typed resources of this run: %s; add the group and version", sel, strings.Join(names, ", "))
	}
	for _, bi := range builtins.Table() {
		if !containsName(bi.Names(), sel.Name) {
			continue
		}
		if (sel.Group != "" || sel.Core) && sel.Group != bi.Group {
			continue
		}
		if sel.Version != "" && sel.Version != bi.Version {
			continue
		}
		return bi.Group, bi.Plural, ""
	}
	if sel.Group == "" && !sel.Core {
		return "", "", fmt.Sprintf("cannot tell the API group of %s for the RBAC rules: write it with its group (group/%[1]s, group/version/%[1]s, or v1/%[1]s for the core group), or declare its Go type with %s%s",
			sel.Name, markers.Prefix, markers.Resource)
	}
	if c := sel.Name[0]; c >= 'A' && c <= 'Z' {
		return "", "", fmt.Sprintf("RBAC rules name resources by their plural, and %s looks like a kind: write the plural (e.g. %s), or declare its Go type with %s%s",
			sel.Name, strings.ToLower(flect.Pluralize(sel.Name)), markers.Prefix, markers.Resource)
	}
	return sel.Group, sel.Name, ""
}

func containsName(names []string, name string) bool {
	for _, n := range names {
		if n == name {
			return true
		}
	}
	return false
}

// PluralAndKind returns the plural and kind of a //kopf:resource type:
// the kind is the type's name, or the marker's name when it is
// capitalised; the plural is the marker's name, unless that is the kind
// or the singular (the kind in lower case), in which case it is the
// kind's English plural in lower case, as kubebuilder makes it.
func PluralAndKind(t *model.Typed) (plural, kind string) {
	name := t.Names[0]
	kind = t.Object.Obj().Name()
	if c := name[0]; c >= 'A' && c <= 'Z' {
		kind = name
	}
	if name == kind || name == strings.ToLower(kind) {
		return strings.ToLower(flect.Pluralize(kind)), kind
	}
	return name, kind
}

func flectPlural(kind string) string { return flect.Pluralize(kind) }
