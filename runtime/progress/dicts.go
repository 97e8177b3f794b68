package progress

import (
	"reflect"
	"strings"

	"github.com/kopf-go/kopf/runtime/body"
	"github.com/kopf-go/kopf/runtime/diffs"
	"github.com/kopf-go/kopf/runtime/patches"
)

// Helpers for nested fields of JSON-like trees (Kopf's dicts module).

var mapType = reflect.TypeOf(map[string]any{})

// asMap returns v as a map[string]any, sharing storage, if v is one or a
// named type of one (body.Body, patches.Patch, ...).
func asMap(v any) (map[string]any, bool) {
	switch m := v.(type) {
	case map[string]any:
		return m, true
	case body.Body:
		return m, true
	case patches.Patch:
		return m, true
	case nil:
		return nil, false
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Map && rv.Type().ConvertibleTo(mapType) {
		return rv.Convert(mapType).Interface().(map[string]any), true
	}
	return nil, false
}

// deepCopy copies maps and slices recursively; named map types and typed
// maps with string keys become map[string]any, slices become []any.
// Scalars are returned as they are.
func deepCopy(v any) any {
	if m, ok := asMap(v); ok {
		if m == nil {
			return map[string]any(nil)
		}
		out := make(map[string]any, len(m))
		for k, item := range m {
			out[k] = deepCopy(item)
		}
		return out
	}
	switch x := v.(type) {
	case nil, string, bool, float64, int64:
		return v
	case []any:
		if x == nil {
			return []any(nil)
		}
		out := make([]any, len(x))
		for i, item := range x {
			out[i] = deepCopy(item)
		}
		return out
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Map:
		if rv.Type().Key().Kind() != reflect.String {
			return v
		}
		out := make(map[string]any, rv.Len())
		iter := rv.MapRange()
		for iter.Next() {
			out[iter.Key().String()] = deepCopy(iter.Value().Interface())
		}
		return out
	case reflect.Slice:
		if rv.Type().Elem().Kind() == reflect.Uint8 {
			return v
		}
		out := make([]any, rv.Len())
		for i := range out {
			out[i] = deepCopy(rv.Index(i).Interface())
		}
		return out
	}
	return v
}

// resolve reads a nested field; see diffs.Resolve.
func resolve(obj any, path ...string) (any, bool) {
	return diffs.Resolve(obj, path)
}

// ensure sets a nested field, creating missing (or nil) intermediate maps.
// It does nothing and returns false if an intermediate value exists but is
// not a map, or if the path is empty.
func ensure(root map[string]any, path []string, value any) bool {
	if len(path) == 0 || root == nil {
		return false
	}
	cur := root
	for _, key := range path[:len(path)-1] {
		next, exists := cur[key]
		if !exists || next == nil {
			m := map[string]any{}
			cur[key] = m
			cur = m
			continue
		}
		m, ok := asMap(next)
		if !ok {
			return false
		}
		cur = m
	}
	cur[path[len(path)-1]] = value
	return true
}

// remove deletes a nested field, and then every parent map that it left
// empty (as Kopf's dicts.remove does). Absent fields and non-map parents are
// ignored.
func remove(root map[string]any, path []string) {
	if len(path) == 0 || root == nil {
		return
	}
	if len(path) == 1 {
		delete(root, path[0])
		return
	}
	child, ok := asMap(root[path[0]])
	if !ok {
		return
	}
	remove(child, path[1:])
	if len(child) == 0 {
		delete(root, path[0])
	}
}

// setPatch sets a nested field in a patch, creating (or replacing non-map)
// intermediate maps, as patches.Patch.Dict does.
func setPatch(p patches.Patch, path []string, value any) {
	p.Dict(path[:len(path)-1]...)[path[len(path)-1]] = value
}

// purgeField removes a field the merge-patch way: if the body has it (even
// as null), the patch sets it to null; otherwise, if only the pending patch
// has it, it is dropped from the patch (with its emptied parents).
func purgeField(b body.Body, p patches.Patch, path []string) {
	if _, inBody := resolve(b, path...); inBody {
		setPatch(p, path, nil)
	} else if _, inPatch := resolve(p, path...); inPatch {
		remove(p, path)
	}
}

// annotationPath is the path of an annotation inside a body or a patch.
func annotationPath(key string) []string {
	return []string{"metadata", "annotations", key}
}

// storeMarker adds "<prefix>/kopf-managed": "yes" to the patch unless the
// prefix starts with "kopf." or the marker is already in the body or in the
// patch, so that other Kopf-based operators exclude this prefix from their
// essences.
func storeMarker(prefix string, b body.Body, p patches.Patch) {
	if prefix == "" || strings.HasPrefix(prefix, "kopf.") {
		return
	}
	path := annotationPath(prefix + "/" + MarkerName)
	if _, ok := resolve(b, path...); ok {
		return
	}
	if _, ok := resolve(p, path...); ok {
		return
	}
	setPatch(p, path, "yes")
}

// isFalsy mirrors Python's truthiness for JSON values: nil, false, zero,
// "", and empty maps and lists are falsy.
func isFalsy(v any) bool {
	if v == nil {
		return true
	}
	if m, ok := asMap(v); ok {
		return len(m) == 0
	}
	switch x := v.(type) {
	case bool:
		return !x
	case string:
		return x == ""
	case []any:
		return len(x) == 0
	}
	if diffs.Equal(v, int64(0)) {
		return true
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Slice, reflect.Map, reflect.String:
		return rv.Len() == 0
	}
	return false
}
