// Package handlers uses every changing marker but on.field, every behaviour
// option and every selector form; package filters has the filters, typed
// and widgets the typed resources.
package handlers

import (
	"context"
	"errors"
)

// Resumed and Created is one function for two reasons, as in Kopf's
// 10-builtins: the stacked markers become one registration.
//
//kopf:on.resume v1/pods deleted=true
//kopf:on.create v1/pods
func StartKilling(ctx context.Context, kw StartKillingKwargs) error {
	kw.Logger.Info("=== Pod killing happens in 30s.")
	return nil
}

// StopKilling shows on.delete with optional=true and a result.
//
//kopf:on.delete pods optional=true
func StopKilling(ctx context.Context, kw StopKillingKwargs) (any, error) {
	return nil, nil
}

// Update shows every common option.
//
//kopf:on.update kopfexamples.v1.kopf.dev id=update-fn param=first errors=permanent timeout=1.5m retries=3 backoff=90
func Update(ctx context.Context, kw UpdateKwargs) (any, error) {
	if kw.Param != "first" {
		return nil, errors.New("unexpected param")
	}
	return map[string]any{"diff": len(kw.Diff)}, nil
}

// Several markers with distinct ids register one function several times.
//
//kopf:on.create kopfexamples.kopf.dev id=create-a param=a errors=ignored
//kopf:on.create kopf.dev/kopfexamples id=create-b param=b errors=temporary timeout=250ms
//kopf:on.delete KopfExample
func Many(ctx context.Context, kw ManyKwargs) error {
	return nil
}

// Resume shows a plural without group. It leaves its kwargs in the memo,
// for the tests to check that every field is copied.
//
//kopf:on.resume kopfexamples
func Resume(ctx context.Context, kw ResumeKwargs) (any, error) {
	kw.Memo["kwargs"] = kw
	return kw.Name, nil
}
