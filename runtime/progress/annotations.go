package progress

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kopf-go/kopf/runtime/body"
	"github.com/kopf-go/kopf/runtime/patches"
)

// DefaultTouchKey is the annotation name of the dummy touch value.
const DefaultTouchKey = "touch-dummy"

// AnnotationsProgressStorage keeps each handler's record as compact JSON in
// an annotation "<prefix>/<safe id>" (Kopf's AnnotationsProgressStorage),
// e.g.
//
//	kopf.zalando.org/create_fn: {"started":"2026-01-01T00:00:00.000000+00:00","purpose":"create","retries":1,"success":true,"failure":false}
//
// Keys are formed by Keys(Prefix, id, V1, body): the V2 key, plus the V1
// key when V1 is set and it differs; all are written and purged, and they
// are read in that order. When the prefix does not start with "kopf.",
// writing also adds the marker "<prefix>/kopf-managed": "yes" (once).
//
// The zero value is usable: an empty Prefix means DefaultPrefix and an
// empty TouchKey means DefaultTouchKey; V1 is false in the zero value but
// true with NewAnnotationsProgressStorage, as in Kopf.
type AnnotationsProgressStorage struct {
	Prefix   string
	TouchKey string
	V1       bool
}

// NewAnnotationsProgressStorage returns Kopf's defaults: prefix
// "kopf.zalando.org", touch key "touch-dummy", V1 keys written.
func NewAnnotationsProgressStorage() *AnnotationsProgressStorage {
	return &AnnotationsProgressStorage{Prefix: DefaultPrefix, TouchKey: DefaultTouchKey, V1: true}
}

func (s AnnotationsProgressStorage) prefix() string {
	if s.Prefix == "" {
		return DefaultPrefix
	}
	return s.Prefix
}

func (s AnnotationsProgressStorage) touchKey() string {
	if s.TouchKey == "" {
		return DefaultTouchKey
	}
	return s.TouchKey
}

// Keys returns the annotation keys of the handler id for the body.
func (s AnnotationsProgressStorage) Keys(b body.Body, id string) []string {
	return Keys(s.prefix(), id, s.V1, b)
}

// Fetch implements ProgressStorage. The first key (V2, then V1) holding a
// non-null value decides: a malformed value there is an error even if
// another key holds a good one. A non-string annotation value is an error.
func (s AnnotationsProgressStorage) Fetch(b body.Body, id string) (*Record, error) {
	for _, key := range s.Keys(b, id) {
		raw, found := resolve(b, annotationPath(key)...)
		if !found || raw == nil {
			continue
		}
		str, ok := raw.(string)
		if !ok {
			return nil, fmt.Errorf("annotation %s: not a string", key)
		}
		r, err := DecodeRecord(str)
		if err != nil {
			return nil, fmt.Errorf("annotation %s: %w", key, err)
		}
		if r != nil {
			return r, nil
		}
	}
	return nil, nil
}

// Store implements ProgressStorage.
func (s AnnotationsProgressStorage) Store(b body.Body, p patches.Patch, id string, r *Record) {
	if r == nil {
		return
	}
	encoded := r.Encode()
	for _, key := range s.Keys(b, id) {
		setPatch(p, annotationPath(key), encoded)
	}
	storeMarker(s.prefix(), b, p)
}

// Purge implements ProgressStorage, for every key of the id.
func (s AnnotationsProgressStorage) Purge(b body.Body, p patches.Patch, id string) {
	for _, key := range s.Keys(b, id) {
		purgeField(b, p, annotationPath(key))
	}
}

// Touch implements ProgressStorage, for every key of the touch key; the
// marker is added whenever something is written.
func (s AnnotationsProgressStorage) Touch(b body.Body, p patches.Patch, value *string) {
	for _, key := range s.Keys(b, s.touchKey()) {
		path := annotationPath(key)
		current, _ := resolve(b, path...)
		if sameString(current, value) {
			continue
		}
		setPatch(p, path, strOrNil(value))
		storeMarker(s.prefix(), b, p)
	}
}

// Clear implements ProgressStorage. An annotation is taken for a progress
// record when its key is under "<prefix>/", is neither the marker nor a
// touch key, and its value is a JSON object with only (and at least one of)
// the record's fields; the diff-base and unrelated annotations are thus
// left alone. For a ReplicaSet owned by a Deployment, only keys ending in
// "-ofDRS" are considered (those copied from the Deployment belong to its
// operator); such records whose keys were shortened with a hash are not
// recognised.
func (s AnnotationsProgressStorage) Clear(b body.Body, p patches.Patch) {
	pfx := s.prefix() + "/"
	skip := append(s.Keys(b, s.touchKey()), pfx+MarkerName)
	drs := Suffix(b) != ""
	candidates := map[string]bool{}
	for _, src := range []any{b, p} {
		annotations, _ := resolve(src, "metadata", "annotations")
		m, _ := asMap(annotations)
		for key, value := range m {
			str, ok := value.(string)
			if !ok || !strings.HasPrefix(key, pfx) || slices.Contains(skip, key) {
				continue
			}
			if drs && !strings.HasSuffix(key, DRSSuffix) {
				continue
			}
			if looksLikeRecord(str) {
				candidates[key] = true
			}
		}
	}
	for key := range candidates {
		purgeField(b, p, annotationPath(key))
	}
}

// ClearEssence implements ProgressStorage: every annotation under
// "<prefix>/" is removed from the copy, and then empty stanzas.
func (s AnnotationsProgressStorage) ClearEssence(essence map[string]any) map[string]any {
	if essence == nil {
		return nil
	}
	out := deepCopy(essence).(map[string]any)
	pfx := s.prefix() + "/"
	annotations, _ := resolve(out, "metadata", "annotations")
	if m, ok := asMap(annotations); ok {
		for key := range m {
			if strings.HasPrefix(key, pfx) {
				delete(m, key)
			}
		}
	}
	removeEmptyStanzas(out)
	return out
}

// sameString reports whether a body value equals the wanted value, where
// nil means absent (and a JSON null counts as absent).
func sameString(current any, want *string) bool {
	if want == nil {
		return current == nil
	}
	str, ok := current.(string)
	return ok && str == *want
}
