package kopf

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kopf-go/kopf/runtime/apply"
)

// Server-side apply for handlers (docs/apply.md): Apply and ApplyStatus
// send an apply configuration (client-go's, or one that kopf-gen --clients
// generates), an *unstructured.Unstructured or a map[string]any with the
// operator's client and the field owner FieldManager; see package
// runtime/apply.
//
//	cm := corev1ac.ConfigMap("child", kw.Namespace).WithData(map[string]string{"k": "v"})
//	if _, err := kopf.Apply(ctx, cm); err != nil { return nil, err }

type (
	// ApplyOption is an option of Apply and ApplyStatus: FieldOwner,
	// ForceOwnership, ConflictDelay, ConflictNotRetried.
	ApplyOption = apply.Option
	// ConflictError is an apply refused because other field managers own
	// its fields: their names and the fields. It is also a TemporaryError
	// (the handler is retried) unless ConflictNotRetried.
	ConflictError = apply.ConflictError
)

// FieldManager is the operator's field owner in server-side apply
// ("kopf"), the default of Apply and ApplyStatus.
const FieldManager = apply.FieldManager

// Apply applies obj (an apply configuration, *unstructured.Unstructured or
// map[string]any) to the object it names, created if absent, with the
// operator's shared client and the field owner FieldManager, not forced;
// it returns the object as stored. Its resource is found by discovery
// from obj's apiVersion and kind. A conflict is a *ConflictError and a
// TemporaryError; other errors are the API server's, wrapped.
// controller-runtime's client.Apply.
func Apply(ctx context.Context, obj any, opts ...ApplyOption) (*unstructured.Unstructured, error) {
	return apply.Apply(ctx, obj, opts...)
}

// ApplyStatus is Apply to the status subresource of obj's object (only
// obj's status is applied): controller-runtime's Status().Apply.
func ApplyStatus(ctx context.Context, obj any, opts ...ApplyOption) (*unstructured.Unstructured, error) {
	return apply.ApplyStatus(ctx, obj, opts...)
}

// FieldOwner sets the field manager of an apply (FieldManager by
// default): controller-runtime's client.FieldOwner.
func FieldOwner(name string) ApplyOption { return apply.FieldOwner(name) }

// ForceOwnership takes the fields that other managers own instead of a
// conflict (apply's force, off by default): controller-runtime's
// client.ForceOwnership.
func ForceOwnership() ApplyOption { return apply.ForceOwnership() }

// ConflictDelay is the delay of the retry that a conflict asks for (0:
// Kopf's default delay of a TemporaryError, 60 s).
func ConflictDelay(d time.Duration) ApplyOption { return apply.ConflictDelay(d) }

// ConflictNotRetried makes a conflict a plain *ConflictError, not a
// TemporaryError: the handler's errors= mode decides.
func ConflictNotRetried() ApplyOption { return apply.ConflictNotRetried() }
