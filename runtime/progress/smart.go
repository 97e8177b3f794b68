package progress

import (
	"github.com/kopf-go/kopf/runtime/body"
	"github.com/kopf-go/kopf/runtime/patches"
)

// SmartProgressStorage is the default storage (Kopf 1.44's
// SmartProgressStorage): records are written to annotations only, but are
// read from annotations first and then from the legacy status stanza, and
// purged and cleared from both; the touch value goes to annotations only.
// This lets objects handled by older Kopf versions (status storage) finish
// their handling and get cleaned up.
type SmartProgressStorage struct {
	Annotations AnnotationsProgressStorage
	Status      StatusProgressStorage
}

// NewSmartProgressStorage returns the default storage with Kopf's defaults
// for both parts.
func NewSmartProgressStorage() *SmartProgressStorage {
	return &SmartProgressStorage{
		Annotations: *NewAnnotationsProgressStorage(),
		Status:      *NewStatusProgressStorage(),
	}
}

// Fetch implements ProgressStorage: the annotations' record if any (an
// error there is returned at once), else the status' one.
func (s SmartProgressStorage) Fetch(b body.Body, id string) (*Record, error) {
	r, err := s.Annotations.Fetch(b, id)
	if err != nil || r != nil {
		return r, err
	}
	return s.Status.Fetch(b, id)
}

// Store implements ProgressStorage: annotations only.
func (s SmartProgressStorage) Store(b body.Body, p patches.Patch, id string, r *Record) {
	s.Annotations.Store(b, p, id, r)
}

// Purge implements ProgressStorage: both annotations and status.
func (s SmartProgressStorage) Purge(b body.Body, p patches.Patch, id string) {
	s.Annotations.Purge(b, p, id)
	s.Status.Purge(b, p, id)
}

// Touch implements ProgressStorage: annotations only.
func (s SmartProgressStorage) Touch(b body.Body, p patches.Patch, value *string) {
	s.Annotations.Touch(b, p, value)
}

// Clear implements ProgressStorage: both annotations and status.
func (s SmartProgressStorage) Clear(b body.Body, p patches.Patch) {
	s.Annotations.Clear(b, p)
	s.Status.Clear(b, p)
}

// ClearEssence implements ProgressStorage: both annotations and status.
func (s SmartProgressStorage) ClearEssence(essence map[string]any) map[string]any {
	return s.Status.ClearEssence(s.Annotations.ClearEssence(essence))
}

// MultiProgressStorage combines storages (Kopf's MultiProgressStorage):
// Fetch returns the first record found (or the first error), in order;
// everything else is done by all storages, in order.
type MultiProgressStorage struct {
	Storages []ProgressStorage
}

// Fetch implements ProgressStorage.
func (s MultiProgressStorage) Fetch(b body.Body, id string) (*Record, error) {
	for _, storage := range s.Storages {
		r, err := storage.Fetch(b, id)
		if err != nil || r != nil {
			return r, err
		}
	}
	return nil, nil
}

// Store implements ProgressStorage.
func (s MultiProgressStorage) Store(b body.Body, p patches.Patch, id string, r *Record) {
	for _, storage := range s.Storages {
		storage.Store(b, p, id, r)
	}
}

// Purge implements ProgressStorage.
func (s MultiProgressStorage) Purge(b body.Body, p patches.Patch, id string) {
	for _, storage := range s.Storages {
		storage.Purge(b, p, id)
	}
}

// Touch implements ProgressStorage.
func (s MultiProgressStorage) Touch(b body.Body, p patches.Patch, value *string) {
	for _, storage := range s.Storages {
		storage.Touch(b, p, value)
	}
}

// Clear implements ProgressStorage.
func (s MultiProgressStorage) Clear(b body.Body, p patches.Patch) {
	for _, storage := range s.Storages {
		storage.Clear(b, p)
	}
}

// ClearEssence implements ProgressStorage.
func (s MultiProgressStorage) ClearEssence(essence map[string]any) map[string]any {
	if essence == nil {
		return nil
	}
	out := deepCopy(essence).(map[string]any)
	for _, storage := range s.Storages {
		out = storage.ClearEssence(out)
	}
	return out
}

var (
	_ ProgressStorage = AnnotationsProgressStorage{}
	_ ProgressStorage = StatusProgressStorage{}
	_ ProgressStorage = SmartProgressStorage{}
	_ ProgressStorage = MultiProgressStorage{}
	_ ProgressStorage = (*SmartProgressStorage)(nil)
)
