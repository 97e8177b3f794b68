package reactor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/kopf-go/kopf/runtime/body"
	"github.com/kopf-go/kopf/runtime/causes"
	"github.com/kopf-go/kopf/runtime/kwargs"
	"github.com/kopf-go/kopf/runtime/queueing"
	"github.com/kopf-go/kopf/runtime/registry"
	"github.com/kopf-go/kopf/runtime/resources"
	"github.com/kopf-go/kopf/runtime/settings"
	"github.com/kopf-go/kopf/runtime/watching"
)

// The tests of Kopf fidelity: the progress records that the reactor writes,
// compared byte for byte with what Kopf 1.44.6 writes in the same scenario,
// and the order of the status and object patches. The expected annotations
// are the output of testdata/kopf_progress.py, which runs Kopf's own
// processing code cycle by cycle with its clock frozen at the times of the
// cycles. The reactor runs in a synctest bubble, whose clock starts at
// 2000-01-01T00:00:00Z and moves only when the test sleeps.

var fidelityGVR = schema.GroupVersionResource{Group: "kopf.dev", Version: "v1", Resource: "kopfexamples"}

// fidelityLogs collects "LEVEL message" lines.
type fidelityLogs struct {
	mu    sync.Mutex
	lines []string
}

func (l *fidelityLogs) Enabled(context.Context, slog.Level) bool { return true }
func (l *fidelityLogs) WithAttrs([]slog.Attr) slog.Handler       { return l }
func (l *fidelityLogs) WithGroup(string) slog.Handler            { return l }
func (l *fidelityLogs) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, r.Level.String()+" "+r.Message)
	return nil
}

func (l *fidelityLogs) reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = nil
}

func (l *fidelityLogs) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.lines)
}

// fidelityFixture is a Reactor over one KopfExample ns/obj in client-go's
// fake dynamic client (the reactor's Client path).
type fidelityFixture struct {
	t      *testing.T
	r      *Reactor
	client *fake.FakeDynamicClient
	logs   *fidelityLogs
	mem    *memory
	stream *queueing.Stream
}

func newFidelityFixture(t *testing.T, register func(reg *registry.Registry) error, subresources ...string) *fidelityFixture {
	t.Helper()
	obj := map[string]any{
		"apiVersion": "kopf.dev/v1", "kind": "KopfExample",
		"metadata": map[string]any{"name": "obj", "namespace": "ns", "uid": "uid-1", "resourceVersion": "1"},
		"spec":     map[string]any{"field": "value"},
	}
	client := fake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{fidelityGVR: "KopfExampleList"},
		&unstructured.Unstructured{Object: obj})
	reg := registry.New()
	if err := register(reg); err != nil {
		t.Fatal(err)
	}
	logs := &fidelityLogs{}
	s := settings.Default()
	s.Networking.RequestTimeout = 0
	res := resources.Resource{Group: "kopf.dev", Version: "v1", Plural: "kopfexamples", Kind: "KopfExample",
		Namespaced: true, Subresources: subresources, Verbs: []string{"get", "list", "watch", "patch"}}
	r := &Reactor{Resource: res, Client: client.Resource(fidelityGVR), Registry: reg, Settings: s, Logger: slog.New(logs)}
	return &fidelityFixture{t: t, r: r, client: client, logs: logs, mem: r.memory("ns/obj", "uid-1"), stream: &queueing.Stream{}}
}

// object returns the object as it is now in the fake API.
func (f *fidelityFixture) object() body.Body {
	f.t.Helper()
	u, err := f.client.Resource(fidelityGVR).Namespace("ns").Get(context.Background(), "obj", metav1.GetOptions{})
	if err != nil {
		f.t.Fatalf("getting the object: %v", err)
	}
	return body.Body(u.Object)
}

// cycle runs one processing cycle of the object as it is now and returns
// the patches sent.
func (f *fidelityFixture) cycle(ctx context.Context) ([]k8stesting.PatchAction, error) {
	f.t.Helper()
	before := len(f.client.Actions())
	err := f.r.cycle(ctx, f.object(), f.mem, f.stream, f.r.Logger)
	var sent []k8stesting.PatchAction
	for _, a := range f.client.Actions()[before:] {
		if p, ok := a.(k8stesting.PatchAction); ok {
			sent = append(sent, p)
		}
	}
	return sent, err
}

