// Package apply is server-side apply for handlers (kopf.Apply,
// kopf.ApplyStatus): it sends an object as an apply patch
// (application/apply-patch+yaml) with a field owner, to the object or to
// its status subresource, with the operator's shared client.
//
// What it applies: any apply configuration (runtime.ApplyConfiguration:
// client-go's k8s.io/client-go/applyconfigurations for built-in kinds,
// those that kopf-gen --clients generates with applyconfiguration-gen),
// an *unstructured.Unstructured or a map[string]any. Each of them is
// serialised to JSON as it is (apiVersion, kind, metadata and the fields
// given, nothing else). A typed object such as a *corev1.Pod is refused:
// its zero fields would be applied too, and owned.
//
// Why one generic function, not a client per type (the spirit of
// client-go's gentype): apply configurations carry their apiVersion and
// kind, so the resource is found from them by a REST mapper over the
// operator's discovery (client-go's deferred discovery mapper, reset once
// when a kind is not found, e.g. a CRD created since), and the patch goes
// through one dynamic client. Both are made on first use and shared by
// the operator's handlers (apiserver.Client), with its credentials and
// limits. The answer is the object as the API server stores it, unstructured
// (runtime.DefaultUnstructuredConverter makes it typed).
//
// The field owner is FieldManager ("kopf", the same as the operator's own
// applies of its webhook configurations) unless FieldOwner says otherwise;
// Force (ForceOwnership) is off unless asked for. A conflict with other
// field managers is a *ConflictError naming them and the fields, which is
// also a *execution.TemporaryError (the handler is retried) unless
// ConflictNotRetried; other errors are returned wrapped (%w), so that
// apierrors' predicates still work.
//
// The runtime's own writes (Kopf's progress, diff-base, results) stay
// merge and JSON patches: this package is for handlers only.
package apply
