// Package typed declares a typed resource and serves it, and built-in
// resources, with typed kwargs.
package typed

import (
	"context"
	"errors"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kopf-go/kopf"
)

// KopfExample is the Go type of kopfexamples, as kubebuilder would write
// it; its CRD lets the API server select on spec.field (kopf-gen declares
// it to the runtime, which may then infer a field selector).
//
// +kubebuilder:selectablefield:JSONPath=.spec.field
// +kubebuilder:selectablefield:JSONPath=`.spec['a.b']`
//
//kopf:resource kopf.dev/v1/kopfexamples
type KopfExample struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec   KopfExampleSpec   `json:"spec,omitempty"`
	Status KopfExampleStatus `json:"status,omitempty"`
}

// KopfExampleSpec is the spec of a KopfExample.
type KopfExampleSpec struct {
	Field    string            `json:"field,omitempty"`
	Items    []string          `json:"items,omitempty"`
	Replicas int32             `json:"replicas"`
	Extra    map[string]string `json:"extra,omitempty"`
	Nested   *Nested           `json:"nested,omitempty"`
	Started  metav1.Time       `json:"started,omitzero"`
	Ignored  string            `json:"-"`
}

// Nested is a part of a KopfExampleSpec.
type Nested struct {
	Depth int `json:"depth"`
}

// KopfExampleStatus is the status of a KopfExample.
type KopfExampleStatus struct {
	Message string         `json:"message,omitempty"`
	Raw     map[string]any `json:"raw,omitempty"`
}

// Create gets kw.Object, its typed Spec in kw.Object.Spec; the field= paths below go
// through a pointer, a map, a map of any, metadata and a type that decodes
// itself.
//
//kopf:on.create kopf.dev/v1/kopfexamples
//kopf:on.update kopfexamples field=spec.nested.depth id=depth
//kopf:on.update KopfExample field=spec.extra.anything id=extra
//kopf:on.update kopfexample field=status.raw.a.b.c id=raw
//kopf:on.update kopfexamples.v1.kopf.dev field=metadata.labels.app id=label
//kopf:on.update kopf.dev/kopfexamples field=spec.started.whatever id=started
func Create(ctx context.Context, kw CreateKwargs) (any, error) {
	if kw.Object.Name != kw.Name {
		return nil, errors.New("the object was not decoded")
	}
	return map[string]any{"field": kw.Object.Spec.Field, "replicas": kw.Object.Spec.Replicas, "message": kw.Object.Status.Message}, nil
}

// Watch is a typed event handler whose when= takes its own kwargs.
//
//kopf:on.event kopfexamples field=spec.replicas value=fn:isPositive when=hasItems
func Watch(ctx context.Context, kw WatchKwargs) error {
	kw.Memo["object"] = kw.Object
	return nil
}

// Pods is typed with k8s.io/api/core/v1, and its field checked against it.
//
//kopf:on.event v1/pods field=spec.nodeName when=isScheduled
//kopf:on.event po id=all
func Pods(ctx context.Context, kw PodsKwargs) error {
	kw.Memo["node"] = kw.Object.Spec.NodeName
	return nil
}

// Scale is typed with k8s.io/api/apps/v1.
//
//kopf:on.update apps/v1/deployments field=spec.replicas new=fn:isPositive when=isRolling
//kopf:on.update deployments.v1.apps field=spec.template.metadata.labels.app id=template
func Scale(ctx context.Context, kw ScaleKwargs) (any, error) {
	return *kw.Object.Spec.Replicas, nil
}

// Config has an Object but no typed spec and status: ConfigMaps have none.
//
//kopf:on.create configmaps labels={app: PRESENT} when=hasName
func Config(ctx context.Context, kw ConfigKwargs) error {
	_ = kw.Object.Data
	return nil
}

// Mixed serves two typed resources, so its kwargs are untyped.
//
//kopf:on.create pods id=mixed-pods
//kopf:on.create kopfexamples id=mixed-examples
func Mixed(ctx context.Context, kw MixedKwargs) error {
	_ = kw.Spec["field"]
	return nil
}

func isPositive(value any) bool {
	switch v := value.(type) {
	case int64:
		return v > 0
	case float64:
		return v > 0
	}
	return false
}

// isRolling takes the kind's typed kwargs, not Scale's own alias of them.
func isRolling(kw kopf.TypedChangingKwargs[appsv1.Deployment]) bool {
	return kw.Object.Spec.Strategy.Type != appsv1.RecreateDeploymentStrategyType
}

// hasName takes the body-only kwargs of a typed handler.
func hasName(kw kopf.ChangingKwargs) bool { return kw.Name != "" }

func hasItems(kw WatchKwargs) bool { return len(kw.Object.Spec.Items) > 0 }

func isScheduled(kw kopf.EventKwargs) bool { return kw.Spec["nodeName"] != nil }