// progressAnnotations returns the annotations that one cycle's patches set
// or removed under kopf.zalando.org/, but the diff-base, as compact JSON
// with sorted keys (as the expected values are printed).
func progressAnnotations(t *testing.T, sent []k8stesting.PatchAction) string {
	t.Helper()
	out := map[string]any{}
	for _, p := range sent {
		var data struct {
			Metadata struct {
				Annotations map[string]any `json:"annotations"`
			} `json:"metadata"`
		}
		if err := json.Unmarshal(p.GetPatch(), &data); err != nil {
			t.Fatalf("undecodable patch %s: %v", p.GetPatch(), err)
		}
		for k, v := range data.Metadata.Annotations {
			if strings.HasPrefix(k, "kopf.zalando.org/") && k != "kopf.zalando.org/last-handled-configuration" {
				out[k] = v
			}
		}
	}
	encoded, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	return string(encoded)
}

func createHandler(id string, fn registry.ChangingFn) registry.ChangingHandler {
	return registry.ChangingHandler{ID: id, Selector: resources.Selector{Group: "kopf.dev", Version: "v1", Name: "kopfexamples"},
		Reasons: []causes.Reason{causes.Create}, Fn: fn}
}

func succeed(context.Context, *kwargs.Changing) (any, error) { return nil, nil }

// runCycles runs one cycle at each of the given times (seconds since the
// bubble's start) and compares the progress annotations of each with want.
func runCycles(t *testing.T, f *fidelityFixture, at []int, want []string) {
	t.Helper()
	start := time.Now()
	for i, sec := range at {
		time.Sleep(time.Until(start.Add(time.Duration(sec) * time.Second)))
		sent, err := f.cycle(t.Context())
		if err != nil {
			t.Fatalf("cycle %d: %v", i, err)
		}
		if got := progressAnnotations(t, sent); got != want[i] {
			t.Errorf("cycle %d at %ds wrote\n  %s\nKopf writes\n  %s", i, sec, got, want[i])
		}
	}
}

// TestFirstPatchRecordsEveryHandler: Kopf writes a record for every handler
// of the cause in its first patch, so that started, runtime and timeout=
// of the handlers that run later count from the cause's first cycle.
func TestFirstPatchRecordsEveryHandler(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var runtimeOfB time.Duration
		f := newFidelityFixture(t, func(reg *registry.Registry) error {
			c := createHandler("c", succeed)
			c.Timeout = 15 * time.Second
			return errors.Join(
				reg.AddChanging(createHandler("a", succeed)),
				reg.AddChanging(createHandler("b", func(_ context.Context, kw *kwargs.Changing) (any, error) {
					runtimeOfB = kw.Runtime
					return nil, nil
				})),
				reg.AddChanging(c),
			)
		})
		runCycles(t, f, []int{0, 10, 20}, []string{
			`{"kopf.zalando.org/a":"{\"started\":\"2000-01-01T00:00:00.000000+00:00\",\"stopped\":\"2000-01-01T00:00:00.000000+00:00\",\"purpose\":\"create\",\"retries\":1,\"success\":true,\"failure\":false}","kopf.zalando.org/b":"{\"started\":\"2000-01-01T00:00:00.000000+00:00\",\"purpose\":\"create\",\"retries\":0,\"success\":false,\"failure\":false}","kopf.zalando.org/c":"{\"started\":\"2000-01-01T00:00:00.000000+00:00\",\"purpose\":\"create\",\"retries\":0,\"success\":false,\"failure\":false}"}`,
			`{"kopf.zalando.org/b":"{\"started\":\"2000-01-01T00:00:00.000000+00:00\",\"stopped\":\"2000-01-01T00:00:10.000000+00:00\",\"purpose\":\"create\",\"retries\":1,\"success\":true,\"failure\":false}"}`,
			`{"kopf.zalando.org/a":null,"kopf.zalando.org/b":null,"kopf.zalando.org/c":null}`,
		})
		if runtimeOfB != 10*time.Second {
			t.Errorf("b's runtime = %s, want 10s (since the cause's first cycle)", runtimeOfB)
		}
		// c first runs 20 s after the cause's first cycle: over its 15 s.
		logs := f.logs.all()
		if !slices.Contains(logs, "ERROR Handler 'c' failed permanently: Handler 'c' has timed out after 20s.") ||
			!slices.Contains(logs, "INFO Creation is processed: 2 succeeded; 1 failed.") {
			t.Errorf("c did not time out from the cause's first cycle:\n%s", strings.Join(logs, "\n"))
		}
	})
}

