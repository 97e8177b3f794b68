package reactor

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/kopf-go/kopf/internal/testutil"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kopf-go/kopf/runtime/body"
	"github.com/kopf-go/kopf/runtime/queueing"
	"github.com/kopf-go/kopf/runtime/registry"
	"github.com/kopf-go/kopf/runtime/resources"
	"github.com/kopf-go/kopf/runtime/settings"
	"github.com/kopf-go/kopf/runtime/watching"
)

// The unit tests of the processing cycle: a Reactor patching through
// client-go's fake dynamic client (its Client path), one object in the
// fake's tracker, cycles fed with the tracker's current version of it.

var (
	testGVR      = schema.GroupVersionResource{Group: "kopf.dev", Version: "v1", Resource: "kopfexamples"}
	testSelector = resources.Selector{Group: "kopf.dev", Version: "v1", Name: "kopfexamples"}
	testResource = resources.Resource{
		Group: "kopf.dev", Version: "v1", Plural: "kopfexamples", Singular: "kopfexample",
		Kind: "KopfExample", Namespaced: true,
		Verbs: []string{"get", "list", "watch", "patch"},
	}
)

const testFinalizer = "kopf.zalando.org/KopfFinalizerMarker"

// logBuffer is a concurrency-safe buffer of JSON log records.
type logBuffer struct{ testutil.Buffer }

// logRecord is one record as written by slog's JSON handler.
type logRecord struct {
	Level string `json:"level"`
	Msg   string `json:"msg"`
	Stack string `json:"stack"`
}

func (l logRecord) String() string { return l.Level + " " + l.Msg }

// records decodes what was logged so far.
func (b *logBuffer) records(t *testing.T) []logRecord {
	t.Helper()
	var out []logRecord
	dec := json.NewDecoder(bytes.NewReader(b.Bytes()))
	for dec.More() {
		var r logRecord
		if err := dec.Decode(&r); err != nil {
			t.Fatalf("undecodable log output: %v", err)
		}
		out = append(out, r)
	}
	return out
}

// harness drives a Reactor over one object in a fake dynamic client.
type harness struct {
	t      *testing.T
	r      *Reactor
	client *fake.FakeDynamicClient
	reg    *registry.Registry
	logs   *logBuffer
	mem    *memory
	stream *queueing.Stream
	ns     string
	name   string
}

// newHarness returns a harness serving obj (a KopfExample without
// apiVersion and kind, which are added) with the handlers that register
// adds. The settings are the defaults; tests may change h.r.Settings.
func newHarness(t *testing.T, obj map[string]any, register func(reg *registry.Registry)) *harness {
	t.Helper()
	obj = body.DeepCopyValue(obj).(map[string]any)
	obj["apiVersion"], obj["kind"] = "kopf.dev/v1", "KopfExample"
	meta, _ := obj["metadata"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
		obj["metadata"] = meta
	}
	for k, v := range map[string]any{"name": "obj", "namespace": "ns", "uid": "uid-1", "resourceVersion": "1"} {
		if _, ok := meta[k]; !ok {
			meta[k] = v
		}
	}
	client := fake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{testGVR: "KopfExampleList"},
		&unstructured.Unstructured{Object: obj})
	reg := registry.New()
	if register != nil {
		register(reg)
	}
	logs := &logBuffer{}
	logger := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	s := settings.Default()
	s.Networking.RequestTimeout = 0
	// The fake keeps the resourceVersion, and no watch stream brings the
	// patched version back: do not wait for it.
	s.Persistence.ConsistencyTimeout = time.Millisecond
	r := &Reactor{Resource: testResource, Client: client.Resource(testGVR), Registry: reg, Settings: s, Logger: logger}
	h := &harness{t: t, r: r, client: client, reg: reg, logs: logs, stream: &queueing.Stream{},
		ns: meta["namespace"].(string), name: meta["name"].(string)}
	h.mem = r.memory(h.key(), meta["uid"].(string))
	return h
}

func (h *harness) key() string { return h.ns + "/" + h.name }

