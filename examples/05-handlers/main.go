// Command handlers is the Go port of Kopf's 05-handlers example: several
// handlers of each cause, run in the order of their registration (here, the
// order of the functions in this file), and a field handler for spec.field
// that gets that field's old and new values.
//
// Two resume handlers run for objects found when the operator starts, two
// create handlers for new objects, one update handler (with the old and new
// essence and the diff), two delete handlers (which hold objects with
// Kopf's finalizer until they have run) and one field handler (id
// field_fn/spec.field) whenever spec.field changes.
//
// The handlers' ids are Kopf's: a handler's default id is its function's
// name in Python's spelling, so FieldFn is field_fn and CreateFn_1, whose
// underscore before the digit is kept, is Kopf's create_fn_1.
//
// Run it against a cluster with the KopfExample CRD (../crd.yaml):
//
//	go run . run -A --standalone --verbose
package main

//go:generate go tool kopf-gen

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/kopf-go/kopf"
	"github.com/kopf-go/kopf/pyfmt"
)

// ResumeFn_1 runs for every object found when the operator starts.
//
//kopf:on.resume kopfexamples
func ResumeFn_1(ctx context.Context, kw ResumeFn_1Kwargs) error {
	kw.Logger.Info("RESUMED 1st")
	return nil
}

// CreateFn_1 runs first for every new object.
//
//kopf:on.create kopfexamples
func CreateFn_1(ctx context.Context, kw CreateFn_1Kwargs) error {
	kw.Logger.Info("CREATED 1st")
	return nil
}

// ResumeFn_2 runs after ResumeFn_1.
//
//kopf:on.resume kopfexamples
func ResumeFn_2(ctx context.Context, kw ResumeFn_2Kwargs) error {
	kw.Logger.Info("RESUMED 2nd")
	return nil
}

// CreateFn_2 runs after CreateFn_1.
//
//kopf:on.create kopfexamples
func CreateFn_2(ctx context.Context, kw CreateFn_2Kwargs) error {
	kw.Logger.Info("CREATED 2nd")
	return nil
}

// UpdateFn runs for every change of an object's essence, with the essence
// before and after the change (logged as JSON) and the diff between them
// (logged as Kopf logs diffs).
//
//kopf:on.update kopfexamples
func UpdateFn(ctx context.Context, kw UpdateFnKwargs) error {
	oldJSON, err := json.Marshal(kw.Old)
	if err != nil {
		return err
	}
	newJSON, err := json.Marshal(kw.New)
	if err != nil {
		return err
	}
	kw.Logger.Info("UPDATED")
	kw.Logger.Info(fmt.Sprintf("UPDATED old: %s", oldJSON))
	kw.Logger.Info(fmt.Sprintf("UPDATED new: %s", newJSON))
	kw.Logger.Info(fmt.Sprintf("UPDATED diff: %s", kw.Diff))
	return nil
}

// DeleteFn_1 runs first when an object is deleted.
//
//kopf:on.delete kopfexamples
func DeleteFn_1(ctx context.Context, kw DeleteFn_1Kwargs) error {
	kw.Logger.Info("DELETED 1st")
	return nil
}

// DeleteFn_2 runs after DeleteFn_1.
//
//kopf:on.delete kopfexamples
func DeleteFn_2(ctx context.Context, kw DeleteFn_2Kwargs) error {
	kw.Logger.Info("DELETED 2nd")
	return nil
}

// FieldFn runs whenever spec.field changes, with Old and New reduced to
// that field (nil when it is absent).
//
//kopf:on.field kopfexamples field=spec.field
func FieldFn(ctx context.Context, kw FieldFnKwargs) error {
	kw.Logger.Info(fmt.Sprintf("FIELD CHANGED: %s -> %s", pyfmt.Str(kw.Old), pyfmt.Str(kw.New)))
	return nil
}

func main() {
	os.Exit(kopf.Main(Register))
}
