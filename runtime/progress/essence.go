package progress

import (
	"strings"

	"github.com/kopf-go/kopf/runtime/body"
)

// LastAppliedAnnotation is kubectl's annotation, never part of an essence.
const LastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"

// ShardLabelPrefix begins the keys of the bucket labels of sharding's
// label mode (runtime/sharding.LabelPrefix; a test there holds them
// equal). They are the runtime's bookkeeping, written after the object
// may have been handled (by the labeller, or anew when the number of
// buckets changes): never part of an essence, so that labelling is not a
// change. Kopf has no such labels: the essences of other objects are
// Kopf's.
const ShardLabelPrefix = "kopf.dev/sharding-bucket-of-"

// BuildEssence computes the storage-independent essence of an object, as
// Kopf's DiffBaseStorage.build does, in this order:
//
//  1. a deep copy of the body without apiVersion, kind, metadata and status;
//  2. metadata.labels and metadata.annotations re-added (deep copies) if
//     the body has them;
//  3. from those annotations, removed: kubectl's last-applied-configuration
//     and every annotation under a prefix managed by a Kopf-based operator
//     (see MarkedPrefixes), this operator's included; from the labels,
//     sharding's bucket labels (ShardLabelPrefix; not Kopf's);
//  4. every extra field (the fields of field handlers, e.g. status.x) that
//     the body has re-added as a deep copy, even if step 1 or 3 removed it;
//     intermediate maps are created, and a field whose parent in the
//     essence is not a map is skipped;
//  5. empty (in Python's sense: nil, "", 0, false, {} or []) labels,
//     annotations, metadata and status removed;
//  6. every ignored field removed, with the maps that this leaves empty
//     (absent fields and empty paths are skipped).
//
// The body is not modified and the result shares nothing with it. Storages
// then remove their own data (e.g. the diff-base key itself) and empty
// stanzas again; use a DiffBaseStorage's Build rather than this function.
func BuildEssence(b body.Body, extraFields, ignoredFields [][]string) map[string]any {
	essence := map[string]any{}
	for k, v := range b {
		switch k {
		case "apiVersion", "kind", "metadata", "status":
			continue
		}
		essence[k] = deepCopy(v)
	}
	cherrypick(b, essence, [][]string{{"metadata", "labels"}, {"metadata", "annotations"}})

	annotations, _ := resolve(essence, "metadata", "annotations")
	if m, ok := asMap(annotations); ok {
		keys := make([]string, 0, len(m))
		for key := range m {
			keys = append(keys, key)
		}
		marked := MarkedPrefixes(keys)
		for key := range m {
			if key == LastAppliedAnnotation {
				delete(m, key)
				continue
			}
			if prefix, _, ok := strings.Cut(key, "/"); ok && marked[prefix] {
				delete(m, key)
			}
		}
	}

	labels, _ := resolve(essence, "metadata", "labels")
	if m, ok := asMap(labels); ok {
		for key := range m {
			if strings.HasPrefix(key, ShardLabelPrefix) {
				delete(m, key)
			}
		}
	}

	cherrypick(b, essence, extraFields)
	removeEmptyStanzas(essence)
	for _, field := range ignoredFields {
		remove(essence, field)
	}
	return essence
}

// MarkedPrefixes returns the annotation prefixes, among the given keys,
// that belong to Kopf-based operators (Kopf's _detect_marked_prefixes): a
// prefix having a "<prefix>/kopf-managed" key, and "kopf.zalando.org" and
// any "*.kopf.zalando.org" prefix. Keys without "/" are ignored.
func MarkedPrefixes(keys []string) map[string]bool {
	marked := map[string]bool{}
	for _, key := range keys {
		prefix, name, ok := strings.Cut(key, "/")
		if !ok {
			continue
		}
		if name == MarkerName || prefix == DefaultPrefix || strings.HasSuffix(prefix, "."+DefaultPrefix) {
			marked[prefix] = true
		}
	}
	return marked
}

// cherrypick copies the given fields from src into dst (deep copies),
// skipping fields that src does not have.
func cherrypick(src body.Body, dst map[string]any, fields [][]string) {
	for _, field := range fields {
		if len(field) == 0 {
			continue
		}
		if v, ok := resolve(src, field...); ok {
			ensure(dst, field, deepCopy(v))
		}
	}
}

// removeAnnotations removes the given annotation keys from an essence, in
// place.
func removeAnnotations(essence map[string]any, keys []string) {
	annotations, _ := resolve(essence, "metadata", "annotations")
	if m, ok := asMap(annotations); ok {
		for _, key := range keys {
			delete(m, key)
		}
	}
}

// removeEmptyStanzas removes, in place, metadata.annotations and
// metadata.labels if falsy, then metadata and status if falsy (Kopf's
// remove_empty_stanzas).
func removeEmptyStanzas(essence map[string]any) {
	if metadata, ok := asMap(essence["metadata"]); ok {
		for _, key := range []string{"annotations", "labels"} {
			if v, ok := metadata[key]; ok && isFalsy(v) {
				delete(metadata, key)
			}
		}
	}
	for _, key := range []string{"metadata", "status"} {
		if v, ok := essence[key]; ok && isFalsy(v) {
			delete(essence, key)
		}
	}
}
