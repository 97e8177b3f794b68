package admission

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/kopf-go/kopf/runtime/patches"
)

// patchOp is one operation of a JSON Patch (RFC 6902), as mutating
// webhooks answer: add, remove or replace (no test operations, as Kopf).
type patchOp struct {
	Op    string `json:"op"`
	Path  string `json:"path"`
	Value any    `json:"value,omitempty"`
}

// MarshalJSON writes value for add and replace even when it is null.
func (o patchOp) MarshalJSON() ([]byte, error) {
	if o.Op == "remove" {
		return json.Marshal(struct {
			Op   string `json:"op"`
			Path string `json:"path"`
		}{o.Op, o.Path})
	}
	return json.Marshal(struct {
		Op    string `json:"op"`
		Path  string `json:"path"`
		Value any    `json:"value"`
	}{o.Op, o.Path, o.Value})
}

// jsonPatch returns the JSON Patch that turns obj into obj with the merge
// patch p applied (Kopf's Patch.as_json_patch): p is applied to a copy of
// obj as a JSON merge patch (RFC 7386: nil removes a key, a map merges
// into a map, anything else replaces), and the ops are the differences
// between the two, key by key in sorted order; lists are replaced whole.
// Changes that change nothing (removing an absent key, setting a value
// already there) make no op. obj is not modified.
func jsonPatch(obj map[string]any, p patches.Patch) ([]patchOp, error) {
	if len(p) == 0 {
		return nil, nil
	}
	// Normalise the patch's values to what JSON decoding gives (int64,
	// float64, map[string]any, []any): handlers may put any value that
	// encodes to JSON, as the reactor's merge patches allow.
	data, err := json.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("encoding the patch: %w", err)
	}
	var merge map[string]any
	if err := utiljson.Unmarshal(data, &merge); err != nil {
		return nil, fmt.Errorf("decoding the patch: %w", err)
	}
	after := mergeApply(obj, merge)
	var ops []patchOp
	diffOps(&ops, "", obj, after)
	return ops, nil
}

// mergeApply returns dst with the merge patch applied, sharing what it
// does not change with dst (which it never modifies).
func mergeApply(dst map[string]any, patch map[string]any) map[string]any {
	out := make(map[string]any, len(dst)+len(patch))
	for k, v := range dst {
		out[k] = v
	}
	for k, v := range patch {
		switch pv := v.(type) {
		case nil:
			delete(out, k)
		case map[string]any:
			sub, _ := out[k].(map[string]any)
			out[k] = mergeApply(sub, pv)
		default:
			out[k] = v
		}
	}
	return out
}

// diffOps appends the ops turning a into b (both objects) at path.
func diffOps(ops *[]patchOp, path string, a, b map[string]any) {
	keys := make([]string, 0, len(a)+len(b))
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		p := path + "/" + escapePointer(k)
		av, inA := a[k]
		bv, inB := b[k]
		switch {
		case !inB:
			*ops = append(*ops, patchOp{Op: "remove", Path: p})
		case !inA:
			*ops = append(*ops, patchOp{Op: "add", Path: p, Value: bv})
		default:
			am, aok := av.(map[string]any)
			bm, bok := bv.(map[string]any)
			if aok && bok {
				diffOps(ops, p, am, bm)
			} else if !reflect.DeepEqual(av, bv) {
				*ops = append(*ops, patchOp{Op: "replace", Path: p, Value: bv})
			}
		}
	}
}

// escapePointer escapes a key for a JSON Pointer (RFC 6901).
func escapePointer(k string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(k)
}
