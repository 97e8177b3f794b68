package indexing

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/kopf-go/kopf/internal/testutil"
	"github.com/kopf-go/kopf/runtime/execution"
	"github.com/kopf-go/kopf/runtime/filters"
	"github.com/kopf-go/kopf/runtime/kwargs"
	"github.com/kopf-go/kopf/runtime/registry"
	"github.com/kopf-go/kopf/runtime/resources"
	"github.com/kopf-go/kopf/runtime/watching"
)

func pod(name string, labels map[string]any, phase string) map[string]any {
	return map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"namespace": "ns", "name": name, "labels": labels},
		"status":   map[string]any{"phase": phase},
	}
}

type podT struct {
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Status struct {
		Phase string `json:"phase"`
	} `json:"status"`
}

// byLabel is Kopf's by_label of examples/16-indexing.
func byLabel(_ context.Context, kw kwargs.Index) (map[[2]string]string, error) {
	out := map[[2]string]string{}
	for k, v := range kw.Labels {
		if v == "fail" {
			return nil, errors.New("boom")
		}
		if v == "panic" {
			panic("kaboom")
		}
		if v == "nil" {
			return nil, nil
		}
		out[[2]string{k, v}] = kw.Name
	}
	return out, nil
}

func TestIndexerHandle(t *testing.T) {
	type event struct {
		typ    watching.Type
		name   string
		labels map[string]any
		phase  string
		wakeup bool
	}
	tests := []struct {
		name    string
		events  []event
		labels  map[[2]string][]string // by_label
		running []bool                 // is_running's single values
		logs    []string
	}{
		{"listed and added", []event{
			{typ: watching.Listed, name: "a", labels: map[string]any{"app": "x"}, phase: "Running"},
			{typ: watching.Added, name: "b", labels: map[string]any{"app": "x", "tier": "db"}, phase: "Pending"},
		}, map[[2]string][]string{{"app", "x"}: {"a", "b"}, {"tier", "db"}: {"b"}}, []bool{false, true}, nil},
		{"a label change moves the object", []event{
			{typ: watching.Added, name: "a", labels: map[string]any{"app": "x"}, phase: "Running"},
			{typ: watching.Modified, name: "a", labels: map[string]any{"app": "y"}, phase: "Running"},
		}, map[[2]string][]string{{"app", "y"}: {"a"}}, []bool{true}, nil},
		{"deletion removes the object from every index", []event{
			{typ: watching.Added, name: "a", labels: map[string]any{"app": "x"}, phase: "Running"},
			{typ: watching.Added, name: "b", labels: map[string]any{"app": "x"}, phase: "Running"},
			{typ: watching.Deleted, name: "a"},
		}, map[[2]string][]string{{"app", "x"}: {"b"}}, []bool{true}, nil},
		{"an object that stops matching the filters leaves the index", []event{
			{typ: watching.Added, name: "a", labels: map[string]any{"app": "x"}, phase: "Running"},
			{typ: watching.Modified, name: "a", labels: map[string]any{"app": "x", "skip": "yes"}, phase: "Running"},
		}, map[[2]string][]string{}, []bool{true}, nil},
		{"an error keeps the previous contribution and is logged", []event{
			{typ: watching.Added, name: "a", labels: map[string]any{"app": "x"}, phase: "Running"},
			{typ: watching.Modified, name: "a", labels: map[string]any{"app": "fail"}, phase: "Running"},
		}, map[[2]string][]string{{"app", "x"}: {"a"}}, []bool{true},
			[]string{"Handler 'by_label' failed with an exception and will ignore it: boom"}},
		{"a panic is an error", []event{
			{typ: watching.Added, name: "a", labels: map[string]any{"app": "panic"}, phase: "Running"},
		}, map[[2]string][]string{}, []bool{true},
			[]string{"Handler 'by_label' failed with an exception and will ignore it:", "kaboom"}},
		{"the next event retries after an error", []event{
			{typ: watching.Added, name: "a", labels: map[string]any{"app": "fail"}, phase: "Running"},
			{typ: watching.Modified, name: "a", labels: map[string]any{"app": "ok"}, phase: "Running"},
		}, map[[2]string][]string{{"app", "ok"}: {"a"}}, []bool{true},
			[]string{"Handler 'by_label' failed with an exception and will ignore it: boom"}},
		{"wake-ups are not indexed", []event{
			{typ: watching.Added, name: "a", labels: map[string]any{"app": "x"}, phase: "Running"},
			{typ: watching.Modified, name: "a", labels: map[string]any{"app": "y"}, wakeup: true},
		}, map[[2]string][]string{{"app", "x"}: {"a"}}, []bool{true}, nil},
		{"no single value keeps the previous one (Kopf's None)", []event{
			{typ: watching.Added, name: "a", labels: map[string]any{"app": "x"}, phase: "Running"},
			{typ: watching.Modified, name: "a", labels: map[string]any{"app": "x"}, phase: ""},
			{typ: watching.Added, name: "b", labels: map[string]any{"app": "x"}, phase: ""},
		}, map[[2]string][]string{{"app", "x"}: {"a", "b"}}, []bool{true}, nil},
		{"a nil map keeps the previous contribution (Kopf's None)", []event{
			{typ: watching.Added, name: "a", labels: map[string]any{"app": "x"}, phase: "Running"},
			{typ: watching.Modified, name: "a", labels: map[string]any{"app": "nil"}, phase: "Running"},
			{typ: watching.Added, name: "b", labels: map[string]any{"app": "nil"}, phase: "Running"},
		}, map[[2]string][]string{{"app", "x"}: {"a"}}, []bool{true, true}, nil},
		{"an empty map removes the object", []event{
			{typ: watching.Added, name: "a", labels: map[string]any{"app": "x"}, phase: "Running"},
			{typ: watching.Modified, name: "a", labels: map[string]any{}, phase: "Running"},
		}, map[[2]string][]string{}, []bool{true}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			labels := New[[2]string, string]()
			running := New[None, bool]()
			isRunning := func(_ context.Context, kw kwargs.TypedIndex[podT]) (bool, bool) {
				if kw.Object.Status.Phase == "" {
					return false, false
				}
				return kw.Object.Status.Phase == "Running", true
			}
			var buf testutil.Buffer
			x := &Indexer{
				Resource: resources.Resource{Version: "v1", Plural: "pods", Namespaced: true},
				Handlers: []*registry.IndexHandler{
					{ID: "by_label", Fn: Func(labels, byLabel), Filter: filters.Filter{Labels: map[string]filters.Matcher{"skip": filters.IsAbsent()}}},
					{ID: "is_running", Fn: TypedValueFunc(running, isRunning)},
				},
				Logger: slog.New(slog.NewTextHandler(&buf, nil)),
			}
			for _, ev := range tt.events {
				x.Handle(t.Context(), watching.Event{Type: ev.typ, Key: "ns/" + ev.name, Object: pod(ev.name, ev.labels, ev.phase), Wakeup: ev.wakeup})
			}
			got := contents(labels)
			for _, v := range got {
				slices.Sort(v)
			}
			if !maps.EqualFunc(got, tt.labels, slices.Equal) {
				t.Errorf("by_label = %v, want %v", got, tt.labels)
			}
			var gotRunning []bool
			if s, ok := running.Get(None{}); ok {
				gotRunning = s.Values()
				slices.SortFunc(gotRunning, func(a, b bool) int {
					if a == b {
						return 0
					} else if a {
						return 1
					}
					return -1
				})
			}
			if !slices.Equal(gotRunning, tt.running) {
				t.Errorf("is_running = %v, want %v", gotRunning, tt.running)
			}
			for _, want := range tt.logs {
				if !strings.Contains(buf.String(), want) {
					t.Errorf("the log lacks %q:\n%s", want, buf.String())
				}
			}
			if tt.logs == nil && strings.Contains(buf.String(), "level=ERROR") {
				t.Errorf("unexpected errors:\n%s", buf.String())
			}
		})
	}
}

