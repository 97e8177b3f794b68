package progress

import (
	"fmt"
	"slices"

	"github.com/kopf-go/kopf/runtime/body"
	"github.com/kopf-go/kopf/runtime/patches"
)

// DefaultDiffBaseKey is the annotation name of the diff-base.
const DefaultDiffBaseKey = "last-handled-configuration"

// DiffBaseStorage keeps the essence of an object as it was when last fully
// handled (Kopf's DiffBaseStorage): the fields whose changes the handlers
// react to. The reactor builds the current essence with Build, compares it
// with what Fetch returns (after ProgressStorage.ClearEssence on both), and
// stores the new one with Store once the change is handled.
//
// Implementations read only from the body and write only into the patch.
type DiffBaseStorage interface {
	// Fetch returns the stored essence: (nil, nil) when there is none,
	// (nil, err) when one is stored but cannot be decoded or is not a JSON
	// object. Integer numbers are decoded as int64, others as float64.
	Fetch(b body.Body) (map[string]any, error)
	// Store writes the essence into the patch.
	Store(b body.Body, p patches.Patch, essence map[string]any)
	// Build computes the current essence of the body (see BuildEssence),
	// with the extra fields of field handlers kept, and without the
	// storage's own data and ignored fields.
	Build(b body.Body, extraFields [][]string) map[string]any
}

// EncodeEssence renders an essence as Kopf does, compact JSON (see the
// package doc on encoding), without the trailing newline, with the keys in
// the order of Kopf's essence (see essenceOrder). It fails only on values
// that JSON cannot represent (NaN, infinities, channels, ...), which never
// occur in essences built from decoded JSON.
func EncodeEssence(essence map[string]any) (string, error) {
	data, err := encodeOrdered(essence, essenceOrder)
	return string(data), err
}

// essenceOrder is the key order of the essence that Kopf builds and dumps
// for a custom resource, whose body arrives with sorted keys at every level
// (the API server encodes custom resources from Go maps):
//
//   - at the top, the body's own fields (spec, ...) sorted; then metadata,
//     which Kopf deletes and re-creates after them; then the fields that
//     only extra fields (of field handlers) bring back, such as status;
//   - in metadata, labels then annotations (the order Kopf cherry-picks
//     them in), then the fields of extra fields, sorted;
//   - everywhere else, sorted.
//
// Kopf iterates its extra fields as a Python set, in an order that varies
// from run to run; sorted is as good as any. The fields of built-in
// resources arrive in the order of their Go structs, which the reactor
// does not know: their essences differ from Kopf's in key order only, and
// both sides compare decoded values, never bytes.
func essenceOrder(path []string, keys []string) []string {
	slices.Sort(keys)
	switch {
	case len(path) == 0:
		rank := func(k string) int {
			switch k {
			case "apiVersion", "kind", "status":
				return 2
			case "metadata":
				return 1
			}
			return 0
		}
		slices.SortStableFunc(keys, func(a, b string) int { return rank(a) - rank(b) })
	case len(path) == 1 && path[0] == "metadata":
		rank := func(k string) int {
			switch k {
			case "labels":
				return 0
			case "annotations":
				return 1
			}
			return 2
		}
		slices.SortStableFunc(keys, func(a, b string) int { return rank(a) - rank(b) })
	}
	return keys
}

// decodeEssence decodes an essence; a JSON null is (nil, nil), a non-object
// is an error.
func decodeEssence(s string) (map[string]any, error) {
	v, err := decodeJSON(s)
	if err != nil || v == nil {
		return nil, err
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("not a JSON object")
	}
	return m, nil
}

// AnnotationsDiffBaseStorage keeps the essence as compact JSON plus "\n" in
// the annotation "<prefix>/<key>", by default
// "kopf.zalando.org/last-handled-configuration" (Kopf's
// AnnotationsDiffBaseStorage). Keys are formed as for progress records
// (Keys(Prefix, Key, V1, body), so with "-ofDRS" when applicable); all are
// written, and they are read in order. When the prefix does not start with
// "kopf.", Store also adds the "<prefix>/kopf-managed" marker (once).
//
// The zero value is usable: an empty Prefix means DefaultPrefix, an empty
// Key DefaultDiffBaseKey; V1 is false in the zero value but true with
// NewAnnotationsDiffBaseStorage, as in Kopf.
type AnnotationsDiffBaseStorage struct {
	Prefix string
	Key    string
	// IgnoredFields are removed from every essence (see BuildEssence).
	IgnoredFields [][]string
	V1            bool
}

// NewAnnotationsDiffBaseStorage returns Kopf's defaults.
func NewAnnotationsDiffBaseStorage() *AnnotationsDiffBaseStorage {
	return &AnnotationsDiffBaseStorage{Prefix: DefaultPrefix, Key: DefaultDiffBaseKey, V1: true}
}

func (s AnnotationsDiffBaseStorage) prefix() string {
	if s.Prefix == "" {
		return DefaultPrefix
	}
	return s.Prefix
}

func (s AnnotationsDiffBaseStorage) key() string {
	if s.Key == "" {
		return DefaultDiffBaseKey
	}
	return s.Key
}

// Keys returns the annotation keys of the diff-base for the body.
func (s AnnotationsDiffBaseStorage) Keys(b body.Body) []string {
	return Keys(s.prefix(), s.key(), s.V1, b)
}

