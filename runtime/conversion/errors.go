package conversion

import "fmt"

// Error is a failed conversion of one object: it fails the review it is
// in, with this message in the API server's answer.
type Error struct {
	Kind   string // the object's kind
	Object string // namespace/name, or name
	From   string // the object's apiVersion
	To     string // the desired apiVersion
	Reason string
	Err    error // the conversion function's error, if it failed
}

func (e *Error) Error() string {
	return fmt.Sprintf("Conversion of %s %s from %s to %s failed: %s", e.Kind, e.Object, e.From, e.To, e.Reason)
}

func (e *Error) Unwrap() error { return e.Err }

// objectRef is namespace/name of an object, or its name.
func objectRef(obj map[string]any) string {
	meta, _ := obj["metadata"].(map[string]any)
	name, _ := meta["name"].(string)
	if name == "" {
		if gn, _ := meta["generateName"].(string); gn != "" {
			name = gn + "*"
		}
	}
	if ns, _ := meta["namespace"].(string); ns != "" {
		return ns + "/" + name
	}
	return name
}

// cloneJSON deep-copies the maps and slices of a JSON tree (the
// conversion functions get copies: a failed one leaves the object as
// received).
func cloneJSON(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[k] = cloneJSON(x)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = cloneJSON(x)
		}
		return out
	}
	return v
}

// nonEmpty is v, or nil for an empty map, slice or string.
func nonEmpty(v any) any {
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 {
			return nil
		}
	case []any:
		if len(x) == 0 {
			return nil
		}
	case string:
		if x == "" {
			return nil
		}
	}
	return v
}