// Index functions get a copy of the object: what they change in it is
// not seen by the watch (nor the handlers after it).
func TestIndexerGivesACopy(t *testing.T) {
	idx := New[string, string]()
	x := &Indexer{Handlers: []*registry.IndexHandler{{ID: "meddler", Fn: Func(idx, func(_ context.Context, kw kwargs.Index) (map[string]string, error) {
		kw.Body["spec"] = "changed"
		kw.Labels["app"] = "changed"
		return map[string]string{"k": kw.Name}, nil
	})}}, Logger: slog.New(slog.DiscardHandler)}
	obj := pod("a", map[string]any{"app": "x"}, "Running")
	x.Handle(t.Context(), watching.Event{Type: watching.Added, Key: "ns/a", Object: obj})
	if _, ok := obj["spec"]; ok {
		t.Errorf("the index function changed the watch's object")
	}
	if idx.Len() != 1 {
		t.Errorf("index has %d keys, want 1", idx.Len())
	}
}

// BenchmarkHandle indexes one watch event of a pod with Kopf's two
// indices of examples/16-indexing: is_running typed (the pod decoded as a
// Go struct), by_label on the body; typed=false indexes both on the body.
func BenchmarkHandle(b *testing.B) {
	for _, typed := range []bool{true, false} {
		b.Run(fmt.Sprintf("typed=%v", typed), func(b *testing.B) {
			running := New[[2]string, bool]()
			labels := New[[2]string, string]()
			isRunning := Func(running, func(_ context.Context, kw kwargs.Index) (map[[2]string]bool, error) {
				phase, _ := kw.Status["phase"].(string)
				return map[[2]string]bool{{kw.Namespace, kw.Name}: phase == "Running"}, nil
			})
			if typed {
				isRunning = TypedFunc(running, func(_ context.Context, kw kwargs.TypedIndex[corev1.Pod]) (map[[2]string]bool, error) {
					return map[[2]string]bool{{kw.Namespace, kw.Name}: kw.Object.Status.Phase == corev1.PodRunning}, nil
				})
			}
			x := &Indexer{Handlers: []*registry.IndexHandler{
				{ID: "is_running", Fn: isRunning},
				{ID: "by_label", Fn: Func(labels, byLabel)},
			}, Logger: slog.New(slog.DiscardHandler)}
			var obj map[string]any
			if err := json.Unmarshal([]byte(podJSON), &obj); err != nil {
				b.Fatal(err)
			}
			ev := watching.Event{Type: watching.Added, Key: "default/pod-00001", Object: obj}
			for b.Loop() {
				x.Handle(b.Context(), ev)
			}
		})
	}
}

