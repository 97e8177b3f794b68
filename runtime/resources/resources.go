// Package resources names Kubernetes resources: a Selector is what a handler
// asks for (as written in a marker), a Resource is what the cluster's
// discovery resolved it to.
package resources

import (
	"fmt"
	"strings"
)

// Selector identifies the resource that a handler serves, the way Kopf's
// decorators accept it. Group and Version are optional; Name may be the
// plural, the singular, the kind or a short name. The core group is "".
//
// A Selector with Group "" and Version "" matches any group, preferring the
// core group when several match (as Kopf does).
type Selector struct {
	Group   string
	Version string
	Name    string
	// Core restricts an empty Group to the core group (as in "v1/pods"),
	// instead of any group.
	Core bool
}

// String renders the selector as group/version/name, omitting empty parts.
func (s Selector) String() string {
	parts := make([]string, 0, 3)
	for _, p := range []string{s.Group, s.Version, s.Name} {
		if p != "" {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, "/")
}

// Resource is a resolved, served resource.
type Resource struct {
	Group      string
	Version    string
	Plural     string
	Singular   string
	Kind       string
	ShortNames []string
	Namespaced bool
	// Subresources lists the served subresources, e.g. "status".
	Subresources []string
	// Verbs lists the verbs the resource supports (from discovery).
	Verbs []string
}

// Everything is the name of Kopf's EVERYTHING selector: it matches every
// served resource that can be listed and watched, in the selector's group
// and version if given, except Kubernetes Events (core v1 and
// events.k8s.io, the same objects: as in Kopf, which excludes v1/events).
const Everything = "*"

// IsEverything reports whether the selector is an everything selector.
func (s Selector) IsEverything() bool { return s.Name == Everything }

// Watchable reports whether the resource can be listed and watched.
func (r Resource) Watchable() bool {
	var list, watch bool
	for _, v := range r.Verbs {
		list = list || v == "list"
		watch = watch || v == "watch"
	}
	return list && watch
}

// APIVersion returns "group/version", or "version" for the core group.
func (r Resource) APIVersion() string {
	if r.Group == "" {
		return r.Version
	}
	return r.Group + "/" + r.Version
}

// Path returns the URL path of the resource's collection: in a namespace,
// or cluster-wide if namespace is "" or the resource is cluster-scoped.
func (r Resource) Path(namespace string) string {
	p := "/apis/" + r.Group + "/" + r.Version
	if r.Group == "" {
		p = "/api/" + r.Version
	}
	if r.Namespaced && namespace != "" {
		p += "/namespaces/" + namespace
	}
	return p + "/" + r.Plural
}

// HasStatusSubresource reports whether status must be patched via /status.
func (r Resource) HasStatusSubresource() bool {
	for _, s := range r.Subresources {
		if s == "status" {
			return true
		}
	}
	return false
}

// String renders the resource as plural.version.group (Kopf's notation).
func (r Resource) String() string {
	if r.Group == "" {
		return r.Plural + "." + r.Version
	}
	return fmt.Sprintf("%s.%s.%s", r.Plural, r.Version, r.Group)
}

// Matches reports whether the selector names this resource.
func (s Selector) Matches(r Resource) bool {
	if (s.Group != "" || s.Core) && s.Group != r.Group {
		return false
	}
	if s.Version != "" && s.Version != r.Version {
		return false
	}
	if s.IsEverything() {
		isEvents := r.Plural == "events" && (r.Group == "" || r.Group == "events.k8s.io")
		return !isEvents && r.Watchable()
	}
	if s.Name == r.Plural || s.Name == r.Singular || s.Name == r.Kind {
		return true
	}
	for _, sn := range r.ShortNames {
		if s.Name == sn {
			return true
		}
	}
	return false
}
