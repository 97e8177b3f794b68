package sharding

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

// DefaultAnnotation is the annotation in which a replica stamps the objects
// it owns. It is under Kopf's default prefix of the progress annotations,
// which the diff-base's essence leaves out: the stamp is never a change
// that handlers see.
const DefaultAnnotation = "kopf.zalando.org/shard-owner"

// StampHeader marks a request as the owner's stamp: the fence lets it
// through unguarded (and removes the header).
const StampHeader = "X-Kopf-Shard-Stamp"

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
// Fence is an http.RoundTripper wrapper (Wrap) for the operator's client,
// below the authentication: it acts on PATCH requests to the objects of
// the collections given to Guard, and on nothing else.
type Fence struct {
	// Identity is the replica's, the stamp's value.
	Identity string
	// Annotation is the stamp's name (DefaultAnnotation if "").
	Annotation string

	mu          sync.Mutex
	collections map[string]bool   // cluster-wide collection paths that are fenced
	known       map[string]string // object path → resourceVersion seen stamped by Identity
}

// Key returns the stamp's annotation name.
func (f *Fence) Key() string {
	if f.Annotation == "" {
		return DefaultAnnotation
	}
	return f.Annotation
}

// Guard fences the objects of a collection, given by its cluster-wide path
// (e.g. /apis/kopf.dev/v1/kopfexamples or /api/v1/pods).
func (f *Fence) Guard(collection string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.collections == nil {
		f.collections = map[string]bool{}
	}
	f.collections[collection] = true
}

// Observe records a version of an object (at its path, e.g.
// /apis/g/v/namespaces/ns/plural/name) with its stamp, as the watch
// delivers it or a write returns it. Only the newest version stamped by
// this replica is kept; a version stamped by another replica forgets it.
func (f *Fence) Observe(path, resourceVersion, stamp string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.known == nil {
		f.known = map[string]string{}
	}
	if old, ok := f.known[path]; ok && newer(old, resourceVersion) {
		return // an older version, arriving late
	}
	if stamp != f.Identity {
		delete(f.known, path)
		return
	}
	f.known[path] = resourceVersion
}

// Forget drops what is known of an object (it is deleted, or no longer
// owned).
func (f *Fence) Forget(path string) {
	f.mu.Lock()
	delete(f.known, path)
	f.mu.Unlock()
}

// newer says whether a is a later resourceVersion than b. Versions are
// opaque in general, but etcd's are increasing integers: when both parse,
// they are compared; otherwise the latest seen wins.
func newer(a, b string) bool {
	x, err1 := strconv.ParseUint(a, 10, 64)
	y, err2 := strconv.ParseUint(b, 10, 64)
	return err1 == nil && err2 == nil && x > y
}

func (f *Fence) lookup(path string) (string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	rv, ok := f.known[path]
	return rv, ok
}

// objectPath returns the path of the object a request is about, without
// /status, if the request is a PATCH of a fenced collection's object.
func (f *Fence) objectPath(req *http.Request) (string, bool) {
	if req.Method != http.MethodPatch {
		return "", false
	}
	p := strings.TrimSuffix(req.URL.Path, "/status")
	i := strings.LastIndexByte(p, '/')
	if i <= 0 {
		return "", false
	}
	coll := p[:i]
	if j := strings.Index(coll, "/namespaces/"); j >= 0 {
		rest := coll[j+len("/namespaces/"):]
		if k := strings.IndexByte(rest, '/'); k >= 0 {
			coll = coll[:j] + rest[k:]
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return p, f.collections[coll]
}

// Wrap returns rt fenced.
func (f *Fence) Wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		if req.Header.Get(StampHeader) != "" {
			req = req.Clone(req.Context())
			req.Header.Del(StampHeader)
			return f.record(rt.RoundTrip(req))
		}
		path, ok := f.objectPath(req)
		if !ok {
			return rt.RoundTrip(req)
		}
		return f.patch(rt, req, path)
	})
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// maxConflicts bounds the re-reads of a merge patch whose object others
// keep changing.
const maxConflicts = 4

