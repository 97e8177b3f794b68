// Package hierarchies is Kopf's hierarchies kit (kopf._kits.hierarchies):
// it prepares children objects before an operator creates them, so that
// they belong to the object being handled: an owner reference to it
// (AppendOwnerReference, RemoveOwnerReference), its labels (Label), a name
// after its name (HarmonizeNaming), its namespace (AdjustNamespace), or
// all of these at once (Adopt).
//
// The functions change the children in place and talk to no API server;
// the operator creates the children afterwards with any client.
//
// # Children
//
// The objs argument of every function is one child or several. A child is
//
//   - a typed object: a pointer implementing metav1.Object, such as
//     *corev1.Pod or a custom resource's Go type;
//   - an untyped object: *unstructured.Unstructured, map[string]any or
//     body.Body (kopf.Body);
//   - an apply configuration: a pointer to a struct that embeds
//     *metav1ac.ObjectMetaApplyConfiguration, as client-go's
//     (*appsv1ac.DeploymentApplyConfiguration) and applyconfiguration-gen's
//     do; its metadata is created when absent, and empty fields stay
//     absent (nil pointers), as in untyped objects;
//
// and several children are a slice or an array of children (of any
// element type: []*corev1.Pod, []corev1.Pod, []map[string]any, []any), a
// pointer to one, a list object (*corev1.PodList,
// *unstructured.UnstructuredList, any list that meta.EachListItem
// accepts), or an iterator (iter.Seq of children), nested at any depth, as
// Kopf accepts any iterable. A nil child is skipped, as Kopf skips None.
// Anything else is an error wrapping ErrUnsupported, and then no child is
// changed: the children are all checked before the first change.
//
// A typed value that is not addressable (a corev1.Pod in a []any, or an
// array passed by value) cannot be changed in place, and is an error.
//
// # Nested objects
//
// Label (and Adopt) can also label objects nested in the children, such
// as the pod template of a Deployment or a Job: Nested{"spec.template"}.
// For untyped children, a path is a chain of keys of maps, exactly as in
// Kopf. For typed children, it is a chain of the Go fields' JSON names
// (spec.template of an *appsv1.Deployment is its Spec.Template), through
// pointers, interfaces and maps with string keys, as Kopf follows the
// attributes of the kubernetes client's models. The object at the end of
// a path is labelled as a child: a struct with metadata (whose address is
// a metav1.Object, such as corev1.PodTemplateSpec) or a map[string]any.
//
// As in Kopf, absent structures are skipped and never created: a missing
// key, an unknown field name, a nil pointer or a null value; but a
// path through something that is not an object (a string, a list) is an
// error. A typed struct field is never absent, so a Deployment's
// spec.template is always labelled, even when empty.
//
// # Differences from Kopf
//
//   - The owner, the labels, the name and the namespace are explicit
//     arguments: Go has no "current object" to take them from when they
//     are omitted. In a handler, pass OwnerOfBody(kw.Body) (or
//     OwnerOf(kw.Object)), kw.Labels, kw.Name, kw.Namespace.
//   - The functions return errors where Kopf raises TypeError or
//     LookupError, and check their input before changing anything; an
//     owner reference needs the owner's apiVersion, kind, name and uid (the
//     API server rejects it otherwise; Kopf leaves the absent ones out and
//     lets the API server reject the child).
//   - Controller and BlockOwnerDeletion are true or false; Kopf also
//     accepts None, which leaves the field out (the API server then reads
//     it as false).
//   - A cluster-scoped owner's namespace is empty: AdjustNamespace with
//     an empty namespace removes an untyped child's metadata.namespace
//     where Kopf writes null into it (the same to the API server).
//   - Labels cannot be null: Kopf's None label values (removals in a
//     patch) have no equivalent in map[string]string.
package hierarchies
