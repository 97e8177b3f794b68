// Package filters uses every filter of the changing and event markers, on
// an untyped resource, with every form of callback.
package filters

import (
	"context"
	"strings"

	"github.com/kopf-go/kopf"
)

// Labelled shows every form of label and annotation filter: bare and
// quoted literals (a quoted PRESENT is the string), PRESENT, ABSENT and both
// forms of string callbacks.
//
//kopf:on.create kopf.dev/v1/kopfexamples labels={app: web, "example.com/tier": "front end", canary: ABSENT, env: PRESENT, owner: fn:isOwner, stage: fn:hasStage, word: "PRESENT"} annotations={note: fn:hasNote, flag: true, audit: fn:unaudited}
func Labelled(ctx context.Context, kw LabelledKwargs) error {
	return nil
}

// Fields shows on.field: the id gets the dotted field, old= and new= check
// either side of the change, and when= takes the handler's own kwargs. A
// field given as a list may hold keys with dots.
//
//kopf:on.field kopfexamples field=spec.replicas old=1 new=fn:isLarge when=isReady
//kopf:on.field kopfexamples field=[metadata, annotations, "example.com/mode"] value="on" id=mode param=annotation
func Fields(ctx context.Context, kw FieldsKwargs) (any, error) {
	return kw.New, nil
}

// Values shows the literals of value= (JSON scalars) and when= taking the
// kind's kwargs type (kopf.ChangingKwargs), by value.
//
//kopf:on.create kopfexamples field=spec.flag value=true id=flag
//kopf:on.create kopfexamples field=spec.ratio value=0.5 id=ratio
//kopf:on.create kopfexamples field=spec.count value=-3 id=count
//kopf:on.resume kopfexamples field=spec.word value=hello when=fn:isChanging
//kopf:on.delete kopfexamples field=spec.gone value=ABSENT optional=true
//kopf:on.update kopfexamples field=spec.any value=fn:isAnything errors=ignored
func Values(ctx context.Context, kw ValuesKwargs) error {
	return nil
}

// Implicit shows field= without value=: the field must be present, as in
// Kopf. Stacked markers with equal filters share one registration.
//
//kopf:on.resume kopfexamples field=spec.field labels={app: web}
//kopf:on.create kopfexamples field=spec.field labels={app: web}
func Implicit(ctx context.Context, kw ImplicitKwargs) error {
	return nil
}

// Watch shows on.event with filters and both forms of when=. It leaves its
// kwargs in the memo, for the tests to check that every field is copied.
//
//kopf:on.event kopfexamples labels={app: PRESENT} annotations={skip: ABSENT} when=isAdded param=p
//kopf:on.event kopfexamples field=spec.node value=fn:isNode id=nodes when=isListed
func Watch(ctx context.Context, kw WatchKwargs) error {
	kw.Memo["kwargs"] = kw
	return nil
}

// Everything shows Kopf's EVERYTHING selector: every watchable resource
// but Events, and of one group.
//
//kopf:on.event *
//kopf:on.event kopf.dev/* id=everythingKopf
func Everything(ctx context.Context, kw EverythingKwargs) error { return nil }

func isOwner(value string) bool { return strings.HasPrefix(value, "team-") }

func hasNote(value string, kw kopf.ResourceKwargs) bool { return value != "" && kw.Name != "" }

// hasStage tells an absent label (nil, Kopf's None) from an empty one.
func hasStage(value *string) bool { return value != nil }

func unaudited(value *string, kw kopf.ResourceKwargs) bool { return value == nil && kw.Name != "" }

func isLarge(value any, kw kopf.ResourceKwargs) bool {
	n, ok := value.(float64)
	return ok && n > 10 && kw.Name != ""
}

func isAnything(value any) bool { return value != nil }

func isNode(value any) bool { s, _ := value.(string); return strings.HasPrefix(s, "node-") }

func isReady(kw FieldsKwargs) bool { return kw.Status["ready"] == true }

func isChanging(kw kopf.ChangingKwargs) bool { return kw.Reason != "" }

func isAdded(kw WatchKwargs) bool { return kw.Type == "ADDED" }

func isListed(kw kopf.EventKwargs) bool { return kw.Type == "" }
