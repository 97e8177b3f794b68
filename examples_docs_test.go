package kopf_test

// The code shown in docs/ (handlers.md, kwargs.md, filters.md, events.md,
// daemons.md, timers.md, indexing.md), compiled here:
// TestDocsShowCompiledCode checks that every Go block of those pages is a
// verbatim part of this file, of another test file of this package, or of
// an example in examples/. The aliases at the end of this file stand for
// what kopf-gen generates beside the handlers.
//
// The pages' ports of Kopf's examples are here rather than in examples/
// where the examples render values as Python's repr() and pprint do (so
// that their log lines are Kopf's, byte for byte) with helpers of their
// own: the pages show plain fmt instead, so that pasted code compiles.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
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

// FieldFn runs whenever spec.field changes, with Old and New reduced to
// that field (nil when it is absent).
//
//kopf:on.field kopfexamples field=spec.field
func FieldFn(ctx context.Context, kw FieldFnKwargs) error {
	kw.Logger.Info(fmt.Sprintf("FIELD CHANGED: %v -> %v", kw.Old, kw.New))
	return nil
}

// BackgroundSync checks kw.Stopped, as Kopf's sync daemons must. It exits
// after 3 attempts and then 30 seconds of running (unless stopped).
//
//kopf:daemon kopfexamples backoff=3
func BackgroundSync(ctx context.Context, kw BackgroundSyncKwargs) error {
	if kw.Retry < 3 {
		kw.Patch.Status()["message"] = fmt.Sprintf("Failed %d times.", kw.Retry+1)
		return kopf.NewTemporaryError("Simulated failure.", time.Second)
	}

	started := time.Now()
	for kw.Stopped.Err() == nil && time.Since(started) <= 30*time.Second {
		kw.Logger.Info(fmt.Sprintf("=> Ping from a sync daemon: field=%v, retry=%d", kw.Spec["field"], kw.Retry))
		select {
		case <-kw.Stopped.Done():
		case <-time.After(5 * time.Second):
		}
	}

	kw.Patch.Status()["message"] = "Accompanying is finished."
	return nil
}

// BackgroundAsync runs forever (until stopped, i.e. its ctx is cancelled),
// yet fails to start for the first 3 times. It ignores kw.Stopped, as
// Kopf's async daemon does: cancellation_backoff=1.0 gives it a second to
// exit on its own before its ctx is cancelled, and cancellation_timeout=0.5
// half a second more before the operator gives up on it.
//
//kopf:daemon kopfexamples backoff=3 cancellation_backoff=1.0 cancellation_timeout=0.5 annotations={someannotation: somevalue}
func BackgroundAsync(ctx context.Context, kw BackgroundAsyncKwargs) error {
	if kw.Retry < 3 {
		return kopf.NewTemporaryError("Simulated failure.", time.Second)
	}

	for {
		kw.Logger.Info(fmt.Sprintf("=> Ping from an async daemon: field=%v", kw.Spec["field"]))
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(5 * time.Second):
		}
	}
}

// EveryFewSecondsSync runs 5 seconds after the last change of the object,
// then every 2 seconds.
//
//kopf:timer kopfexamples idle=5 interval=2
func EveryFewSecondsSync(ctx context.Context, kw EveryFewSecondsSyncKwargs) error {
	kw.Logger.Info(fmt.Sprintf("Ping from a sync timer: field=%v", kw.Spec["field"]))
	return nil
}

// EveryFewSecondsAsync runs 10 seconds after the last change of the
// object, then every 4 seconds.
//
//kopf:timer kopfexamples idle=10 interval=4
func EveryFewSecondsAsync(ctx context.Context, kw EveryFewSecondsAsyncKwargs) error {
	kw.Logger.Info(fmt.Sprintf("Ping from an async timer: field=%v", kw.Spec["field"]))
	return nil
}

// Intervalled prints the index by_label and stores the running pods of
// two namespaces in the object's status.running-pods.
//
//kopf:timer kex interval=5
func Intervalled(ctx context.Context, kw IntervalledKwargs) error {
	for key, store := range kw.ByLabel.All() {
		fmt.Printf("%v: %v\n", key, store.Values())
	}
	running := []string{}
	for key, store := range kw.IsRunning.All() {
		ns, name := key[0], key[1]
		if ns != "kube-system" && ns != "default" {
			continue
		}
		// Kopf's example tests the store itself, which is true when it
		// is not empty; the values say whether the pod runs.
		if slices.Contains(store.Values(), true) {
			running = append(running, ns+"::"+name)
		}
	}
	slices.Sort(running)
	kw.Patch.Status()["running-pods"] = running
	return nil
}

// Indices are the indices of examples/16-indexing, as kopf-gen generates
// them.
type Indices struct {
	IsRunning kopf.Index[[2]string, bool]
	ByLabel   kopf.Index[[2]string, string]
}

// IntervalledKwargs are Intervalled's kwargs, as kopf-gen generates them.
type IntervalledKwargs struct {
	kopf.TimerKwargs
	Indices
}

// What kopf-gen generates beside the handlers above.
type (
	FieldFnKwargs              = kopf.ChangingKwargs
	BackgroundSyncKwargs       = kopf.DaemonKwargs
	BackgroundAsyncKwargs      = kopf.DaemonKwargs
	EveryFewSecondsSyncKwargs  = kopf.TimerKwargs
	EveryFewSecondsAsyncKwargs = kopf.TimerKwargs
	ScaleWidgetKwargs          = kopf.TypedChangingKwargs[Widget]
	ProvisionKwargs            = kopf.ChangingKwargs
	DeprovisionKwargs          = kopf.ChangingKwargs
	AnnounceKwargs             = kopf.ChangingKwargs
	FilteredKwargs             = kopf.ChangingKwargs
	CreateItemsKwargs          = kopf.ChangingKwargs
)
