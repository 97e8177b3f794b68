// Package handlers holds the operator's handlers: plain functions marked
// with //kopf: comments, from which kopf-gen generates their typed kwargs and
// Register (zz_generated.kopf.go). It is a package of its own, not main, so
// that tests import it: handlers_test.go calls the functions directly, and
// test/e2e runs them in an operator against a real API server.
package handlers

import (
	"context"
	"fmt"

	"github.com/kopf-go/kopf"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	v1alpha1 "github.com/acme/widget-operator/api/v1alpha1"
)

// Create is called once for every new Widget; kw.Object is the object
// decoded as a v1alpha1.Widget (CreateKwargs is
// kopf.TypedChangingKwargs[v1alpha1.Widget]). What it returns is stored in
// the object's status under the handler's id, the function's name in Kopf's
// spelling: status.create.
//
// A handler that makes API calls of its own (creating a child ConfigMap,
// say) declares the rules they need with a marker such as //kopf:rbac
// groups=[""] resources=[configmaps] verbs=[create] next to the others:
// make generate adds them to config/rbac/role.yaml.
//
//kopf:on.create example.com/v1alpha1/widgets
func Create(ctx context.Context, kw CreateKwargs) (any, error) {
	msg := fmt.Sprintf("Hello, %s!", kw.Name)
	if kw.Object.Spec.Greeting != "" {
		msg = fmt.Sprintf("%s, %s!", kw.Object.Spec.Greeting, kw.Name)
	}
	kw.Logger.Info(msg)
	if err := ready(&kw.Base, "Greeted", msg); err != nil {
		return nil, err
	}
	return &v1alpha1.Greeting{Message: msg}, nil
}

// Update is called when a Widget changes (its spec, labels or annotations;
// not its status). kw.Diff lists the changes.
//
//kopf:on.update example.com/v1alpha1/widgets
func Update(ctx context.Context, kw UpdateKwargs) (any, error) {
	for _, change := range kw.Diff {
		kw.Logger.Info("Changed", "op", change.Op, "path", change.Path, "old", change.Old, "new", change.New)
	}
	if err := ready(&kw.Base, "Updated", fmt.Sprintf("%d changes", len(kw.Diff))); err != nil {
		return nil, err
	}
	return &v1alpha1.UpdateResult{Changes: len(kw.Diff)}, nil
}

// ready sets the Ready condition of the object: True, with the generation
// the handler saw as its observedGeneration (written with the handler's
// result, after it returns).
func ready(kw *kopf.ResourceKwargs, reason, message string) error {
	_, err := kw.SetCondition(metav1.Condition{Type: "Ready", Status: metav1.ConditionTrue, Reason: reason, Message: message})
	return err
}

// Delete is called when a Widget is deleted: the operator keeps a finalizer
// on every Widget, so the object stays until Delete succeeds.
//
//kopf:on.delete example.com/v1alpha1/widgets
func Delete(ctx context.Context, kw DeleteKwargs) error {
	kw.Logger.Info("Goodbye!")
	return nil
}
