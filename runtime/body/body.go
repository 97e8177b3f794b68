// Package body gives names and accessors to the parts of a Kubernetes object
// as the reactor sees it: an untyped JSON-like tree (map[string]any), exactly
// as decoded from the API server.
//
// A Body is never modified by the reactor or by the accessors here; handlers
// that want to change an object write to a patches.Patch instead. Handlers
// get a deep copy (Body.DeepCopy), so what they change in it anyway is
// theirs alone. The
// accessors return the zero value when a part is absent or has an unexpected
// type, and never panic.
package body

// Body is a whole Kubernetes object as decoded from JSON.
type Body map[string]any

// Meta is the metadata part of a Body.
type Meta map[string]any

// Spec is the spec part of a Body (absent for kinds without one).
type Spec map[string]any

// Status is the status part of a Body.
type Status map[string]any

// Meta returns the object's metadata, or nil.
func (b Body) Meta() Meta { m, _ := b["metadata"].(map[string]any); return m }

// Spec returns the object's spec, or nil.
func (b Body) Spec() Spec { m, _ := b["spec"].(map[string]any); return m }

// Status returns the object's status, or nil.
func (b Body) Status() Status { m, _ := b["status"].(map[string]any); return m }

// APIVersion returns the object's apiVersion.
func (b Body) APIVersion() string { s, _ := b["apiVersion"].(string); return s }

// Kind returns the object's kind.
func (b Body) Kind() string { s, _ := b["kind"].(string); return s }

// Name returns metadata.name.
func (m Meta) Name() string { return m.str("name") }

// Namespace returns metadata.namespace ("" for cluster-scoped objects).
func (m Meta) Namespace() string { return m.str("namespace") }

// UID returns metadata.uid.
func (m Meta) UID() string { return m.str("uid") }

// ResourceVersion returns metadata.resourceVersion.
func (m Meta) ResourceVersion() string { return m.str("resourceVersion") }

// DeletionTimestamp returns metadata.deletionTimestamp as written by the
// API server, or "" when the object is not being deleted.
func (m Meta) DeletionTimestamp() string { return m.str("deletionTimestamp") }

// Labels returns a copy of metadata.labels (never nil).
func (m Meta) Labels() map[string]string { return m.strMap("labels") }

// Annotations returns a copy of metadata.annotations (never nil).
func (m Meta) Annotations() map[string]string { return m.strMap("annotations") }

// Finalizers returns metadata.finalizers.
func (m Meta) Finalizers() []string {
	raw, _ := m["finalizers"].([]any)
	out := make([]string, 0, len(raw))
	for _, v := range raw {
		if s, ok := v.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

func (m Meta) str(key string) string { s, _ := m[key].(string); return s }

func (m Meta) strMap(key string) map[string]string {
	raw, _ := m[key].(map[string]any)
	out := make(map[string]string, len(raw))
	for k, v := range raw {
		if s, ok := v.(string); ok {
			out[k] = s
		}
	}
	return out
}

// Ref returns the object's "namespace/name" (or "name" when cluster-scoped),
// the prefix of every log line about the object.
func (b Body) Ref() string {
	m := b.Meta()
	if ns := m.Namespace(); ns != "" {
		return ns + "/" + m.Name()
	}
	return m.Name()
}

// DeepCopy returns a copy of the body that shares nothing mutable with it
// (see DeepCopyValue). The reactor gives user code such a copy, so that
// what a handler or a callback changes in it is never seen by the reactor.
func (b Body) DeepCopy() Body {
	if b == nil {
		return nil
	}
	return Body(deepCopyMap(b))
}

// DeepCopyValue returns a copy of a JSON-like value that shares nothing
// mutable with it: maps (map[string]any, map[string]string) and slices
// ([]any, []string, []map[string]any) are copied recursively, nil ones
// staying nil; any other value (strings, numbers, booleans, nil) is
// immutable and returned as is.
func DeepCopyValue(v any) any {
	switch v := v.(type) {
	case map[string]any:
		if v == nil {
			return v
		}
		return deepCopyMap(v)
	case Body:
		return v.DeepCopy()
	case Meta:
		if v == nil {
			return v
		}
		return Meta(deepCopyMap(v))
	case Spec:
		if v == nil {
			return v
		}
		return Spec(deepCopyMap(v))
	case Status:
		if v == nil {
			return v
		}
		return Status(deepCopyMap(v))
	case []any:
		if v == nil {
			return v
		}
		c := make([]any, len(v))
		for i, item := range v {
			c[i] = DeepCopyValue(item)
		}
		return c
	case map[string]string:
		if v == nil {
			return v
		}
		c := make(map[string]string, len(v))
		for k, s := range v {
			c[k] = s
		}
		return c
	case []string:
		if v == nil {
			return v
		}
		return append([]string(nil), v...)
	case []map[string]any:
		if v == nil {
			return v
		}
		c := make([]map[string]any, len(v))
		for i, m := range v {
			if m != nil {
				c[i] = deepCopyMap(m)
			}
		}
		return c
	default:
		return v
	}
}

func deepCopyMap(m map[string]any) map[string]any {
	c := make(map[string]any, len(m))
	for k, v := range m {
		c[k] = DeepCopyValue(v)
	}
	return c
}
