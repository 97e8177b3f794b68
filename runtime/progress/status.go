package progress

import (
	"fmt"
	"slices"

	"github.com/kopf-go/kopf/runtime/body"
	"github.com/kopf-go/kopf/runtime/patches"
)

// DefaultStatusProgressField returns the default field of the legacy
// status storage, status.kopf.progress (a new slice on every call).
func DefaultStatusProgressField() []string { return []string{"status", "kopf", "progress"} }

// DefaultStatusTouchField returns the default touch field of the legacy
// status storage, status.kopf.dummy (a new slice on every call).
func DefaultStatusTouchField() []string { return []string{"status", "kopf", "dummy"} }

// StatusProgressStorage keeps the records as maps in the status stanza,
// under Field, keyed by the raw handler id (no SafeID, no hashing, no
// "-ofDRS" suffix), as Kopf did before annotations (Kopf's
// StatusProgressStorage):
//
//	status:
//	  kopf:
//	    progress:
//	      create_fn: {started: "...", retries: 1, success: true, failure: false, ...}
//
// Stored records carry all nine fields, the unset ones as null, so that the
// merge patch removes what an earlier record had set. Remember that
// Kubernetes prunes unknown status fields of structural schemas, unless
// x-kubernetes-preserve-unknown-fields is set.
//
// The zero value is usable: an empty Field means
// DefaultStatusProgressField, an empty TouchField DefaultStatusTouchField.
type StatusProgressStorage struct {
	Field      []string
	TouchField []string
}

// NewStatusProgressStorage returns Kopf's defaults: status.kopf.progress
// and status.kopf.dummy.
func NewStatusProgressStorage() *StatusProgressStorage {
	return &StatusProgressStorage{
		Field:      DefaultStatusProgressField(),
		TouchField: DefaultStatusTouchField(),
	}
}

func (s StatusProgressStorage) field() []string {
	if len(s.Field) == 0 {
		return DefaultStatusProgressField()
	}
	return s.Field
}

func (s StatusProgressStorage) touchField() []string {
	if len(s.TouchField) == 0 {
		return DefaultStatusTouchField()
	}
	return s.TouchField
}

func (s StatusProgressStorage) path(id string) []string {
	return append(slices.Clone(s.field()), id)
}

// Fetch implements ProgressStorage. A non-map container (e.g. a string in
// status.kopf.progress) counts as absent, as in Kopf; a non-map record or
// one with fields of wrong types is an error.
func (s StatusProgressStorage) Fetch(b body.Body, id string) (*Record, error) {
	raw, found := resolve(b, s.path(id)...)
	if !found || raw == nil {
		return nil, nil
	}
	r, err := recordFromValue(raw)
	if err != nil {
		return nil, fmt.Errorf("status field %v: %w", s.path(id), err)
	}
	return r, nil
}

// Store implements ProgressStorage.
func (s StatusProgressStorage) Store(b body.Body, p patches.Patch, id string, r *Record) {
	if r == nil {
		return
	}
	setPatch(p, s.path(id), r.asMap())
}

// Purge implements ProgressStorage.
func (s StatusProgressStorage) Purge(b body.Body, p patches.Patch, id string) {
	purgeField(b, p, s.path(id))
}

// Touch implements ProgressStorage.
func (s StatusProgressStorage) Touch(b body.Body, p patches.Patch, value *string) {
	path := s.touchField()
	current, _ := resolve(b, path...)
	if !sameString(current, value) {
		setPatch(p, path, strOrNil(value))
	}
}

// Clear implements ProgressStorage: every id under Field, in the body or in
// the patch, is purged.
func (s StatusProgressStorage) Clear(b body.Body, p patches.Patch) {
	ids := map[string]bool{}
	for _, src := range []any{b, p} {
		container, _ := resolve(src, s.field()...)
		m, _ := asMap(container)
		for id := range m {
			ids[id] = true
		}
	}
	for id := range ids {
		s.Purge(b, p, id)
	}
}

// ClearEssence implements ProgressStorage: Field is removed from the copy
// (with its emptied parents), and then empty stanzas.
func (s StatusProgressStorage) ClearEssence(essence map[string]any) map[string]any {
	if essence == nil {
		return nil
	}
	out := deepCopy(essence).(map[string]any)
	remove(out, s.field())
	removeEmptyStanzas(out)
	return out
}
