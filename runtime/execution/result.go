package execution

import (
	"encoding/json"

	"github.com/kopf-go/kopf/runtime/patches"
)

// MergeResult stores a handler's result into status.<id> of the patch, as
// Kopf does for every kind of handler (changing, daemon, timer): a map is
// merged, anything else replaces. A typed result is converted to JSON
// values first; its MarshalJSON is user code, so it runs through Guard and
// a panic in it is an error, not a crash. A nil result stores nothing.
func MergeResult(p patches.Patch, id string, result any) error {
	if result == nil {
		return nil
	}
	if _, ok := result.(map[string]any); !ok {
		data, err := Guard(func() ([]byte, error) { return json.Marshal(result) })
		if err != nil {
			return err
		}
		var generic any
		if err := json.Unmarshal(data, &generic); err != nil {
			return err
		}
		result = generic
	}
	p.MergeResult(id, result)
	return nil
}