// TestSubhandlerRecords: sub-handlers get records from their parent's first
// run, the parent's subrefs are sorted, and a parent with unfinished
// sub-handlers is recorded as Kopf records it (delayed, message "None").
func TestSubhandlerRecords(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFidelityFixture(t, func(reg *registry.Registry) error {
			return errors.Join(
				reg.AddChanging(createHandler("parent", func(ctx context.Context, _ *kwargs.Changing) (any, error) {
					return nil, errors.Join(
						registry.Subhandler(ctx, registry.ChangingHandler{ID: "zeta", Fn: succeed}),
						registry.Subhandler(ctx, registry.ChangingHandler{ID: "alpha", Fn: succeed}),
					)
				})),
				reg.AddChanging(createHandler("after", succeed)),
			)
		})
		runCycles(t, f, []int{0, 1, 2}, []string{
			`{"kopf.zalando.org/after":"{\"started\":\"2000-01-01T00:00:00.000000+00:00\",\"purpose\":\"create\",\"retries\":0,\"success\":false,\"failure\":false}","kopf.zalando.org/parent":"{\"started\":\"2000-01-01T00:00:00.000000+00:00\",\"delayed\":\"2000-01-01T00:00:00.000000+00:00\",\"purpose\":\"create\",\"retries\":1,\"success\":false,\"failure\":false,\"message\":\"None\",\"subrefs\":[\"parent/alpha\",\"parent/zeta\"]}","kopf.zalando.org/parent.alpha":"{\"started\":\"2000-01-01T00:00:00.000000+00:00\",\"purpose\":\"create\",\"retries\":0,\"success\":false,\"failure\":false}","kopf.zalando.org/parent.zeta":"{\"started\":\"2000-01-01T00:00:00.000000+00:00\",\"stopped\":\"2000-01-01T00:00:00.000000+00:00\",\"purpose\":\"create\",\"retries\":1,\"success\":true,\"failure\":false}"}`,
			`{"kopf.zalando.org/after":"{\"started\":\"2000-01-01T00:00:00.000000+00:00\",\"stopped\":\"2000-01-01T00:00:01.000000+00:00\",\"purpose\":\"create\",\"retries\":1,\"success\":true,\"failure\":false}"}`,
			`{"kopf.zalando.org/after":null,"kopf.zalando.org/parent":null,"kopf.zalando.org/parent.alpha":null,"kopf.zalando.org/parent.zeta":null}`,
		})
	})
}

