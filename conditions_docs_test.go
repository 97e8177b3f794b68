package kopf_test

// The code of docs/handlers.md#conditions and of
// docs/generated-code.md#validation-in-the-crd, compiled (and the first
// run) here.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kopf-go/kopf"
)

// Deploy keeps a Widget's Deployment, and its Ready condition.
//
//kopf:on.create example.com/v1alpha1/widgets
//kopf:on.update example.com/v1alpha1/widgets
func Deploy(ctx context.Context, kw DeployKwargs) error {
	if err := ensureDeployment(ctx, kw.Object); err != nil {
		_, _ = kw.SetCondition(metav1.Condition{Type: "Ready", Status: metav1.ConditionFalse,
			Reason: "DeploymentFailed", Message: err.Error()})
		return kopf.NewTemporaryError(err.Error(), 10*time.Second) // retried; Ready stays False until then
	}
	_, err := kw.SetCondition(metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue,
		Reason: "Deployed", Message: "the Deployment is up to date"})
	return err
}

// ensureDeployment stands for the handler's work: it fails for a Widget
// without an image.
func ensureDeployment(_ context.Context, w *Widget) error {
	if w.Spec.Image == "" {
		return errors.New("spec.image is empty")
	}
	return nil
}

type DeployKwargs = kopf.TypedChangingKwargs[Widget]

// GadgetStatus is a status with conditions, as the scaffold declares them.
type GadgetStatus struct {
	// +listType=map
	// +listMapKey=type
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// WebAppSpec is the desired state of a WebApp.
//
// +kubebuilder:validation:XValidation:rule="self.replicas <= 100",message="a WebApp runs at most 100 replicas"
// +kubebuilder:validation:AtMostOneOf=command;args
type WebAppSpec struct {
	// +kubebuilder:validation:MinLength=1
	Image    string   `json:"image"`
	Replicas int32    `json:"replicas"`
	Command  []string `json:"command,omitempty"`
	Args     []string `json:"args,omitempty"`
}

// Deploy sets Ready to False with the error while it fails, and to True
// once it succeeds, with the generation it saw.
func ExampleResourceKwargs_SetCondition() {
	kw := DeployKwargs{Object: &Widget{}}
	kw.Body = kopf.Body{"metadata": map[string]any{"generation": int64(2)}}
	kw.Meta = kw.Body.Meta()
	kw.Logger = slog.New(slog.DiscardHandler)
	kw.Patch = kopf.Patch{}
	show := func(err error) {
		conds, _ := kw.Conditions()
		fmt.Printf("%v: %s=%s (%s) at generation %d\n", err, conds[0].Type, conds[0].Status, conds[0].Reason, conds[0].ObservedGeneration)
	}
	show(Deploy(context.Background(), kw))
	kw.Object.Spec.Image = "widget:1"
	show(Deploy(context.Background(), kw))
	// Output:
	// spec.image is empty: Ready=False (DeploymentFailed) at generation 2
	// <nil>: Ready=True (Deployed) at generation 2
}
