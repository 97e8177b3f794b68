package causes

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/kopf-go/kopf/runtime/body"
	"github.com/kopf-go/kopf/runtime/diffs"
	"github.com/kopf-go/kopf/runtime/patches"
	"github.com/kopf-go/kopf/runtime/progress"
)

const diffBaseKey = "kopf.zalando.org/last-handled-configuration"

// object returns a fresh body; mutate, if given, changes it.
func object(t *testing.T, mutate func(b body.Body)) body.Body {
	t.Helper()
	b := decode(t, `{
		"apiVersion": "kopf.dev/v1", "kind": "KopfExample",
		"metadata": {"name": "kopf-example-1", "namespace": "default", "uid": "u1", "resourceVersion": "100",
			"labels": {"somelabel": "somevalue"},
			"annotations": {"someannotation": "somevalue"}},
		"spec": {"field": "value", "items": ["item1", "item2"]},
		"status": {"x": "y"}}`)
	if mutate != nil {
		mutate(b)
	}
	return b
}

func decode(t *testing.T, s string) body.Body {
	t.Helper()
	var b body.Body
	if err := json.Unmarshal([]byte(s), &b); err != nil {
		t.Fatal(err)
	}
	return b
}

// handled returns the body with the diff-base of base stored in it, as if
// base had been fully handled: Build, Store into a patch, apply the patch.
func handled(t *testing.T, b, base body.Body, extra [][]string) body.Body {
	t.Helper()
	s := progress.NewAnnotationsDiffBaseStorage()
	p := patches.New()
	s.Store(base, p, s.Build(base, extra))
	anns, _ := p.Metadata()["annotations"].(map[string]any)
	if len(anns) == 0 {
		t.Fatal("the storage wrote no annotations")
	}
	return withAnnotations(b, anns)
}

func withAnnotations(b body.Body, anns map[string]any) body.Body {
	meta := b.Meta()
	cur, _ := meta["annotations"].(map[string]any)
	if cur == nil {
		cur = map[string]any{}
		meta["annotations"] = cur
	}
	for k, v := range anns {
		cur[k] = v
	}
	return b
}

func setSpecField(v any) func(body.Body) {
	return func(b body.Body) { b.Spec()["field"] = v }
}

