package manifests

import (
	"fmt"
	"strings"

	"github.com/kopf-go/kopf/generator/model"
	"github.com/kopf-go/kopf/runtime/admission"
)

// Admission webhooks (//kopf:on.validate, //kopf:on.mutate) are called by
// the API server, which reaches an operator in its cluster through a
// Service, with a certificate that the runtime generates and keeps in a
// Secret of the operator's namespace (so that every replica serves the
// same one). For a package with webhook handlers, kopf-gen also writes:
//
//   - webhook/service.yaml: the Service that the runtime's in-cluster
//     default names in the webhooks' clientConfig (WebhookServiceName,
//     port WebhookServicePort), sending to the operator's pods (label
//     app.kubernetes.io/name=<the role's name>, as `kopf-gen init`'s
//     Deployment has) on their port WebhookTargetPort, where the runtime
//     listens;
//   - rbac/webhook_role.yaml: a Role for the certificate Secret (get and
//     update of it alone, by its name admission.DefaultCertSecret; create
//     of Secrets, which RBAC cannot restrict by name) and, with
//     managed configurations, the Leases by which the replicas know of one
//     another, in the operator's namespace;
//
// and the ClusterRole (rbac/role.yaml) gets the rules of the managed
// configurations (settings.Admission.Managed): the validating and mutating
// webhook configurations, of the kinds the handlers need. Neither file
// names a namespace: apply them with the operator's (kubectl apply -n).

// The defaults that the runtime's in-cluster webhook server uses (see
// runtime/settings: Admission.Server), which the generated Service and
// Role match.
const (
	// WebhookServiceName is the Service in front of the webhook server.
	WebhookServiceName = admission.DefaultServiceName
	// WebhookServicePort is the Service's port, which the API server calls.
	WebhookServicePort = 443
	// WebhookTargetPort is the port the operator's webhook server listens
	// on, and WebhookPortName the name of that port in its pods.
	WebhookTargetPort = admission.DefaultPort
	WebhookPortName   = "webhooks"
)

// The files of the webhooks, under the manifests' directory.
const (
	WebhookServiceFile = "webhook/service.yaml"
	WebhookRoleFile    = "rbac/webhook_role.yaml"
)

// WebhookKinds reports which kinds of admission webhook handlers the
// packages have: validating, mutating.
func WebhookKinds(pkgs []*model.Package) (validating, mutating bool) {
	for _, p := range pkgs {
		for _, r := range p.Registrations {
			if r.Handler.Kind != model.Webhook {
				continue
			}
			if r.Mutating {
				mutating = true
			} else {
				validating = true
			}
		}
	}
	return validating, mutating
}

// WebhookOptions say how to render the webhooks' manifests.
type WebhookOptions struct {
	// Name is the operator's name: the label app.kubernetes.io/name of its
	// pods, which the Service selects, and the prefix of the Role's name.
	Name string
	// Version is kopf-gen's version, for the header.
	Version string
}

// WebhookService renders the Service of the operator's webhook server.
func WebhookService(opts WebhookOptions) ([]byte, error) {
	if !IsDNSSubdomain(opts.Name) {
		return nil, fmt.Errorf("operator name %q is not a valid label value for the webhook Service's selector", opts.Name)
	}
	var b strings.Builder
	b.WriteString(Header(opts.Version))
	fmt.Fprintf(&b, `#
# The Service through which the API server calls the operator's admission
# webhooks (//kopf:on.validate, //kopf:on.mutate): the runtime's default in a
# cluster names it in the webhooks' clientConfig (%s, port %d, path
# /<handler id>) and listens on port %d of the operator's pods, which it
# selects by their label app.kubernetes.io/name. It has no namespace: apply
# it in the operator's (kubectl apply -n NAMESPACE -f ...). This file is
# rewritten by kopf-gen.
apiVersion: v1
kind: Service
metadata:
  name: %s
  labels:
    app.kubernetes.io/name: %s
spec:
  selector:
    app.kubernetes.io/name: %s
  ports:
    - name: %s
      port: %d
      targetPort: %d
      protocol: TCP
`, WebhookServiceName, WebhookServicePort, WebhookTargetPort,
		WebhookServiceName, opts.Name, opts.Name, WebhookPortName, WebhookServicePort, WebhookTargetPort)
	return []byte(b.String()), nil
}

