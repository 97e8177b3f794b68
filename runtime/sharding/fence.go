package sharding

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	"k8s.io/client-go/dynamic"
)

// DefaultAnnotation is the annotation in which a replica stamps the objects
// it owns. It is under Kopf's default prefix of the progress annotations,
// which the diff-base's essence leaves out: the stamp is never a change
// that handlers see.
const DefaultAnnotation = "kopf.zalando.org/shard-owner"

// Fence rejects the writes of a replica that no longer owns the object.
//
// Why this way. An owner's stamp (an annotation naming the replica,
// written by the new owner before it handles the object) plus a
// precondition on every write of the operator's own patches, checked by the
// API server, not by the writer:
//
//   - a merge patch carries metadata.resourceVersion, which makes the API
//     server apply it only to that very version (409 Conflict otherwise),
//     and the version is one that the fence has seen stamped with this
//     replica's identity (in the watch or in the response to its own
//     write); on a conflict, the fence reads the object: if the stamp is
//     still its own (another writer changed the object), the patch is sent
//     again on the new version, else the conflict is the answer;
//   - a JSON patch (the finalizer's, already guarded by the
//     resourceVersion it was computed from) gets a "test" of the stamp.
//
// Once the new owner has stamped an object, every write of the previous
// owner is rejected by the API server, whatever that owner believes (it
// may have been paused past its lease): its base version either precedes
// the stamp (a conflict) or shows the new owner (never sent). A JSON patch
// `test` alone would need the merge patches turned into JSON patches,
// which cannot be done without the object (a merge patch creates the
// missing parents, a JSON patch fails on them); the resourceVersion
// precondition alone would let a stale owner write until the new one
// happens to write. The price: one write per object per hand-off (the
// stamp), and a re-read when someone else wrote in between.
//
// The writes are fenced explicitly: a Writer (Fence.Writer, one per
// resource) is the Patcher through which the operator's reactor sends its
// patches; it adds the precondition to each and passes it on to the
// unfenced Patcher it wraps. What does not go through a Writer (the
// handlers' own clients, the Leases) is not fenced.
type Fence struct {
	// Identity is the replica's, the stamp's value.
	Identity string
	// Annotation is the stamp's name (DefaultAnnotation if "").
	Annotation string

	mu    sync.Mutex
	known map[string]string // object key → resourceVersion seen stamped by Identity
}

// Key returns the stamp's annotation name.
func (f *Fence) Key() string {
	if f.Annotation == "" {
		return DefaultAnnotation
	}
	return f.Annotation
}

// Stamp returns the merge patch that stamps an object as this replica's.
func (f *Fence) Stamp() []byte {
	data, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{f.Key(): f.Identity}}})
	return data
}

// observe records a version of an object (by its key) with its stamp.
// Only the newest version stamped by this replica is kept; a version
// stamped by another replica forgets it.
func (f *Fence) observe(key, resourceVersion, stamp string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.known == nil {
		f.known = map[string]string{}
	}
	if old, ok := f.known[key]; ok && newer(old, resourceVersion) {
		return // an older version, arriving late
	}
	if stamp != f.Identity {
		delete(f.known, key)
		return
	}
	f.known[key] = resourceVersion
}

// forget drops what is known of an object.
func (f *Fence) forget(key string) {
	f.mu.Lock()
	delete(f.known, key)
	f.mu.Unlock()
}

func (f *Fence) lookup(key string) (string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	rv, ok := f.known[key]
	return rv, ok
}

// newer says whether a is a later resourceVersion than b. Versions are
// opaque in general, but comparable in Kubernetes (KEP-5504: decimal
// integers, increasing with every write): when both are well formed,
// they are compared as apimachinery's resourceversion does (as the
// queue's streams compare them); otherwise the latest seen wins.
func newer(a, b string) bool {
	c, err := resourceversion.CompareResourceVersion(a, b)
	return err == nil && c > 0
}

// testStamp prepends a test of the stamp to a JSON patch.
func (f *Fence) testStamp(data []byte) ([]byte, error) {
	var ops []any
	if err := json.Unmarshal(data, &ops); err != nil {
		return nil, fmt.Errorf("fencing a JSON patch: %w", err)
	}
	test := map[string]any{"op": "test", "path": "/metadata/annotations/" + escapePointer(f.Key()), "value": f.Identity}
	return json.Marshal(append([]any{test}, ops...))
}

// escapePointer escapes a key as a JSON pointer's token (RFC 6901).
func escapePointer(key string) string {
	return strings.ReplaceAll(strings.ReplaceAll(key, "~", "~0"), "/", "~1")
}

// withResourceVersion sets metadata.resourceVersion in a merge patch.
func withResourceVersion(data []byte, rv string) ([]byte, error) {
	var patch map[string]any
	if err := json.Unmarshal(data, &patch); err != nil {
		return nil, fmt.Errorf("fencing a merge patch: %w", err)
	}
	if patch == nil {
		patch = map[string]any{}
	}
	meta, _ := patch["metadata"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
		patch["metadata"] = meta
	}
	meta["resourceVersion"] = rv
	return json.Marshal(patch)
}

// Patcher sends one patch of an object and returns the patched object's
// resourceVersion, with the API server's errors as client-go returns them.
// Its method set is runtime/reactor's Patcher's, which this package does
// not import: reactor.ClientPatcher is one, and a Writer is one too.
type Patcher interface {
	Patch(ctx context.Context, namespace, name string, pt types.PatchType, data []byte, subresources ...string) (resourceVersion string, err error)
}

// Getter reads an object of a resource (namespace "" for a cluster-scoped
// one, or for a namespaced one by its cluster-wide path).
type Getter interface {
	Get(ctx context.Context, namespace, name string) (*unstructured.Unstructured, error)
}

// DynamicGetter is the Getter of a dynamic client.
type DynamicGetter struct {
	Client dynamic.NamespaceableResourceInterface
}

// Get reads the object.
func (g DynamicGetter) Get(ctx context.Context, namespace, name string) (*unstructured.Unstructured, error) {
	if namespace != "" {
		return g.Client.Namespace(namespace).Get(ctx, name, metav1.GetOptions{})
	}
	return g.Client.Get(ctx, name, metav1.GetOptions{})
}
