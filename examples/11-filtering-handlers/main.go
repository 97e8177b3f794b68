// Command filtering is the Go port of Kopf's 11-filtering-handlers
// example: creation handlers filtered by the object's labels, annotations,
// a when= callback, and the value of a field, and an update handler
// filtered by a field's old and new values. Each handler logs one line of
// its own, so the log tells which filters matched Kopf's example object
// (../obj.yaml: label somelabel=somevalue, annotation
// someannotation=somevalue, spec.field=value).
//
// Besides Kopf's handlers, this port has the counterpart of each that must
// not match (an exact value that differs, PRESENT of an absent key, ABSENT
// of a present one, a callback that says no, ...), so that both sides of
// every filter are seen working. Kopf's daemon filtered by
// field=spec.field value=value runs while spec.field is value, and stops
// when the field changes.
//
// Run it against a cluster with the KopfExample CRD (../crd.yaml):
//
//	go run . run -A --standalone --verbose
package main

//go:generate go tool kopf-gen

import (
	"context"
	"os"
	"time"

	"github.com/kopf-go/kopf"
)

// sayYes accepts the label or annotation somevalue on objects that have a
// spec.field (Kopf's example's say_yes).
func sayYes(value string, kw kopf.ResourceKwargs) bool {
	return value == "somevalue" && kw.Spec["field"] != nil
}

// sayNo accepts the value somevalue only on objects whose spec.field is
// not-this-value-for-sure: on none of ours (Kopf's example's say_no).
func sayNo(value string, kw kopf.ResourceKwargs) bool {
	return value == "somevalue" && kw.Spec["field"] == "not-this-value-for-sure"
}

// alwaysTrue and alwaysFalse are when= callbacks.
func alwaysTrue(kw kopf.ChangingKwargs) bool  { return true }
func alwaysFalse(kw kopf.ChangingKwargs) bool { return false }

// Labels. Each handler logs its own line and returns it, to be stored in
// status.<handler id>.message.

// CreateWithLabelsMatching: the label has this exact value: matches.
//
//kopf:on.create kopfexamples labels={somelabel: somevalue}
func CreateWithLabelsMatching(ctx context.Context, kw CreateWithLabelsMatchingKwargs) (any, error) {
	kw.Logger.Info("Label is matching.")
	return map[string]any{"message": "Label is matching."}, nil
}

// CreateWithLabelsMismatching: the label has another value: never matches.
//
//kopf:on.create kopfexamples labels={somelabel: othervalue}
func CreateWithLabelsMismatching(ctx context.Context, kw CreateWithLabelsMismatchingKwargs) (any, error) {
	kw.Logger.Info("Label is mismatching.")
	return map[string]any{"message": "Label is mismatching."}, nil
}

// CreateWithLabelsPresent: the label is present: matches.
//
//kopf:on.create kopfexamples labels={somelabel: PRESENT}
func CreateWithLabelsPresent(ctx context.Context, kw CreateWithLabelsPresentKwargs) (any, error) {
	kw.Logger.Info("Label is present.")
	return map[string]any{"message": "Label is present."}, nil
}

// CreateWithLabelsNotPresent: a label that the object lacks must be present: never matches.
//
//kopf:on.create kopfexamples labels={nonexistent: PRESENT}
func CreateWithLabelsNotPresent(ctx context.Context, kw CreateWithLabelsNotPresentKwargs) (any, error) {
	kw.Logger.Info("Label is not present.")
	return map[string]any{"message": "Label is not present."}, nil
}

// CreateWithLabelsAbsent: a label that the object lacks must be absent: matches.
//
//kopf:on.create kopfexamples labels={nonexistent: ABSENT}
func CreateWithLabelsAbsent(ctx context.Context, kw CreateWithLabelsAbsentKwargs) (any, error) {
	kw.Logger.Info("Label is absent.")
	return map[string]any{"message": "Label is absent."}, nil
}

// CreateWithLabelsNotAbsent: a label that the object has must be absent: never matches.
//
//kopf:on.create kopfexamples labels={somelabel: ABSENT}
func CreateWithLabelsNotAbsent(ctx context.Context, kw CreateWithLabelsNotAbsentKwargs) (any, error) {
	kw.Logger.Info("Label is not absent.")
	return map[string]any{"message": "Label is not absent."}, nil
}

// CreateWithLabelsCallbackMatching: sayYes accepts the label: matches.
//
//kopf:on.create kopfexamples labels={somelabel: fn:sayYes}
func CreateWithLabelsCallbackMatching(ctx context.Context, kw CreateWithLabelsCallbackMatchingKwargs) (any, error) {
	kw.Logger.Info("Label callback matching.")
	return map[string]any{"message": "Label callback matching."}, nil
}

