// Package builtins is kopf-gen's table of the built-in Kubernetes resources
// whose handlers get typed kwargs: kw.Object is the k8s.io/api type of the
// object, and kw.Spec and kw.Status are typed when the type has them.
//
// The table is deliberately small: the everyday kinds of the core, apps and
// batch groups. Handlers of any other built-in resource keep untyped kwargs.
package builtins

// Resource is one built-in resource and its Go type.
type Resource struct {
	Group, Version string
	// Plural, Singular, Kind and ShortNames are the names a selector may use.
	Plural, Singular, Kind string
	ShortNames             []string
	// Package is the import path of the Go type, Alias the name generated
	// code imports it as. The type's name is Kind.
	Package, Alias string
	// Spec and Status name the Go types of the object's spec and status
	// fields (in Package), or are empty when the type has no such field.
	Spec, Status string
}

// Names returns every name a selector may use for the resource.
func (r Resource) Names() []string {
	return append([]string{r.Plural, r.Singular, r.Kind}, r.ShortNames...)
}

const (
	core  = "k8s.io/api/core/v1"
	apps  = "k8s.io/api/apps/v1"
	batch = "k8s.io/api/batch/v1"
)

func withSpec(group, version, plural, kind, pkg, alias string, short ...string) Resource {
	return Resource{
		Group: group, Version: version, Plural: plural, Singular: lower(kind), Kind: kind, ShortNames: short,
		Package: pkg, Alias: alias, Spec: kind + "Spec", Status: kind + "Status",
	}
}

func plain(group, version, plural, kind, pkg, alias string, short ...string) Resource {
	return Resource{
		Group: group, Version: version, Plural: plural, Singular: lower(kind), Kind: kind, ShortNames: short,
		Package: pkg, Alias: alias,
	}
}

func lower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// Table returns the built-in resources, in a fixed order.
func Table() []Resource {
	return []Resource{
		withSpec("", "v1", "pods", "Pod", core, "corev1", "po"),
		withSpec("", "v1", "services", "Service", core, "corev1", "svc"),
		plain("", "v1", "configmaps", "ConfigMap", core, "corev1", "cm"),
		plain("", "v1", "secrets", "Secret", core, "corev1"),
		withSpec("", "v1", "namespaces", "Namespace", core, "corev1", "ns"),
		withSpec("", "v1", "nodes", "Node", core, "corev1", "no"),
		withSpec("", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", core, "corev1", "pvc"),
		withSpec("", "v1", "persistentvolumes", "PersistentVolume", core, "corev1", "pv"),
		plain("", "v1", "serviceaccounts", "ServiceAccount", core, "corev1", "sa"),
		withSpec("apps", "v1", "deployments", "Deployment", apps, "appsv1", "deploy"),
		withSpec("apps", "v1", "statefulsets", "StatefulSet", apps, "appsv1", "sts"),
		withSpec("apps", "v1", "daemonsets", "DaemonSet", apps, "appsv1", "ds"),
		withSpec("apps", "v1", "replicasets", "ReplicaSet", apps, "appsv1", "rs"),
		withSpec("batch", "v1", "jobs", "Job", batch, "batchv1"),
		withSpec("batch", "v1", "cronjobs", "CronJob", batch, "batchv1", "cj"),
	}
}