// podJSON is a pod as the API server returns it (created with one
// container, not scheduled), without managedFields.
const podJSON = `{"apiVersion":"v1","kind":"Pod","metadata":{"creationTimestamp":"2026-11-23T12:00:00Z","labels":{"app":"bench","pod":"pod-00001"},"name":"pod-00001","namespace":"default","resourceVersion":"12345","uid":"0d5f7c1e-8d6a-4a8e-9a55-0c1f1f3a9b21"},"spec":{"containers":[{"image":"busybox","imagePullPolicy":"Always","name":"main","resources":{},"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File"}],"dnsPolicy":"ClusterFirst","enableServiceLinks":true,"preemptionPolicy":"PreemptLowerPriority","priority":0,"restartPolicy":"Always","schedulerName":"default-scheduler","securityContext":{},"terminationGracePeriodSeconds":30,"tolerations":[{"effect":"NoExecute","key":"node.kubernetes.io/not-ready","operator":"Exists","tolerationSeconds":300},{"effect":"NoExecute","key":"node.kubernetes.io/unreachable","operator":"Exists","tolerationSeconds":300}]},"status":{"phase":"Pending","qosClass":"BestEffort"}}`

// Kopf's errors= of indices: ignored keeps the values, permanent and
// PermanentError exclude the object, temporary and TemporaryError exclude
// it for a while, retries= makes it permanent; deletion forgets.
func TestIndexerErrors(t *testing.T) {
	type step struct {
		after   time.Duration // wait before the event
		fail    error         // what the function returns (nil: succeed)
		deleted bool
		called  bool // whether the function must be called
		indexed bool // whether the object is in the index afterwards
	}
	boom := errors.New("boom")
	tests := []struct {
		name    string
		h       registry.IndexHandler
		steps   []step
		retries []int // kw.Retry of each call
		logs    []string
	}{
		{"ignored by default: the values stay", registry.IndexHandler{}, []step{
			{called: true, indexed: true},
			{fail: boom, called: true, indexed: true},
			{called: true, indexed: true},
		}, []int{0, 0, 0}, []string{"Handler 'idx' failed with an exception and will ignore it: boom"}},
		{"errors=permanent excludes the object while it exists", registry.IndexHandler{Errors: registry.ErrorsPermanent}, []step{
			{called: true, indexed: true},
			{fail: boom, called: true, indexed: false},
			{after: time.Hour, called: false, indexed: false},
			{deleted: true},
			{called: true, indexed: true},
		}, []int{0, 0, 0}, []string{"Handler 'idx' failed with an exception and will stop now: boom"}},
		{"a PermanentError excludes the object in any mode", registry.IndexHandler{}, []step{
			{called: true, indexed: true},
			{fail: execution.NewPermanentError("no"), called: true, indexed: false},
			{called: false, indexed: false},
		}, []int{0, 0}, []string{"Handler 'idx' failed permanently: no"}},
		{"errors=temporary excludes the object for the backoff", registry.IndexHandler{Errors: registry.ErrorsTemporary, Backoff: 10 * time.Second}, []step{
			{called: true, indexed: true},
			{fail: boom, called: true, indexed: false},
			{after: 5 * time.Second, called: false, indexed: false},
			{after: 5 * time.Second, called: true, indexed: true},
			{called: true, indexed: true},
		}, []int{0, 0, 1, 0}, []string{"Handler 'idx' failed with an exception and will try again in 10 seconds: boom"}},
		{"a TemporaryError excludes the object for its delay", registry.IndexHandler{}, []step{
			{fail: execution.NewTemporaryError("later", 3*time.Second), called: true, indexed: false},
			{after: 2 * time.Second, called: false, indexed: false},
			{after: time.Second, called: true, indexed: true},
		}, []int{0, 1}, []string{"Handler 'idx' failed temporarily: later"}},
		{"retries= makes the exclusion permanent", registry.IndexHandler{Errors: registry.ErrorsTemporary, Backoff: time.Second, Retries: 2}, []step{
			{fail: boom, called: true, indexed: false},
			{after: time.Second, fail: boom, called: true, indexed: false},
			{after: time.Hour, called: false, indexed: false},
		}, []int{0, 1}, []string{"will stop now (it would exceed 2 retries on the next attempt): boom"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				idx := New[string, string]()
				var fail error
				var calls, retries []int
				h := tt.h
				h.ID = "idx"
				h.Fn = Func(idx, func(_ context.Context, kw kwargs.Index) (map[string]string, error) {
					calls = append(calls, 1)
					retries = append(retries, kw.Retry)
					if fail != nil {
						return nil, fail
					}
					return map[string]string{"k": kw.Name}, nil
				})
				var buf testutil.Buffer
				x := &Indexer{Handlers: []*registry.IndexHandler{&h}, Logger: slog.New(slog.NewTextHandler(&buf, nil)), Backoff: time.Minute}
				for i, s := range tt.steps {
					time.Sleep(s.after)
					fail = s.fail
					before := len(calls)
					typ := watching.Modified
					if s.deleted {
						typ = watching.Deleted
					}
					x.Handle(t.Context(), watching.Event{Type: typ, Key: "ns/a", Object: pod("a", nil, "Running")})
					if s.deleted {
						continue
					}
					if called := len(calls) > before; called != s.called {
						t.Errorf("step %d: called = %v, want %v", i, called, s.called)
					}
					if indexed := idx.Len() > 0; indexed != s.indexed {
						t.Errorf("step %d: indexed = %v, want %v", i, indexed, s.indexed)
					}
				}
				if !slices.Equal(retries, tt.retries) {
					t.Errorf("kw.Retry of the calls = %v, want %v", retries, tt.retries)
				}
				for _, want := range tt.logs {
					if !strings.Contains(buf.String(), want) {
						t.Errorf("the log lacks %q:\n%s", want, buf.String())
					}
				}
			})
		})
	}
}