func (f *Fence) patch(rt http.RoundTripper, req *http.Request, path string) (*http.Response, error) {
	data, err := readBody(req)
	if err != nil {
		return nil, err
	}
	jsonPatch := strings.HasPrefix(req.Header.Get("Content-Type"), "application/json-patch+json")
	for attempt := 0; ; attempt++ {
		var body []byte
		if jsonPatch {
			body, err = f.testStamp(data)
		} else {
			rv, ok := f.lookup(path)
			if !ok {
				var mine bool
				rv, mine, err = f.read(rt, req, path)
				if err != nil {
					return nil, err
				}
				if !mine {
					return conflict(req, fmt.Sprintf("the object is not owned by this replica (%s) anymore: the write is fenced", f.Identity)), nil
				}
			}
			body, err = withResourceVersion(data, rv)
		}
		if err != nil {
			return nil, err
		}
		out := req.Clone(req.Context())
		out.Body = io.NopCloser(bytes.NewReader(body))
		out.ContentLength = int64(len(body))
		out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
		resp, err := rt.RoundTrip(out)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode == http.StatusConflict && !jsonPatch && attempt < maxConflicts {
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			f.Forget(path)
			continue
		}
		return f.recordAt(path, resp, nil)
	}
}

// testStamp prepends a test of the stamp to a JSON patch.
func (f *Fence) testStamp(data []byte) ([]byte, error) {
	var ops []any
	if err := json.Unmarshal(data, &ops); err != nil {
		return nil, fmt.Errorf("fencing a JSON patch: %w", err)
	}
	key := strings.ReplaceAll(strings.ReplaceAll(f.Key(), "~", "~0"), "/", "~1")
	test := map[string]any{"op": "test", "path": "/metadata/annotations/" + key, "value": f.Identity}
	return json.Marshal(append([]any{test}, ops...))
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

// read GETs the object and says its resourceVersion and whether the stamp
// is this replica's.
func (f *Fence) read(rt http.RoundTripper, req *http.Request, path string) (string, bool, error) {
	get, err := http.NewRequestWithContext(req.Context(), http.MethodGet, req.URL.String(), nil)
	if err != nil {
		return "", false, err
	}
	get.URL.Path = path
	get.URL.RawPath = ""
	get.URL.RawQuery = ""
	for k, v := range req.Header {
		if k != "Content-Type" && k != "Content-Length" {
			get.Header[k] = v
		}
	}
	get.Header.Set("Accept", "application/json")
	resp, err := rt.RoundTrip(get)
	if err != nil {
		return "", false, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", false, err
	}
	if resp.StatusCode != http.StatusOK {
		return "", false, nil // gone or unreadable: not ours to write
	}
	rv, stamp := f.meta(data)
	f.Observe(path, rv, stamp)
	return rv, stamp == f.Identity, nil
}

// record notes the version that a stamp's response returns.
func (f *Fence) record(resp *http.Response, err error) (*http.Response, error) {
	if err != nil || resp.Request == nil {
		return resp, err
	}
	return f.recordAt(strings.TrimSuffix(resp.Request.URL.Path, "/status"), resp, nil)
}

// recordAt notes the version that a successful write returns, keeping the
// response's body readable.
func (f *Fence) recordAt(path string, resp *http.Response, err error) (*http.Response, error) {
	if err != nil || resp.StatusCode/100 != 2 {
		return resp, err
	}
	data, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(data))
	rv, stamp := f.meta(data)
	if rv != "" {
		f.Observe(path, rv, stamp)
	}
	return resp, nil
}

// meta reads an object's resourceVersion and stamp.
func (f *Fence) meta(data []byte) (rv, stamp string) {
	var obj struct {
		Metadata struct {
			ResourceVersion string            `json:"resourceVersion"`
			Annotations     map[string]string `json:"annotations"`
		} `json:"metadata"`
	}
	if json.Unmarshal(data, &obj) != nil {
		return "", ""
	}
	return obj.Metadata.ResourceVersion, obj.Metadata.Annotations[f.Key()]
}

func readBody(req *http.Request) ([]byte, error) {
	if req.Body == nil {
		return nil, nil
	}
	defer req.Body.Close()
	return io.ReadAll(req.Body)
}

// conflict is the API server's 409 answer, made here: client-go decodes it
// as a Conflict error.
func conflict(req *http.Request, message string) *http.Response {
	status := map[string]any{"kind": "Status", "apiVersion": "v1", "metadata": map[string]any{}, "status": "Failure", "message": message, "reason": "Conflict", "code": http.StatusConflict}
	data, _ := json.Marshal(status)
	return &http.Response{
		StatusCode:    http.StatusConflict,
		Status:        "409 Conflict",
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        http.Header{"Content-Type": []string{"application/json"}},
		Body:          io.NopCloser(bytes.NewReader(data)),
		ContentLength: int64(len(data)),
		Request:       req,
	}
}

// Stamp returns the merge patch that stamps an object as this replica's.
func (f *Fence) Stamp() []byte {
	data, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{f.Key(): f.Identity}}})
	return data
}