// CreateWithLabelsCallbackMismatching: sayNo rejects the label: never matches.
//
//kopf:on.create kopfexamples labels={somelabel: fn:sayNo}
func CreateWithLabelsCallbackMismatching(ctx context.Context, kw CreateWithLabelsCallbackMismatchingKwargs) (any, error) {
	kw.Logger.Info("Label callback mismatch.")
	return map[string]any{"message": "Label callback mismatch."}, nil
}

// Annotations.

// CreateWithAnnotationsMatching: the annotation has this exact value: matches.
//
//kopf:on.create kopfexamples annotations={someannotation: somevalue}
func CreateWithAnnotationsMatching(ctx context.Context, kw CreateWithAnnotationsMatchingKwargs) (any, error) {
	kw.Logger.Info("Annotation is matching.")
	return map[string]any{"message": "Annotation is matching."}, nil
}

// CreateWithAnnotationsMismatching: the annotation has another value: never matches.
//
//kopf:on.create kopfexamples annotations={someannotation: othervalue}
func CreateWithAnnotationsMismatching(ctx context.Context, kw CreateWithAnnotationsMismatchingKwargs) (any, error) {
	kw.Logger.Info("Annotation is mismatching.")
	return map[string]any{"message": "Annotation is mismatching."}, nil
}

// CreateWithAnnotationsPresent: the annotation is present: matches.
//
//kopf:on.create kopfexamples annotations={someannotation: PRESENT}
func CreateWithAnnotationsPresent(ctx context.Context, kw CreateWithAnnotationsPresentKwargs) (any, error) {
	kw.Logger.Info("Annotation is present.")
	return map[string]any{"message": "Annotation is present."}, nil
}

// CreateWithAnnotationsNotPresent: an annotation that the object lacks must be present: never matches.
//
//kopf:on.create kopfexamples annotations={nonexistent: PRESENT}
func CreateWithAnnotationsNotPresent(ctx context.Context, kw CreateWithAnnotationsNotPresentKwargs) (any, error) {
	kw.Logger.Info("Annotation is not present.")
	return map[string]any{"message": "Annotation is not present."}, nil
}

// CreateWithAnnotationsAbsent: an annotation that the object lacks must be absent: matches.
//
//kopf:on.create kopfexamples annotations={nonexistent: ABSENT}
func CreateWithAnnotationsAbsent(ctx context.Context, kw CreateWithAnnotationsAbsentKwargs) (any, error) {
	kw.Logger.Info("Annotation is absent.")
	return map[string]any{"message": "Annotation is absent."}, nil
}

// CreateWithAnnotationsNotAbsent: an annotation that the object has must be absent: never matches.
//
//kopf:on.create kopfexamples annotations={someannotation: ABSENT}
func CreateWithAnnotationsNotAbsent(ctx context.Context, kw CreateWithAnnotationsNotAbsentKwargs) (any, error) {
	kw.Logger.Info("Annotation is not absent.")
	return map[string]any{"message": "Annotation is not absent."}, nil
}

// CreateWithAnnotationsCallbackMatching: sayYes accepts the annotation: matches.
//
//kopf:on.create kopfexamples annotations={someannotation: fn:sayYes}
func CreateWithAnnotationsCallbackMatching(ctx context.Context, kw CreateWithAnnotationsCallbackMatchingKwargs) (any, error) {
	kw.Logger.Info("Annotation callback matching.")
	return map[string]any{"message": "Annotation callback matching."}, nil
}

// CreateWithAnnotationsCallbackMismatching: sayNo rejects the annotation: never matches.
//
//kopf:on.create kopfexamples annotations={someannotation: fn:sayNo}
func CreateWithAnnotationsCallbackMismatching(ctx context.Context, kw CreateWithAnnotationsCallbackMismatchingKwargs) (any, error) {
	kw.Logger.Info("Annotation callback mismatch.")
	return map[string]any{"message": "Annotation callback mismatch."}, nil
}

// The when= callback.

// CreateWithFilterSatisfied: when= says yes: matches.
//
//kopf:on.create kopfexamples when=alwaysTrue
func CreateWithFilterSatisfied(ctx context.Context, kw CreateWithFilterSatisfiedKwargs) (any, error) {
	kw.Logger.Info("Filter satisfied.")
	return map[string]any{"message": "Filter satisfied."}, nil
}

// CreateWithFilterNotSatisfied: when= says no: never matches.
//
//kopf:on.create kopfexamples when=alwaysFalse
func CreateWithFilterNotSatisfied(ctx context.Context, kw CreateWithFilterNotSatisfiedKwargs) (any, error) {
	kw.Logger.Info("Filter not satisfied.")
	return map[string]any{"message": "Filter not satisfied."}, nil
}

// The value of a field. With field=, the handler's id ends in the field
// (CreateWithFieldValueSatisfied/spec.field), and so does its key in the
// status.