// TestNestedSubhandlerRecords: subrefs list the sub-handlers of every
// depth, sorted, across cycles; a retried handler keeps its started.
func TestNestedSubhandlerRecords(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFidelityFixture(t, func(reg *registry.Registry) error {
			flaky := createHandler("flaky", func(_ context.Context, kw *kwargs.Changing) (any, error) {
				if kw.Retry < 2 {
					return nil, errors.New("flaky")
				}
				return nil, nil
			})
			flaky.Backoff = 500 * time.Millisecond
			mid := func(ctx context.Context, _ *kwargs.Changing) (any, error) {
				return nil, registry.Subhandler(ctx, registry.ChangingHandler{ID: "leaf", Fn: succeed})
			}
			return errors.Join(
				reg.AddChanging(flaky),
				reg.AddChanging(createHandler("parent", func(ctx context.Context, _ *kwargs.Changing) (any, error) {
					return nil, errors.Join(
						registry.Subhandler(ctx, registry.ChangingHandler{ID: "zeta", Fn: succeed}),
						registry.Subhandler(ctx, registry.ChangingHandler{ID: "mid", Fn: mid}),
					)
				})),
			)
		})
		runCycles(t, f, []int{0, 1, 2, 3, 4}, []string{
			`{"kopf.zalando.org/flaky":"{\"started\":\"2000-01-01T00:00:00.000000+00:00\",\"delayed\":\"2000-01-01T00:00:00.500000+00:00\",\"purpose\":\"create\",\"retries\":1,\"success\":false,\"failure\":false,\"message\":\"flaky\"}","kopf.zalando.org/parent":"{\"started\":\"2000-01-01T00:00:00.000000+00:00\",\"purpose\":\"create\",\"retries\":0,\"success\":false,\"failure\":false}"}`,
			`{"kopf.zalando.org/parent":"{\"started\":\"2000-01-01T00:00:00.000000+00:00\",\"delayed\":\"2000-01-01T00:00:01.000000+00:00\",\"purpose\":\"create\",\"retries\":1,\"success\":false,\"failure\":false,\"message\":\"None\",\"subrefs\":[\"parent/mid\",\"parent/zeta\"]}","kopf.zalando.org/parent.mid":"{\"started\":\"2000-01-01T00:00:01.000000+00:00\",\"purpose\":\"create\",\"retries\":0,\"success\":false,\"failure\":false}","kopf.zalando.org/parent.zeta":"{\"started\":\"2000-01-01T00:00:01.000000+00:00\",\"stopped\":\"2000-01-01T00:00:01.000000+00:00\",\"purpose\":\"create\",\"retries\":1,\"success\":true,\"failure\":false}"}`,
			`{"kopf.zalando.org/flaky":"{\"started\":\"2000-01-01T00:00:00.000000+00:00\",\"delayed\":\"2000-01-01T00:00:02.500000+00:00\",\"purpose\":\"create\",\"retries\":2,\"success\":false,\"failure\":false,\"message\":\"flaky\"}"}`,
			`{"kopf.zalando.org/parent":"{\"started\":\"2000-01-01T00:00:00.000000+00:00\",\"stopped\":\"2000-01-01T00:00:03.000000+00:00\",\"purpose\":\"create\",\"retries\":2,\"success\":true,\"failure\":false,\"subrefs\":[\"parent/mid\",\"parent/mid/leaf\",\"parent/zeta\"]}","kopf.zalando.org/parent.mid":"{\"started\":\"2000-01-01T00:00:01.000000+00:00\",\"stopped\":\"2000-01-01T00:00:03.000000+00:00\",\"purpose\":\"create\",\"retries\":1,\"success\":true,\"failure\":false,\"subrefs\":[\"parent/mid/leaf\"]}","kopf.zalando.org/parent.mid.leaf":"{\"started\":\"2000-01-01T00:00:03.000000+00:00\",\"stopped\":\"2000-01-01T00:00:03.000000+00:00\",\"purpose\":\"create\",\"retries\":1,\"success\":true,\"failure\":false}"}`,
			`{"kopf.zalando.org/flaky":null,"kopf.zalando.org/parent":null,"kopf.zalando.org/parent.mid":null,"kopf.zalando.org/parent.mid.leaf":null,"kopf.zalando.org/parent.zeta":null}`,
		})
	})
}

func TestSubrefs(t *testing.T) {
	tests := []struct {
		old, added, want []string
	}{
		{nil, nil, nil},
		{[]string{}, []string{}, nil},
		{nil, []string{"p/b", "p/a"}, []string{"p/a", "p/b"}},
		{[]string{"p/b", "p/a/x"}, []string{"p/a", "p/b", "p/a/x"}, []string{"p/a", "p/a/x", "p/b"}},
	}
	for _, tt := range tests {
		old := slices.Clone(tt.old)
		if got := subrefs(tt.old, tt.added); !slices.Equal(got, tt.want) || (got == nil) != (tt.want == nil) {
			t.Errorf("subrefs(%q, %q) = %q, want %q", tt.old, tt.added, got, tt.want)
		}
		if !slices.Equal(old, tt.old) {
			t.Errorf("subrefs modified its argument: %q", tt.old)
		}
	}
}

