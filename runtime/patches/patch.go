// Package patches accumulates the changes that handlers and the reactor want
// to make to one object during one processing cycle, and renders them as the
// JSON merge patches (RFC 7386) that the reactor sends.
//
// A Patch is a merge patch document: a nil value means "remove this key".
// It is not safe for concurrent use; each object's cycle has its own.
package patches

// Patch is a JSON merge patch under construction.
type Patch map[string]any

// New returns an empty patch.
func New() Patch { return Patch{} }

// Dict returns the nested map at path, creating the intermediate maps.
// A non-map value in the way is replaced.
func (p Patch) Dict(path ...string) map[string]any {
	cur := map[string]any(p)
	for _, key := range path {
		next, ok := cur[key].(map[string]any)
		if !ok {
			next = map[string]any{}
			cur[key] = next
		}
		cur = next
	}
	return cur
}

// Metadata returns the metadata part of the patch, creating it if needed.
func (p Patch) Metadata() map[string]any { return p.Dict("metadata") }

// Spec returns the spec part of the patch, creating it if needed.
func (p Patch) Spec() map[string]any { return p.Dict("spec") }

// Status returns the status part of the patch, creating it if needed.
func (p Patch) Status() map[string]any { return p.Dict("status") }

// SetAnnotation sets (or, with a nil value, removes) one annotation.
func (p Patch) SetAnnotation(key string, value *string) {
	anns := p.Dict("metadata", "annotations")
	if value == nil {
		anns[key] = nil
	} else {
		anns[key] = *value
	}
}

// IsEmpty reports whether the patch would change nothing.
func (p Patch) IsEmpty() bool { return isEmpty(map[string]any(p)) }

func isEmpty(m map[string]any) bool {
	for _, v := range m {
		sub, ok := v.(map[string]any)
		if !ok || !isEmpty(sub) {
			return false
		}
	}
	return true
}

// Split separates the status part from the rest, for resources whose status
// is a subresource and must be patched through /status. Either part is nil
// when empty. The receiver is not modified.
func (p Patch) Split() (main, status Patch) {
	for k, v := range p {
		if k == "status" {
			if sub, ok := v.(map[string]any); ok && !isEmpty(sub) {
				status = Patch{"status": sub}
			} else if !ok {
				status = Patch{"status": v}
			}
			continue
		}
		if main == nil {
			main = Patch{}
		}
		main[k] = v
	}
	if main != nil && main.IsEmpty() {
		main = nil
	}
	return main, status
}

// Merge merges a handler's result into status.<id> the way Kopf does: a map
// is merged key by key into what is already there; any other value replaces
// it. A nil result changes nothing.
func (p Patch) MergeResult(id string, result any) {
	if result == nil {
		return
	}
	status := p.Status()
	if m, ok := result.(map[string]any); ok {
		dst, ok := status[id].(map[string]any)
		if !ok {
			dst = map[string]any{}
			status[id] = dst
		}
		for k, v := range m {
			dst[k] = v
		}
		return
	}
	status[id] = result
}