// CreateWithFieldValueSatisfied: spec.field has this value: matches.
//
//kopf:on.create kopfexamples field=spec.field value=value
func CreateWithFieldValueSatisfied(ctx context.Context, kw CreateWithFieldValueSatisfiedKwargs) (any, error) {
	kw.Logger.Info("Field value is satisfied.")
	return map[string]any{"message": "Field value is satisfied."}, nil
}

// CreateWithFieldValueNotSatisfied: spec.field has another value: never matches.
//
//kopf:on.create kopfexamples field=spec.field value=something-else
func CreateWithFieldValueNotSatisfied(ctx context.Context, kw CreateWithFieldValueNotSatisfiedKwargs) (any, error) {
	kw.Logger.Info("Field value is not satisfied.")
	return map[string]any{"message": "Field value is not satisfied."}, nil
}

// CreateWithFieldPresenceSatisfied: spec.field is present: matches.
//
//kopf:on.create kopfexamples field=spec.field value=PRESENT
func CreateWithFieldPresenceSatisfied(ctx context.Context, kw CreateWithFieldPresenceSatisfiedKwargs) (any, error) {
	kw.Logger.Info("Field presence is satisfied.")
	return map[string]any{"message": "Field presence is satisfied."}, nil
}

// CreateWithFieldPresenceNotSatisfied: spec.inexistent must be present: never matches.
//
//kopf:on.create kopfexamples field=spec.inexistent value=PRESENT
func CreateWithFieldPresenceNotSatisfied(ctx context.Context, kw CreateWithFieldPresenceNotSatisfiedKwargs) (any, error) {
	kw.Logger.Info("Field presence is not satisfied.")
	return map[string]any{"message": "Field presence is not satisfied."}, nil
}

// CreateWithFieldAbsenceSatisfied: spec.inexistent is absent: matches.
//
//kopf:on.create kopfexamples field=spec.inexistent value=ABSENT
func CreateWithFieldAbsenceSatisfied(ctx context.Context, kw CreateWithFieldAbsenceSatisfiedKwargs) (any, error) {
	kw.Logger.Info("Field absence is satisfied.")
	return map[string]any{"message": "Field absence is satisfied."}, nil
}

// CreateWithFieldAbsenceNotSatisfied: spec.field must be absent: never matches.
//
//kopf:on.create kopfexamples field=spec.field value=ABSENT
func CreateWithFieldAbsenceNotSatisfied(ctx context.Context, kw CreateWithFieldAbsenceNotSatisfiedKwargs) (any, error) {
	kw.Logger.Info("Field absence is not satisfied.")
	return map[string]any{"message": "Field absence is not satisfied."}, nil
}

// The change of a field: from value to changed, and the reverse.

// UpdateWithFieldChangeSatisfied: spec.field goes from value to changed: matches the test's patch.
//
//kopf:on.update kopfexamples field=spec.field old=value new=changed
func UpdateWithFieldChangeSatisfied(ctx context.Context, kw UpdateWithFieldChangeSatisfiedKwargs) (any, error) {
	kw.Logger.Info("Field change is satisfied.")
	return map[string]any{"message": "Field change is satisfied."}, nil
}

// UpdateWithFieldChangeNotSatisfied: spec.field goes from changed to value: never matches the test's patch.
//
//kopf:on.update kopfexamples field=spec.field old=changed new=value
func UpdateWithFieldChangeNotSatisfied(ctx context.Context, kw UpdateWithFieldChangeNotSatisfiedKwargs) (any, error) {
	kw.Logger.Info("Field change is not satisfied.")
	return map[string]any{"message": "Field change is not satisfied."}, nil
}

// The daemon of a field's value: it runs while the filter matches.

// DaemonWithField: spec.field is value: runs until the field changes (or
// the object is deleted), logging every second.
//
//kopf:daemon kopfexamples field=spec.field value=value
func DaemonWithField(ctx context.Context, kw DaemonWithFieldKwargs) error {
	for kw.Stopped.Err() == nil {
		kw.Logger.Info("Field daemon is satisfied.")
		select {
		case <-kw.Stopped.Done():
		case <-time.After(time.Second):
		}
	}
	return nil
}

// DaemonWithFieldNotSatisfied: spec.field must be something-else: never runs.
//
//kopf:daemon kopfexamples field=spec.field value=something-else
func DaemonWithFieldNotSatisfied(ctx context.Context, kw DaemonWithFieldNotSatisfiedKwargs) error {
	for kw.Stopped.Err() == nil {
		kw.Logger.Info("Field daemon is not satisfied.")
		select {
		case <-kw.Stopped.Done():
		case <-time.After(time.Second):
		}
	}
	return nil
}

func main() {
	os.Exit(kopf.Main(Register))
}
