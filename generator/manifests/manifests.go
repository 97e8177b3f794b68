// Package manifests derives from an operator's markers what Kopf makes its
// users write by hand: the RBAC role the operator needs, the
// CustomResourceDefinitions of its typed resources, and their DeepCopy
// methods.
//
// # RBAC
//
// [Role] renders one ClusterRole with exactly what the kopf-go runtime
// does for the handlers the markers declare, one rule per resource with a
// comment saying why:
//
//   - list, watch on every resource with handlers: the runtime watches it
//     (a client-go reflector: a list, then a watch).
//   - patch on every resource with changing handlers (on.create,
//     on.update, on.delete, on.resume, on.field), daemons or timers: the runtime stores the
//     handlers' progress, their results and the last handled state with
//     merge patches, and adds and removes its finalizer with JSON patches.
//     Deletion handlers need nothing more: the finalizer is a patch.
//     Daemons and timers need the same: their results are stored in the
//     status, and the finalizer is held while they run.
//   - patch on <plural>/status for the same resources: when the resource
//     has a status subresource (which the runtime learns from discovery,
//     at run time), the status part of the patch goes there.
//   - create on core events, when there are handlers: the runtime posts
//     Kubernetes events about handlers' progress and failures (and
//     kopf.Info/Warn/Exception from handlers).
//
// For admission webhook handlers (on.validate, on.mutate), no rule of
// their resources (the API server calls them; nothing is watched for
// them), but those of the managed webhook configurations, and the
// webhooks' Service and the Role of their certificate Secret in files of
// their own (see webhooks.go).
//
// Deliberately absent: get (the runtime never reads single objects),
// update and delete (it only patches), discovery (/api and /apis are open
// to every authenticated user through the default system:discovery role),
// customresourcedefinitions and namespaces (the runtime finds resources
// through discovery and filters namespaces itself, without watching
// either). [RoleOptions.Peering] adds the rules of peering: Kopf's
// kopfpeerings and clusterkopfpeerings (kopf.dev and zalando.org) and the
// coordination.k8s.io Lease of the active replica; an operator without
// them runs with --standalone (docs/peering.md).
//
// What handlers do themselves (create pods, read secrets) comes from
// their rbac markers (//kopf:rbac and controller-gen's +kubebuilder:rbac,
// see model.RBACRule), after the runtime's rules: split per resource,
// less the verbs that the runtime's rules grant already (in every group of
// the rule, for every object), then merged and sorted as controller-gen
// merges them (rbacmarkers.go; a test holds it to controller-tools'
// rbac.GenerateRoles). Rules with namespace= go into a Role of that
// namespace, named as the ClusterRole, after it in the same file, as
// controller-gen writes them; binding them is the user's (a RoleBinding
// in that namespace).
//
// Resources are named by plural and API group, resolved from the
// selector at generate time: a typed resource (//kopf:resource) or a
// built-in resource that the selector names gives both; otherwise the
// selector must give the group (kopf.dev/kopfexamples, or v1/pods for
// the core group) and name the plural. A selector from which neither can
// be told is an error at its position.
//
// # CRDs and DeepCopy
//
// [Code] runs sigs.k8s.io/controller-tools on the packages that declare
// typed resources (for CRDs) and those with DeepCopy markers, in one load
// of its own: controller-tools type-checks from source and takes no
// packages loaded elsewhere. The CRD of a //kopf:resource type T gets its
// group and version from the marker (a package's +groupName and
// +versionName markers must agree with it), its kind from T's name and its
// plural from the marker (or, when the marker names the kind or the
// singular, the kind's English plural, as kubebuilder does). Every
// +kubebuilder: marker that controller-gen honours applies: validation,
// defaults, printer columns, subresources, scope, short names.
//
// One thing kopf-gen adds: the status of every CRD preserves unknown
// fields, because the runtime writes the handlers' results
// (status.<handler id>) and, by default, its progress (status.kopf) there;
// a structural schema would otherwise prune them silently.
//
// DeepCopy methods are generated for the packages enabled with
// code-generator's markers (+k8s:deepcopy-gen=package,
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object) or
// kubebuilder's (+kubebuilder:object:generate=true,
// +kubebuilder:object:root=true), into zz_generated.deepcopy.go, by
// controller-tools' object generator: the same output as deepcopy-gen, from
// the same load as the CRDs, returned in memory so that verify can compare
// it.
package manifests

import (
	"strings"
)

// Header returns the first line of every generated YAML file.
func Header(version string) string {
	return "# Code generated by kopf-gen " + version + ". DO NOT EDIT.\n"
}

// IsGenerated reports whether YAML content is marked as generated: a
// comment line "# Code generated ... DO NOT EDIT." among the comments and
// blank lines it starts with.
func IsGenerated(content []byte) bool {
	for _, line := range strings.Split(string(content), "\n") {
		line = strings.TrimSpace(strings.TrimSuffix(line, "\r"))
		switch {
		case line == "":
			continue
		case strings.HasPrefix(line, "# Code generated ") && strings.HasSuffix(line, " DO NOT EDIT."):
			return true
		case strings.HasPrefix(line, "#"):
			continue
		}
		return false
	}
	return false
}

// DefaultRoleName is the name of the role of an operator in the module at
// modulePath: the module's last path element (without a major version
// suffix), followed by "-operator" unless it ends with "operator", in
// lower case and with other characters than letters, digits and dashes
// replaced by dashes; a name that would start with a digit is
// "operator-" and the element instead (example.com/01-minimal:
// operator-01-minimal).
func DefaultRoleName(modulePath string) string {
	parts := strings.Split(strings.Trim(modulePath, "/"), "/")
	last := parts[len(parts)-1]
	if len(parts) > 1 && isMajorVersion(last) {
		last = parts[len(parts)-2]
	}
	var b strings.Builder
	for _, r := range strings.ToLower(last) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' {
			b.WriteRune(r)
		} else {
			b.WriteByte('-')
		}
	}
	name := strings.Trim(b.String(), "-")
	if name == "" {
		return "operator"
	}
	switch {
	case name[0] >= '0' && name[0] <= '9':
		// The names made from it must start with a letter where they
		// name a Service (<name>-metrics, a DNS-1035 label).
		name = "operator-" + name
	case !strings.HasSuffix(name, "operator"):
		name += "-operator"
	}
	return name
}

func isMajorVersion(s string) bool {
	if len(s) < 2 || s[0] != 'v' {
		return false
	}
	for _, c := range s[1:] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// IsDNSSubdomain reports whether s is a valid Kubernetes object name of
// the DNS-1123 subdomain kind (lower-case alphanumerics, '-' and '.',
// starting and ending with an alphanumeric, at most 253 characters), as
// the names of roles must be.
func IsDNSSubdomain(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for _, label := range strings.Split(s, ".") {
		if !IsDNSLabel(label) {
			return false
		}
	}
	return true
}

// IsDNSLabel reports whether s is a DNS-1123 label: lower-case
// alphanumerics and '-', starting and ending with an alphanumeric, at most
// 63 characters.
func IsDNSLabel(s string) bool {
	if s == "" || len(s) > 63 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		alnum := c >= 'a' && c <= 'z' || c >= '0' && c <= '9'
		if !alnum && (c != '-' || i == 0 || i == len(s)-1) {
			return false
		}
	}
	return true
}
