// Package admission is a golden package of admission webhook handlers
// (//kopf:on.validate, //kopf:on.mutate) with every option, body-only and
// typed.
package admission

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/kopf-go/kopf"
)

// Authhook warns about who calls the webhook: every operation, the
// default options.
//
//kopf:on.validate kopfexamples
func Authhook(ctx context.Context, kw AuthhookKwargs) error {
	kw.Warn("Accessing as user-agent: " + kw.Headers["User-Agent"])
	return nil
}

// Validate1 refuses a field value, but not in dry runs.
//
//kopf:on.validate kopf.dev/v1/kopfexamples operations=[CREATE, UPDATE] side_effects=true
func Validate1(ctx context.Context, kw Validate1Kwargs) error {
	if !kw.DryRun && kw.Spec["field"] == "wrong" {
		return kopf.NewAdmissionError("Meh! I don't like it. Change the field.", 0)
	}
	return nil
}

// Validate2 refuses a value of a field, with a code.
//
//kopf:on.validate kopfexamples field=spec.field value=not-allowed
func Validate2(ctx context.Context, kw Validate2Kwargs) error {
	return kopf.NewAdmissionError("I'm too lazy anyway. Go away!", 555)
}

// ValidateSubresources checks the object and all its subresources.
//
//kopf:on.validate kopfexamples subresource=* persistent=true ignore_failures=true
func ValidateSubresources(ctx context.Context, kw ValidateSubresourcesKwargs) error {
	if kw.Subresource == "status" && kw.Status["field"] != kw.Spec["field"] {
		return kopf.NewAdmissionError("status.field MUST be equal to spec.field!", 0)
	}
	return nil
}

// Mutate1 injects a field into labelled objects.
//
//kopf:on.mutate kopfexamples labels={somelabel: somevalue, other: PRESENT, owner: fn:isOwner}
func Mutate1(ctx context.Context, kw Mutate1Kwargs) error {
	spec, _ := kw.Patch["spec"].(map[string]any)
	if spec == nil {
		spec = map[string]any{}
		kw.Patch["spec"] = spec
	}
	spec["injected"] = 123
	return nil
}

// Deletion is a mutating handler of deletions, which Kopf calls only when
// DELETE is its only operation; param= tells it apart.
//
//kopf:on.mutate kopfexamples operations=[DELETE] id=on-deletion param=strict when=notProtected
func Deletion(ctx context.Context, kw DeletionKwargs) error {
	if kw.Param == "strict" && kw.Operation == "DELETE" {
		kw.Warn("deleted")
	}
	return nil
}

// PodImages is typed: kw.Object is a *corev1.Pod.
//
//kopf:on.validate v1/pods operations=[CREATE] when=hasContainers annotations={example.com/checked: ABSENT}
//kopf:on.validate v1/pods operations=[UPDATE] id=pod_images_on_update field=spec.nodeName value=fn:isNode
func PodImages(ctx context.Context, kw PodImagesKwargs) error {
	for _, c := range kw.Object.Spec.Containers {
		if c.Image == "" {
			return fmt.Errorf("container %s has no image", c.Name)
		}
	}
	return nil
}

// PodDefaults mutates pods, with a when= callback of the body-only kwargs.
//
//kopf:on.mutate pods when=isScheduled
func PodDefaults(ctx context.Context, kw PodDefaultsKwargs) error {
	if kw.Object.Spec.ServiceAccountName == "" {
		kw.Patch["spec"] = map[string]any{"serviceAccountName": "default"}
	}
	return nil
}

func isOwner(value string) bool { return value != "" }

func notProtected(kw DeletionKwargs) bool { return kw.Labels["protected"] != "true" }

func hasContainers(kw kopf.TypedAdmissionKwargs[corev1.Pod]) bool {
	return len(kw.Object.Spec.Containers) > 0
}

func isNode(value any) bool { return value != nil }

func isScheduled(kw kopf.AdmissionKwargs) bool { return kw.Operation != "CONNECT" }
