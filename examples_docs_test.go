package kopf_test

// The code shown in docs/ (handlers.md, kwargs.md, filters.md, events.md)
// that is no part of an example, compiled here:
// TestDocsShowCompiledCode checks that every Go block of those pages is a
// verbatim part of this file, of another test file of this package, or of
// an example in examples/ (the pages' ports of Kopf's examples, which
// print values as Kopf does with the pyfmt package). The aliases at the
// end of this file stand for what kopf-gen generates beside the handlers.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kopf-go/kopf"
)

// Widget is a resource with a Go type: its handlers get it decoded.
//
//kopf:resource example.com/v1alpha1/widgets
type Widget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              WidgetSpec   `json:"spec,omitempty"`
	Status            WidgetStatus `json:"status,omitempty"`
}

type WidgetSpec struct {
	Image    string `json:"image,omitempty"`
	Replicas int    `json:"replicas,omitempty"`
}

type WidgetStatus struct {
	Ready bool `json:"ready,omitempty"`
}

// ScaleWidget runs when spec.replicas changes and grows.
//
//kopf:on.field example.com/widgets field=spec.replicas when=scaledUp
func ScaleWidget(ctx context.Context, kw ScaleWidgetKwargs) (any, error) {
	// Typed: kw.Object, kw.Old and kw.New are *Widget, whole objects.
	from, to := kw.Old.Spec.Replicas, kw.New.Spec.Replicas
	// Untyped, as in Kopf: with field=, the field's own old and new values.
	kw.Logger.Info(fmt.Sprintf("spec.replicas: %v -> %v", kw.Changing.Old, kw.Changing.New))

	// The handler's copy: changing it changes nothing in the cluster.
	kw.Object.Spec.Replicas = 0
	// The patch is applied after the handler returns.
	kw.Patch.Spec()["image"] = "widget:" + kw.New.Spec.Image

	return map[string]any{"from": from, "to": to}, nil // status.scale_widget/spec.replicas
}

// scaledUp is ScaleWidget's when= callback: it gets the handler's kwargs.
func scaledUp(kw ScaleWidgetKwargs) bool {
	return kw.Old != nil && kw.New != nil && kw.New.Spec.Replicas > kw.Old.Spec.Replicas
}

// A typed handler is a plain function: a test calls it with kwargs built by
// hand (Object, Old and New set, as the reactor sets them).
func ExampleTypedChangingKwargs() {
	old := &Widget{Spec: WidgetSpec{Image: "v1", Replicas: 1}}
	current := &Widget{Spec: WidgetSpec{Image: "v1", Replicas: 3}}
	kw := ScaleWidgetKwargs{
		Changing: kopf.ChangingKwargs{
			Base: kopf.ResourceKwargs{
				Patch:  kopf.Patch{},
				Logger: slog.New(slog.DiscardHandler),
			},
			Old: 1,
			New: 3,
		},
		Object: current, Old: old, New: current,
	}
	if scaledUp(kw) {
		result, err := ScaleWidget(context.Background(), kw)
		fmt.Println(result, err, kw.Patch)
	}
	// Output: map[from:1 to:3] <nil> map[spec:map[image:widget:v1]]
}

// Provision sets up what an object needs, on its creation and for objects
// found when the operator starts.
//
//kopf:on.create kopfexamples id=provision timeout=10m retries=5 backoff=30s
//kopf:on.resume kopfexamples id=provision timeout=10m retries=5 backoff=30s
func Provision(ctx context.Context, kw ProvisionKwargs) (any, error) {
	kw.Logger.Info(fmt.Sprintf("Provisioning (%s, attempt %d)", kw.Reason, kw.Retry+1))
	return map[string]any{"database": kw.Name + "-db"}, nil // status.provision.database
}

// Deprovision holds the object with a finalizer until it succeeds.
//
//kopf:on.delete kopfexamples
func Deprovision(ctx context.Context, kw DeprovisionKwargs) error {
	kw.Logger.Info("Deprovisioning " + kw.Name)
	return nil
}

// Announce posts Kubernetes Events about the object it handles.
//
//kopf:on.create kopfexamples
func Announce(ctx context.Context, kw AnnounceKwargs) error {
	kopf.Info(ctx, kw.Body, "Announced", "The object is seen.")
	if _, ok := kw.Spec["field"]; !ok {
		kopf.Warn(ctx, kw.Body, "NoField", "spec.field is missing.")
	}
	if err := validate(kw.Spec); err != nil {
		kopf.Exception(ctx, kw.Body, "Invalid", err, "The spec is invalid:")
		return kopf.NewPermanentError("invalid spec: %v", err)
	}
	kopf.Event(ctx, kw.Body, "Normal", "Validated")
	return nil
}

func validate(spec kopf.Spec) error {
	if _, ok := spec["items"].([]any); !ok {
		return errors.New("spec.items is not a list")
	}
	return nil
}

// isOwner is a label callback: an absent label gives "", as an empty one.
func isOwner(value string) bool { return value == "team-a" }

// isLarge is a value callback: an absent field gives nil.
func isLarge(value any) bool {
	n, ok := value.(float64) // JSON numbers are float64
	return ok && n > 10
}

// hasOwner tells an absent label from an empty one.
func hasOwner(kw kopf.ChangingKwargs) bool {
	_, ok := kw.Labels["owner"]
	return ok
}

// Filtered runs only for objects that pass every filter of its marker.
//
//kopf:on.update kopfexamples labels={app: web, owner: fn:isOwner, canary: ABSENT} field=spec.replicas new=fn:isLarge when=hasOwner
func Filtered(ctx context.Context, kw FilteredKwargs) error {
	kw.Logger.Info(fmt.Sprintf("scaled to %v", kw.New))
	return nil
}

// CreateItems registers a sub-handler with options and a result per item.
//
//kopf:on.create kopfexamples
func CreateItems(ctx context.Context, kw CreateItemsKwargs) error {
	items, _ := kw.Spec["items"].([]any)
	for _, it := range items {
		item := fmt.Sprint(it)
		err := kopf.Subhandler(ctx, kopf.ChangingHandler{
			ID: item, // create_items/item1, ...
			Fn: kopf.ChangingFunc(func(ctx context.Context, kw kopf.ChangingKwargs) (any, error) {
				return map[string]any{"done": true}, nil // status["create_items/item1"]
			}),
			Retries: 3,
			Backoff: 10 * time.Second,
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// What kopf-gen generates beside the handlers above.
type (
	ScaleWidgetKwargs = kopf.TypedChangingKwargs[Widget]
	ProvisionKwargs   = kopf.ChangingKwargs
	DeprovisionKwargs = kopf.ChangingKwargs
	AnnounceKwargs    = kopf.ChangingKwargs
	FilteredKwargs    = kopf.ChangingKwargs
	CreateItemsKwargs = kopf.ChangingKwargs
)