// Build implements DiffBaseStorage: BuildEssence, then the storage's own
// keys removed, then empty stanzas removed.
func (s AnnotationsDiffBaseStorage) Build(b body.Body, extraFields [][]string) map[string]any {
	essence := BuildEssence(b, extraFields, s.IgnoredFields)
	removeAnnotations(essence, s.Keys(b))
	removeEmptyStanzas(essence)
	return essence
}

// Fetch implements DiffBaseStorage. The first key holding a non-null value
// decides; a non-string annotation is an error.
func (s AnnotationsDiffBaseStorage) Fetch(b body.Body) (map[string]any, error) {
	for _, key := range s.Keys(b) {
		raw, found := resolve(b, annotationPath(key)...)
		if !found || raw == nil {
			continue
		}
		str, ok := raw.(string)
		if !ok {
			return nil, fmt.Errorf("annotation %s: not a string", key)
		}
		essence, err := decodeEssence(str)
		if err != nil {
			return nil, fmt.Errorf("annotation %s: %w", key, err)
		}
		if essence != nil {
			return essence, nil
		}
	}
	return nil, nil
}

// Store implements DiffBaseStorage. An essence that cannot be encoded (see
// EncodeEssence) is not stored.
func (s AnnotationsDiffBaseStorage) Store(b body.Body, p patches.Patch, essence map[string]any) {
	encoded, err := EncodeEssence(essence)
	if err != nil {
		return
	}
	encoded += "\n" // as kubectl does, for a nicer presentation
	for _, key := range s.Keys(b) {
		setPatch(p, annotationPath(key), encoded)
	}
	storeMarker(s.prefix(), b, p)
}

// DefaultStatusDiffBaseField returns the default field of
// StatusDiffBaseStorage, status.kopf.last-handled-configuration (a new
// slice on every call).
func DefaultStatusDiffBaseField() []string {
	return []string{"status", "kopf", "last-handled-configuration"}
}

// StatusDiffBaseStorage keeps the essence as a compact JSON string (no
// trailing newline) in a status field, by default
// status.kopf.last-handled-configuration (Kopf's StatusDiffBaseStorage).
// The field is never suffixed with "-ofDRS". The zero value is usable: an
// empty Field means DefaultStatusDiffBaseField.
type StatusDiffBaseStorage struct {
	Field []string
	// IgnoredFields are removed from every essence (see BuildEssence).
	IgnoredFields [][]string
}

// NewStatusDiffBaseStorage returns Kopf's defaults.
func NewStatusDiffBaseStorage() *StatusDiffBaseStorage {
	return &StatusDiffBaseStorage{Field: DefaultStatusDiffBaseField()}
}

func (s StatusDiffBaseStorage) field() []string {
	if len(s.Field) == 0 {
		return DefaultStatusDiffBaseField()
	}
	return slices.Clone(s.Field)
}

// Build implements DiffBaseStorage: BuildEssence, then the storage's own
// field removed (with the maps this leaves empty).
func (s StatusDiffBaseStorage) Build(b body.Body, extraFields [][]string) map[string]any {
	essence := BuildEssence(b, extraFields, s.IgnoredFields)
	remove(essence, s.field())
	return essence
}

// Fetch implements DiffBaseStorage. A non-string value is an error.
func (s StatusDiffBaseStorage) Fetch(b body.Body) (map[string]any, error) {
	raw, found := resolve(b, s.field()...)
	if !found || raw == nil {
		return nil, nil
	}
	str, ok := raw.(string)
	if !ok {
		return nil, fmt.Errorf("status field %v: not a string", s.field())
	}
	essence, err := decodeEssence(str)
	if err != nil {
		return nil, fmt.Errorf("status field %v: %w", s.field(), err)
	}
	return essence, nil
}

// Store implements DiffBaseStorage. An essence that cannot be encoded is
// not stored.
func (s StatusDiffBaseStorage) Store(b body.Body, p patches.Patch, essence map[string]any) {
	encoded, err := EncodeEssence(essence)
	if err != nil {
		return
	}
	setPatch(p, s.field(), encoded)
}

// MultiDiffBaseStorage combines storages, e.g. for a transition between
// storages (Kopf's MultiDiffBaseStorage): Fetch returns the first essence
// found (or the first error), Store writes into all, and Build passes the
// essence through every storage's Build so that each removes its own data.
type MultiDiffBaseStorage struct {
	Storages []DiffBaseStorage
}

// Build implements DiffBaseStorage.
func (s MultiDiffBaseStorage) Build(b body.Body, extraFields [][]string) map[string]any {
	essence := BuildEssence(b, extraFields, nil)
	for _, storage := range s.Storages {
		essence = storage.Build(body.Body(essence), extraFields)
	}
	return essence
}

// Fetch implements DiffBaseStorage.
func (s MultiDiffBaseStorage) Fetch(b body.Body) (map[string]any, error) {
	for _, storage := range s.Storages {
		essence, err := storage.Fetch(b)
		if err != nil || essence != nil {
			return essence, err
		}
	}
	return nil, nil
}

// Store implements DiffBaseStorage.
func (s MultiDiffBaseStorage) Store(b body.Body, p patches.Patch, essence map[string]any) {
	for _, storage := range s.Storages {
		storage.Store(b, p, essence)
	}
}

var (
	_ DiffBaseStorage = AnnotationsDiffBaseStorage{}
	_ DiffBaseStorage = StatusDiffBaseStorage{}
	_ DiffBaseStorage = MultiDiffBaseStorage{}
	_ DiffBaseStorage = (*AnnotationsDiffBaseStorage)(nil)
)