// TestCrashBetweenStatusAndObjectPatches is the crash window of the two
// patches of a resource with a status subresource (see docs/ARCHITECTURE.md,
// "The order of the two patches"): the status patch (the handler's result)
// is sent first, then the object patch (progress, diff-base). When the
// second one fails, the result is kept, and the next cycle runs the same
// handler again, and only it: the handlers that succeeded in earlier
// cycles are not repeated.
func TestCrashBetweenStatusAndObjectPatches(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		runs := map[string]int{}
		count := func(id string) registry.ChangingFn {
			return func(context.Context, *kwargs.Changing) (any, error) {
				runs[id]++
				return map[string]any{"run": runs[id]}, nil
			}
		}
		f := newFidelityFixture(t, func(reg *registry.Registry) error {
			return errors.Join(reg.AddChanging(createHandler("a", count("a"))), reg.AddChanging(createHandler("b", count("b"))))
		}, "status")
		// The failed request models the crash: it is not sent again.
		f.r.Settings.Networking.ErrorBackoffs = nil
		failObjectPatch := false
		f.client.PrependReactor("patch", "kopfexamples", func(action k8stesting.Action) (bool, runtime.Object, error) {
			if p := action.(k8stesting.PatchAction); failObjectPatch && p.GetSubresource() == "" {
				failObjectPatch = false
				return true, nil, apierrors.NewServiceUnavailable("the crash window")
			}
			return false, nil, nil
		})
		statusOf := func(id string) any {
			t.Helper()
			v, _, _ := unstructured.NestedFieldCopy(f.object(), "status", id)
			return v
		}
		step := func(wantErr bool, wantSubresources ...string) {
			t.Helper()
			sent, err := f.cycle(t.Context())
			if (err != nil) != wantErr {
				t.Fatalf("cycle error = %v, want an error: %v", err, wantErr)
			}
			var got []string
			for _, p := range sent {
				got = append(got, p.GetSubresource())
			}
			if !slices.Equal(got, wantSubresources) {
				t.Fatalf("patched subresources %q, want %q", got, wantSubresources)
			}
		}

		step(false, "status", "") // a: result, then its success and b's pending record
		if runs["a"] != 1 || runs["b"] != 0 {
			t.Fatalf("runs after the first cycle: %v", runs)
		}

		failObjectPatch = true
		step(true, "status", "") // b: its result is stored, its success is not
		if got := fmt.Sprint(statusOf("b")); got != "map[run:1]" {
			t.Errorf("status.b after the failed object patch = %s, want b's result kept", got)
		}

		step(false, "status", "") // b again: the handler of the failed cycle, not a
		if runs["a"] != 1 || runs["b"] != 2 {
			t.Errorf("runs after the retried cycle = %v, want a once and b twice", runs)
		}
		if got := fmt.Sprint(statusOf("a"), statusOf("b")); got != "map[run:1] map[run:2]" {
			t.Errorf("status.a, status.b = %s", got)
		}
		step(false) // all done: nothing more to write
		if !slices.Contains(f.logs.all(), "INFO Creation is processed: 2 succeeded; 0 failed.") {
			t.Errorf("the creation is not processed:\n%s", strings.Join(f.logs.all(), "\n"))
		}
	})
}

// TestGoneLoggedOnlyWithChangingHandlers: Kopf's GONE cause, "Deleted,
// really deleted, and we are notified.", exists only for resources with
// changing handlers; an on.event-only operator does not log it.
func TestGoneLoggedOnlyWithChangingHandlers(t *testing.T) {
	const gone = "DEBUG Deleted, really deleted, and we are notified."
	selector := resources.Selector{Group: "kopf.dev", Version: "v1", Name: "kopfexamples"}
	onEvent := registry.EventHandler{ID: "ev", Selector: selector, Fn: func(context.Context, *kwargs.Event) error { return nil }}
	tests := []struct {
		name     string
		register func(reg *registry.Registry) error
		want     bool
	}{
		{"on.event only", func(reg *registry.Registry) error { return reg.AddEvent(onEvent) }, false},
		{"changing handlers", func(reg *registry.Registry) error { return reg.AddChanging(createHandler("a", succeed)) }, true},
		{"both", func(reg *registry.Registry) error {
			return errors.Join(reg.AddEvent(onEvent), reg.AddChanging(createHandler("a", succeed)))
		}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFidelityFixture(t, tt.register)
			f.r.Process(t.Context(), watching.Event{Type: watching.Deleted, Key: "ns/obj", Object: f.object()}, f.stream)
			if got := slices.Contains(f.logs.all(), gone); got != tt.want {
				t.Errorf("%q logged: %v, want %v; the log:\n%s", gone, got, tt.want, strings.Join(f.logs.all(), "\n"))
			}
		})
	}
}

