package kopf_test

// The code of docs/apply.md, compiled here.

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"

	"github.com/kopf-go/kopf"
)

// ensureConfig applies the handled object's child ConfigMap, then a field
// of the object's own status, both by server-side apply as "kopf".
func ensureConfig(ctx context.Context, kw *kopf.ChangingKwargs) error {
	child := corev1ac.ConfigMap(kw.Name+"-config", kw.Namespace).
		WithLabels(map[string]string{"app": kw.Name}).
		WithData(map[string]string{"greeting": "hello"})
	if _, err := kopf.Apply(ctx, child); err != nil {
		return err // a conflict is a TemporaryError: the handler is retried
	}
	status := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kopf.dev/v1", "kind": "KopfExample",
		"metadata": map[string]any{"name": kw.Name, "namespace": kw.Namespace},
		"status":   map[string]any{"config": map[string]any{"name": kw.Name + "-config"}},
	}}
	_, err := kopf.ApplyStatus(ctx, status)
	return err
}

// registerConfig registers ensureConfig on the creation of KopfExamples.
func registerConfig(r *kopf.Registry) error {
	return r.AddChanging(kopf.ChangingHandler{
		ID:       "ensure_config",
		Selector: kopf.Selector{Group: "kopf.dev", Version: "v1", Name: "kopfexamples"},
		Reasons:  []kopf.Reason{kopf.ReasonCreate, kopf.ReasonResume},
		Fn: func(ctx context.Context, kw *kopf.ChangingKwargs) (any, error) {
			return nil, ensureConfig(ctx, kw)
		},
	})
}

// applyConfig applies the child as "my-operator", a conflict retried
// after 5 seconds and logged.
func applyConfig(ctx context.Context, child *corev1ac.ConfigMapApplyConfiguration) error {
	_, err := kopf.Apply(ctx, child,
		kopf.FieldOwner("my-operator"),    // instead of "kopf"
		kopf.ConflictDelay(5*time.Second)) // the retry's delay after a conflict
	var conflict *kopf.ConflictError
	if errors.As(err, &conflict) {
		slog.WarnContext(ctx, "the config is not ours", "managers", conflict.Managers, "fields", conflict.Fields)
	}
	return err
}

// takeConfig applies the child and takes the fields that other managers
// own (no conflict).
func takeConfig(ctx context.Context, child *corev1ac.ConfigMapApplyConfiguration) error {
	_, err := kopf.Apply(ctx, child, kopf.ForceOwnership())
	return err
}

var _, _, _ = registerConfig, applyConfig, takeConfig
