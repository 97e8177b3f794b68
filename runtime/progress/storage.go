package progress

import (
	"github.com/kopf-go/kopf/runtime/body"
	"github.com/kopf-go/kopf/runtime/patches"
)

// ProgressStorage keeps the handlers' progress records of an object between
// handling cycles (Kopf's ProgressStorage). Records are independent per
// handler id, so operators with distinct handler ids can share a storage
// location.
//
// Implementations read only from the body and write only into the patch;
// they must not modify the body.
type ProgressStorage interface {
	// Fetch returns the record of the handler id: (nil, nil) when there is
	// none, (nil, err) when one is stored but cannot be decoded.
	Fetch(b body.Body, id string) (*Record, error)
	// Store writes the record of the handler id into the patch. A nil
	// record writes nothing.
	Store(b body.Body, p patches.Patch, id string, r *Record)
	// Purge removes the record of the handler id: it is set to null in the
	// patch if the body has it, or dropped from the patch if only the patch
	// has it (so that a record stored and purged within one cycle leaves no
	// trace).
	Purge(b body.Body, p patches.Patch, id string)
	// Touch sets the storage's dummy value to value (nil: remove it), if it
	// differs from what the body has, to provoke a new watch event (e.g. to
	// wake up for a delayed handler). Nothing is written if the body
	// already has that value.
	Touch(b body.Body, p patches.Patch, value *string)
	// Clear purges, as Purge does, every progress record of this storage
	// that is found in the body or in the patch, whatever its handler id.
	// Records of other operators sharing the same location with different
	// handler ids are purged too; use Purge for targeted removals.
	Clear(b body.Body, p patches.Patch)
	// ClearEssence returns a deep copy of an essence (see DiffBaseStorage)
	// without this storage's own data, so that persisting progress is never
	// seen as a change of the object (Kopf's ProgressStorage.clear). The
	// argument is not modified; a nil essence gives nil.
	ClearEssence(essence map[string]any) map[string]any
}