func TestDetect(t *testing.T) {
	yes, no := true, false
	tests := []struct {
		name  string
		input func(t *testing.T) Input
		// wantResuming is not checked when nil.
		wantReason    Reason
		wantResuming  *bool
		wantOld       bool // Old is the stored essence (else nil)
		wantDiff      diffs.Diff
		wantMalformed bool
	}{
		{
			name: "no diff-base: create",
			input: func(t *testing.T) Input {
				return Input{Body: object(t, nil)}
			},
			wantReason: Create, wantResuming: &no,
		},
		{
			// Kopf forces initial=False on CREATE ("creation never mixes
			// with resuming").
			name: "no diff-base, noticed by listing: still create",
			input: func(t *testing.T) Input {
				return Input{Body: object(t, nil), NoticedByListing: true}
			},
			wantReason: Create, wantResuming: &no,
		},
		{
			name: "same essence: noop",
			input: func(t *testing.T) Input {
				return Input{Body: handled(t, object(t, nil), object(t, nil), nil)}
			},
			wantReason: Noop, wantResuming: &no, wantOld: true,
		},
		{
			name: "status, kind and metadata changes are not essential",
			input: func(t *testing.T) Input {
				b := object(t, func(b body.Body) {
					b["status"] = map[string]any{"x": "changed", "new": "field"}
					b["kind"] = "Other"
					b.Meta()["resourceVersion"] = "200"
					b.Meta()["finalizers"] = []any{"kopf.zalando.org/KopfFinalizerMarker"}
					b.Meta()["annotations"].(map[string]any)["kubectl.kubernetes.io/last-applied-configuration"] = "{}"
					b.Meta()["annotations"].(map[string]any)["kopf.zalando.org/create_fn"] = `{"retries":1}`
				})
				return Input{Body: handled(t, b, object(t, nil), nil)}
			},
			wantReason: Noop, wantResuming: &no, wantOld: true,
		},
		{
			name: "spec changed: update",
			input: func(t *testing.T) Input {
				return Input{Body: handled(t, object(t, setSpecField("new")), object(t, nil), nil)}
			},
			wantReason: Update, wantResuming: &no, wantOld: true,
			wantDiff: diffs.Diff{{Op: diffs.Change, Path: []string{"spec", "field"}, Old: "value", New: "new"}},
		},
		{
			name: "label added: update",
			input: func(t *testing.T) Input {
				b := object(t, func(b body.Body) { b.Meta()["labels"].(map[string]any)["new"] = "label" })
				return Input{Body: handled(t, b, object(t, nil), nil)}
			},
			wantReason: Update, wantResuming: &no, wantOld: true,
			wantDiff: diffs.Diff{{Op: diffs.Add, Path: []string{"metadata", "labels", "new"}, New: "label"}},
		},
		{
			name: "annotation removed: update",
			input: func(t *testing.T) Input {
				b := object(t, func(b body.Body) { delete(b.Meta()["annotations"].(map[string]any), "someannotation") })
				return Input{Body: handled(t, b, object(t, nil), nil)}
			},
			wantReason: Update, wantResuming: &no, wantOld: true,
			wantDiff: diffs.Diff{{Op: diffs.Remove, Path: []string{"metadata", "annotations"},
				Old: map[string]any{"someannotation": "somevalue"}}},
		},
		{
			name: "same essence, noticed by listing, not resumed: resume",
			input: func(t *testing.T) Input {
				return Input{Body: handled(t, object(t, nil), object(t, nil), nil), NoticedByListing: true}
			},
			wantReason: Resume, wantResuming: &yes, wantOld: true,
		},
		{
			name: "same essence, noticed by listing, already resumed: noop",
			input: func(t *testing.T) Input {
				return Input{Body: handled(t, object(t, nil), object(t, nil), nil), NoticedByListing: true, Resumed: true}
			},
			wantReason: Noop, wantResuming: &no, wantOld: true,
		},
		{
			name: "same essence, resumed but not noticed by listing: noop",
			input: func(t *testing.T) Input {
				return Input{Body: handled(t, object(t, nil), object(t, nil), nil), Resumed: true}
			},
			wantReason: Noop, wantResuming: &no, wantOld: true,
		},
		{
			name: "changed while not resumed: update with resuming mixed in",
			input: func(t *testing.T) Input {
				return Input{Body: handled(t, object(t, setSpecField("new")), object(t, nil), nil), NoticedByListing: true}
			},
			wantReason: Update, wantResuming: &yes, wantOld: true,
			wantDiff: diffs.Diff{{Op: diffs.Change, Path: []string{"spec", "field"}, Old: "value", New: "new"}},
		},
		{
			name: "deleting without a diff-base: delete",
			input: func(t *testing.T) Input {
				return Input{Body: object(t, nil), Deleting: true}
			},
			wantReason: Delete, wantResuming: &no,
		},
		{
			name: "deleting with the same essence: delete",
			input: func(t *testing.T) Input {
				return Input{Body: handled(t, object(t, nil), object(t, nil), nil), Deleting: true}
			},
			wantReason: Delete, wantResuming: &no, wantOld: true,
		},
		{
			name: "deleting with changes: delete, with the diff",
			input: func(t *testing.T) Input {
				return Input{Body: handled(t, object(t, setSpecField("new")), object(t, nil), nil), Deleting: true}
			},
			wantReason: Delete, wantResuming: &no, wantOld: true,
			wantDiff: diffs.Diff{{Op: diffs.Change, Path: []string{"spec", "field"}, Old: "value", New: "new"}},
		},
		{
			name: "deleting while not resumed: delete with resuming mixed in",
			input: func(t *testing.T) Input {
				return Input{Body: handled(t, object(t, nil), object(t, nil), nil), Deleting: true, NoticedByListing: true}
			},
			wantReason: Delete, wantResuming: &yes, wantOld: true,
		},
		{
			name: "extra field in status changed: update",
			input: func(t *testing.T) Input {
				extra := [][]string{{"status", "x"}}
				b := object(t, func(b body.Body) { b.Status()["x"] = "z" })
				return Input{Body: handled(t, b, object(t, nil), extra), ExtraFields: extra}
			},
			wantReason: Update, wantResuming: &no, wantOld: true,
			wantDiff: diffs.Diff{{Op: diffs.Change, Path: []string{"status", "x"}, Old: "y", New: "z"}},
		},
		{
			name: "extra field unchanged, other status changed: noop",
			input: func(t *testing.T) Input {
				extra := [][]string{{"status", "x"}}
				b := object(t, func(b body.Body) { b.Status()["other"] = "z" })
				return Input{Body: handled(t, b, object(t, nil), extra), ExtraFields: extra}
			},
			wantReason: Noop, wantResuming: &no, wantOld: true,
		},
		{
			name: "malformed diff-base (not JSON): create",
			input: func(t *testing.T) Input {
				b := withAnnotations(object(t, nil), map[string]any{diffBaseKey: "{not json"})
				return Input{Body: b}
			},
			wantReason: Create, wantResuming: &no, wantMalformed: true,
		},
		{
			name: "malformed diff-base (not an object): create",
			input: func(t *testing.T) Input {
				b := withAnnotations(object(t, nil), map[string]any{diffBaseKey: "[1, 2]\n"})
				return Input{Body: b}
			},
			wantReason: Create, wantResuming: &no, wantMalformed: true,
		},
		{
			name: "malformed diff-base while deleting: delete",
			input: func(t *testing.T) Input {
				b := withAnnotations(object(t, nil), map[string]any{diffBaseKey: "{not json"})
				return Input{Body: b, Deleting: true}
			},
			wantReason: Delete, wantResuming: &no, wantMalformed: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := tt.input(t)
			storage := progress.NewAnnotationsDiffBaseStorage()
			in.DiffBase = storage
			var malformed []error
			got := Detect(in, func(err error) { malformed = append(malformed, err) })

			if got.Reason != tt.wantReason {
				t.Errorf("Reason = %q, want %q", got.Reason, tt.wantReason)
			}
			if tt.wantResuming != nil && got.Resuming != *tt.wantResuming {
				t.Errorf("Resuming = %v, want %v", got.Resuming, *tt.wantResuming)
			}
			if !tt.wantOld {
				// No stored essence: as Kopf, one "add" of the whole essence.
				if len(got.Diff) != 1 || got.Diff[0].Op != diffs.Add || len(got.Diff[0].Path) != 0 ||
					got.Diff[0].Old != nil || !reflect.DeepEqual(got.Diff[0].New, got.Essence) {
					t.Errorf("Diff = %v, want one add of the whole essence", got.Diff)
				}
			} else if len(got.Diff) != len(tt.wantDiff) || (len(tt.wantDiff) > 0 && !reflect.DeepEqual(got.Diff, tt.wantDiff)) {
				t.Errorf("Diff = %v, want %v", got.Diff, tt.wantDiff)
			}
			if tt.wantMalformed {
				if len(malformed) != 1 || malformed[0] == nil {
					t.Errorf("onMalformed got %v, want exactly one error", malformed)
				}
			} else if len(malformed) != 0 {
				t.Errorf("onMalformed got %v, want no calls", malformed)
			}

			wantEssence := storage.Build(in.Body, in.ExtraFields)
			if !reflect.DeepEqual(got.Essence, wantEssence) {
				t.Errorf("Essence = %v, want %v", got.Essence, wantEssence)
			}
			if !reflect.DeepEqual(got.New, any(wantEssence)) {
				t.Errorf("New = %v, want the essence %v", got.New, wantEssence)
			}
			if tt.wantOld {
				stored, err := storage.Fetch(in.Body)
				if err != nil || stored == nil {
					t.Fatalf("the test body has no valid diff-base: %v", err)
				}
				if !reflect.DeepEqual(got.Old, any(stored)) {
					t.Errorf("Old = %v, want the stored essence %v", got.Old, stored)
				}
			} else if got.Old != nil {
				t.Errorf("Old = %v, want nil", got.Old)
			}
		})
	}
}