// WebhookRoleName returns the name of the Role of the webhooks' Secret.
func WebhookRoleName(name string) string { return name + "-webhooks" }

// WebhookRole renders the Role that the runtime needs for the webhooks'
// certificate Secret, in the operator's namespace.
func WebhookRole(opts WebhookOptions) ([]byte, error) {
	name := WebhookRoleName(opts.Name)
	if !IsDNSSubdomain(name) {
		return nil, fmt.Errorf("role name %q is not a valid object name", name)
	}
	var b strings.Builder
	b.WriteString(Header(opts.Version))
	fmt.Fprintf(&b, `#
# The Role of the operator's admission webhooks, in the operator's namespace:
# the runtime generates a CA and a serving certificate and keeps them in a
# Secret there, so that every replica serves the same certificate, and
# renews it before it expires; with managed webhook configurations, each
# replica holds a Lease there, so that the last one to exit cleans them up.
# Bind it to the operator's service account with a RoleBinding in that
# namespace. It has no namespace: apply it in the
# operator's (kubectl apply -n NAMESPACE -f ...). This file is rewritten by
# kopf-gen.
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: %s
rules:
  # The Secret %[2]s holds the private keys of the CA and
  # of the serving certificate: get (read the certificate at start and check
  # it for renewals) and update (a renewal replaces it) of that Secret alone,
  # by name; no list or watch, which would read every Secret here. create:
  # the first replica stores a new one; RBAC cannot restrict a create by name
  # (no name is known before the object exists), so other Secrets may be
  # created here, never read. Another Secret (settings.Admission.Server's
  # CertSecret) needs resourceNames changed.
`, name, admission.DefaultCertSecret)
	fmt.Fprintf(&b, "  - apiGroups: [\"\"]\n    resources: [\"secrets\"]\n    resourceNames: [%q]\n    verbs: [\"get\", \"update\"]\n", admission.DefaultCertSecret)
	writeRule(&b, "", []string{"secrets"}, "create")
	b.WriteString("  # Managed configurations: a replica creates and renews its Lease, lists\n" +
		"  # the others' and deletes its own at exit.\n")
	writeRule(&b, "coordination.k8s.io", []string{"leases"}, "get", "list", "create", "update", "delete")
	return []byte(b.String()), nil
}

// writeWebhookRules adds the rules of the managed webhook configurations to
// the ClusterRole.
func writeWebhookRules(b *roleWriter, validating, mutating bool) {
	var resources []string
	if validating {
		resources = append(resources, "validatingwebhookconfigurations")
	}
	if mutating {
		resources = append(resources, "mutatingwebhookconfigurations")
	}
	if len(resources) == 0 {
		return
	}
	// The verbs are runtime/admission's calls (managed.go), which the
	// examples' test as deployed (e2e/deployed) runs with this role and
	// audits: a server-side apply is a patch, which the API server also
	// authorizes as a create when it creates the object (the audit log
	// shows the patch only); no list, watch or delete: the configurations
	// are read by name and, at exit, reduced to the persistent handlers'
	// webhooks rather than deleted.
	b.WriteString("  # Admission webhooks (on.validate, on.mutate): with managed configurations\n" +
		"  # (settings.Admission.Managed), the runtime reads the webhook\n" +
		"  # configurations (get), writes them by server-side apply (patch; create\n" +
		"  # when they do not exist yet), and at exit reduces them to the persistent\n" +
		"  # handlers' webhooks; update: it removes the webhooks that another field\n" +
		"  # manager wrote (an older kopf-go's).\n")
	b.rule("admissionregistration.k8s.io", resources, "get", "create", "patch", "update")
}