// object returns the object's current version in the fake's tracker.
func (h *harness) object() body.Body {
	h.t.Helper()
	u, err := h.client.Resource(testGVR).Namespace(h.ns).Get(context.Background(), h.name, metav1GetOptions)
	if err != nil {
		h.t.Fatalf("getting the object: %v", err)
	}
	return body.Body(u.Object)
}

// update changes the object in the tracker, as a user would.
func (h *harness) update(change func(obj map[string]any)) {
	h.t.Helper()
	obj := map[string]any(h.object().DeepCopy())
	change(obj)
	if _, err := h.client.Resource(testGVR).Namespace(h.ns).Update(context.Background(), &unstructured.Unstructured{Object: obj}, metav1UpdateOptions); err != nil {
		h.t.Fatalf("updating the object: %v", err)
	}
}

// cycle runs one processing cycle of the object's current version and
// returns the patches it sent. A cycle that waits for a delayed handler
// is followed, after the delay, by its touch, as its requeue would be
// (see Reactor.resume).
func (h *harness) cycle(ctx context.Context) ([]k8stesting.PatchAction, error) {
	h.t.Helper()
	before := len(h.client.Actions())
	b := h.object()
	err := h.r.cycle(ctx, b, h.mem, h.stream, h.r.Logger)
	if err == nil && h.mem.wait == waitDelayed {
		h.mem.wait = waitNone
		time.Sleep(h.mem.delay)
		err = h.r.touch(ctx, b, h.stream)
	}
	return h.patchesSince(before), err
}

// process runs Process on an event of the object's current version, and
// on the requeues that follow it, each after its delay (queueing.Drive),
// and returns the patches sent.
func (h *harness) process(ctx context.Context, typ watching.Type) []k8stesting.PatchAction {
	h.t.Helper()
	before := len(h.client.Actions())
	queueing.Drive(ctx, h.r.Process, watching.Event{Type: typ, Key: h.key(), Object: h.object()}, h.stream)
	return h.patchesSince(before)
}

func (h *harness) patchesSince(n int) []k8stesting.PatchAction {
	var out []k8stesting.PatchAction
	for _, a := range h.client.Actions()[n:] {
		if p, ok := a.(k8stesting.PatchAction); ok {
			out = append(out, p)
		}
	}
	return out
}

// settle runs cycles until one sends no patch (at most max), failing the
// test on a cycle's error. It returns every patch sent.
func (h *harness) settle(ctx context.Context, max int) []k8stesting.PatchAction {
	h.t.Helper()
	var all []k8stesting.PatchAction
	for i := 0; i < max; i++ {
		patches, err := h.cycle(ctx)
		if err != nil {
			h.t.Fatalf("cycle %d: %v", i, err)
		}
		if len(patches) == 0 {
			return all
		}
		all = append(all, patches...)
	}
	h.t.Fatalf("the object is still being patched after %d cycles", max)
	return nil
}

// messages returns the logged messages, "LEVEL msg" each.
func (h *harness) messages() []string {
	h.t.Helper()
	var out []string
	for _, r := range h.logs.records(h.t) {
		out = append(out, r.String())
	}
	return out
}

// countLogs counts the records whose "LEVEL msg" contains substr.
func (h *harness) countLogs(substr string) int {
	h.t.Helper()
	n := 0
	for _, m := range h.messages() {
		if strings.Contains(m, substr) {
			n++
		}
	}
	return n
}

// patchData decodes a patch's JSON.
func patchData(t *testing.T, p k8stesting.PatchAction) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(p.GetPatch(), &v); err != nil {
		t.Fatalf("undecodable patch %s: %v", p.GetPatch(), err)
	}
	return v
}

// resolve returns the value at a path of a JSON-like tree.
func resolve(v any, path ...string) (any, bool) {
	for _, key := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = m[key]; !ok {
			return nil, false
		}
	}
	return v, true
}

var (
	metav1GetOptions    = metav1.GetOptions{}
	metav1UpdateOptions = metav1.UpdateOptions{}
)

// runtimeObject is the object type of the fake's reactors.
type runtimeObject = runtime.Object