// TestDetectEssence checks that the essence to store is what the handlers
// care about, and nothing of Kopf's own state.
func TestDetectEssence(t *testing.T) {
	b := handled(t, object(t, nil), object(t, nil), nil)
	withAnnotations(b, map[string]any{"kopf.zalando.org/create_fn": `{"retries":1}`})
	got := Detect(Input{Body: b, DiffBase: progress.NewAnnotationsDiffBaseStorage()}, func(err error) {
		t.Errorf("unexpected malformed diff-base: %v", err)
	})
	want := map[string]any{
		"spec": map[string]any{"field": "value", "items": []any{"item1", "item2"}},
		"metadata": map[string]any{
			"labels":      map[string]any{"somelabel": "somevalue"},
			"annotations": map[string]any{"someannotation": "somevalue"},
		},
	}
	if !reflect.DeepEqual(got.Essence, want) {
		t.Errorf("Essence = %v, want %v", got.Essence, want)
	}
}

func TestDetectDoesNotModifyTheBody(t *testing.T) {
	b := handled(t, object(t, setSpecField("new")), object(t, nil), [][]string{{"status", "x"}})
	before, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	Detect(Input{Body: b, DiffBase: progress.NewAnnotationsDiffBaseStorage(), ExtraFields: [][]string{{"status", "x"}}},
		func(error) {})
	after, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	if string(before) != string(after) {
		t.Errorf("Detect modified the body:\n%s\nwas\n%s", after, before)
	}
}

func TestReasonTitle(t *testing.T) {
	tests := []struct {
		reason Reason
		want   string
	}{
		{Create, "Creation"},
		{Update, "Updating"},
		{Delete, "Deletion"},
		{Resume, "Resuming"},
		{Noop, "noop"},
		{Free, "free"},
		{Gone, "gone"},
	}
	for _, tt := range tests {
		t.Run(string(tt.reason), func(t *testing.T) {
			if got := tt.reason.Title(); got != tt.want {
				t.Errorf("Title() = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestReasonValues pins the persisted values (the "purpose" of progress
// records), which must never change.
func TestReasonValues(t *testing.T) {
	got := []Reason{Create, Update, Delete, Resume, Noop, Free, Gone}
	want := []Reason{"create", "update", "delete", "resume", "noop", "free", "gone"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("reasons = %q, want %q", got, want)
	}
}