// TestHandledObjectFoundAtStart: an object whose handling is complete, found
// in the first listing with no resume handlers, is a RESUME cause to Kopf,
// which logs it as every handler cause ("Resuming is in progress: <body>"),
// then ends the cycle; the same object changed outside its essence later
// is a NOOP ("Something has changed, but we are not interested ..."). No
// handler runs and nothing is written in either case.
func TestHandledObjectFoundAtStart(t *testing.T) {
	tests := []struct {
		name             string
		noticedByListing bool
		want             string
		unwanted         string
	}{
		{"found at start", true, "DEBUG Resuming is in progress: {", "not interested"},
		{"changed later", false, "DEBUG Something has changed, but we are not interested (the essence is the same).", "is in progress"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runs := 0
			f := newFidelityFixture(t, func(reg *registry.Registry) error {
				return reg.AddChanging(createHandler("a", func(context.Context, *kwargs.Changing) (any, error) {
					runs++
					return nil, nil
				}))
			})
			if sent, err := f.cycle(t.Context()); err != nil || len(sent) == 0 {
				t.Fatalf("the creation cycle: %d patches, %v", len(sent), err)
			}
			// The operator restarts: a new memory, the object in its first listing.
			f.logs.reset()
			f.r.forget("ns/obj")
			f.mem = f.r.memory("ns/obj", "uid-1")
			f.mem.noticedByListing = tt.noticedByListing
			sent, err := f.cycle(t.Context())
			if err != nil || len(sent) != 0 || runs != 1 {
				t.Fatalf("the cycle after the restart: %d patches, %v, %d runs of the handler", len(sent), err, runs)
			}
			logs := f.logs.all()
			if len(logs) != 2 || !strings.HasPrefix(logs[0], tt.want) || logs[1] != "DEBUG Handling cycle is finished, waiting for new changes." {
				t.Errorf("the log is not %q and the end of the cycle:\n%s", tt.want, strings.Join(logs, "\n"))
			}
			for _, line := range logs {
				if strings.Contains(line, tt.unwanted) {
					t.Errorf("unexpected %q in %q", tt.unwanted, line)
				}
			}
		})
	}
}

// TestCauseLoggedWithoutHandlers: Kopf logs every handler cause with its
// diff, even when no handler matches, "to show what has happened and why
// the diff-base is patched".
func TestCauseLoggedWithoutHandlers(t *testing.T) {
	f := newFidelityFixture(t, func(reg *registry.Registry) error { return reg.AddChanging(createHandler("a", succeed)) })
	if _, err := f.cycle(t.Context()); err != nil {
		t.Fatal(err)
	}
	obj := f.object()
	if err := unstructured.SetNestedField(obj, "changed", "spec", "field"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.client.Resource(fidelityGVR).Namespace("ns").Update(t.Context(), &unstructured.Unstructured{Object: obj}, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.logs.reset()
	sent, err := f.cycle(t.Context())
	if err != nil || len(sent) != 1 || !strings.Contains(string(sent[0].GetPatch()), `\"field\":\"changed\"`) {
		t.Fatalf("the update cycle: %v, %v; want one patch with the new diff-base", sent, err)
	}
	logs := f.logs.all()
	if len(logs) != 3 || !strings.HasPrefix(logs[0], "DEBUG Updating is in progress: {") ||
		!strings.HasPrefix(logs[1], "DEBUG Updating diff: ") || !strings.Contains(logs[1], "changed") ||
		logs[2] != "DEBUG Handling cycle is finished, waiting for new changes." {
		t.Errorf("the log of an update with no handlers:\n%s", strings.Join(logs, "\n"))
	}
}
