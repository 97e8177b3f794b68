// Package reliability_test checks, against a real control plane, that a
// kopf-go operator survives what production does to operators: being
// killed mid-handler, an API server restart, a watch that goes silent,
// the API server's throttling (429), etcd's compaction (410 Gone), other
// writers, objects too large for its state or near etcd's limit, objects
// that do not fit the handlers' Go type, objects left half-done by Python
// Kopf, and malformed state or panicking handlers. The fault tests log
// their recovery time ("<fault>: ... in <duration>").
//
// Tests that disturb the control plane itself (TestSIGKILLMidHandler runs
// an operator with -A; TestAPIServerRestart restarts kube-apiserver;
// TestThrottling and TestCompaction need kube-apiserver's flags and
// compact etcd) start their own. The others share one control plane,
// started in TestMain, and each runs its operator in a namespace of its
// own.
package reliability_test

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kopf-go/kopf"
	"github.com/kopf-go/kopf/e2e/cluster"
	"github.com/kopf-go/kopf/envtest"
	"github.com/kopf-go/kopf/runtime/causes"
	"github.com/kopf-go/kopf/runtime/kwargs"
	"github.com/kopf-go/kopf/runtime/registry"
	"github.com/kopf-go/kopf/runtime/resources"
	"github.com/kopf-go/kopf/runtime/settings"
)

var kopfexamples = schema.GroupVersionResource{Group: "kopf.dev", Version: "v1", Resource: "kopfexamples"}

const (
	prefix      = "kopf.zalando.org/"
	diffBaseKey = prefix + "last-handled-configuration"
)

// shared is the control plane of the tests that do not disturb it, with
// the KopfExample CRD applied.
var shared *cluster.Cluster

func TestMain(m *testing.M) {
	flag.Parse()
	// The tests mostly wait for the API server and for timeouts: let them
	// all run at once unless -parallel says otherwise (its default is
	// GOMAXPROCS, which would serialise them on small machines).
	explicit := false
	flag.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "test.parallel" })
	if !explicit {
		_ = flag.Set("test.parallel", "16")
	}
	os.Exit(cluster.Main(m, func(c *cluster.Cluster) error {
		if err := applyCRD(c.Config); err != nil {
			return fmt.Errorf("applying the CRD: %w", err)
		}
		shared = c
		return nil
	}))
}

// applyCRD applies examples/crd.yaml (status subresource on).
func applyCRD(cfg *rest.Config) error {
	root, err := cluster.RepoRoot()
	if err != nil {
		return err
	}
	crd, err := os.ReadFile(filepath.Join(root, "examples", "crd.yaml"))
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err = envtest.Apply(ctx, cfg, crd)
	return err
}

// startCluster starts a control plane of the test's own, with the CRD and
// envtest's options (kube-apiserver's flags, say).
func startCluster(t *testing.T, opts ...envtest.Option) *cluster.Cluster {
	t.Helper()
	c := cluster.Start(t, opts...)
	if err := applyCRD(c.Config); err != nil {
		t.Fatalf("applying the CRD: %v", err)
	}
	return c
}

// namespace creates a namespace in the shared control plane.
func namespace(t *testing.T, name string) string {
	t.Helper()
	cs := kubernetes.NewForConfigOrDie(shared.Config)
	_, err := cs.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating namespace %s: %v", name, err)
	}
	return name
}

// objects is the KopfExample client of a namespace.
func objects(cfg *rest.Config, ns string) dynamic.ResourceInterface {
	return dynamic.NewForConfigOrDie(cfg).Resource(kopfexamples).Namespace(ns)
}

// example is a KopfExample like examples/obj.yaml, with extra labels and
// annotations and a spec of its own (the example's if nil).
func example(name string, spec map[string]any, labels, annotations map[string]string) *unstructured.Unstructured {
	if spec == nil {
		spec = map[string]any{"duration": "1m", "field": "value", "items": []any{"item1", "item2"}}
	}
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kopf.dev/v1",
		"kind":       "KopfExample",
		"metadata":   map[string]any{"name": name},
		"spec":       spec,
	}}
	obj.SetLabels(labels)
	obj.SetAnnotations(annotations)
	return obj
}

func create(t *testing.T, ri dynamic.ResourceInterface, obj *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	out, err := ri.Create(context.Background(), obj, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating %s: %v", obj.GetName(), err)
	}
	return out
}

// leftovers lists the operator's annotations other than the diff-base:
// progress records, the touch-dummy, anything that should be gone once an
// object is fully handled.
func leftovers(obj *unstructured.Unstructured) []string {
	var out []string
	for key := range obj.GetAnnotations() {
		if strings.HasPrefix(key, prefix) && key != diffBaseKey {
			out = append(out, key)
		}
	}
	slices.Sort(out)
	return out
}

// handled reports whether the object is fully handled: every listed
// handler's result is in status, a diff-base (a JSON object) is stored, and
// no progress is left.
func handled(obj *unstructured.Unstructured, results ...string) bool {
	for _, id := range results {
		if _, ok, _ := unstructured.NestedFieldNoCopy(obj.Object, "status", id); !ok {
			return false
		}
	}
	var essence map[string]any
	err := json.Unmarshal([]byte(obj.GetAnnotations()[diffBaseKey]), &essence)
	return err == nil && essence != nil && len(leftovers(obj)) == 0
}

// waitHandled waits until the object is fully handled (see handled) and
// returns it; it fails the test with the object's last state otherwise.
func waitHandled(t *testing.T, ri dynamic.ResourceInterface, name string, timeout time.Duration, results ...string) *unstructured.Unstructured {
	t.Helper()
	obj, err := tryHandled(ri, name, timeout, results...)
	if err != nil {
		t.Fatal(err)
	}
	return obj
}

// tryHandled is waitHandled returning an error instead of failing.
func tryHandled(ri dynamic.ResourceInterface, name string, timeout time.Duration, results ...string) (*unstructured.Unstructured, error) {
	var obj *unstructured.Unstructured
	err := cluster.WaitFor(context.Background(), timeout, func(ctx context.Context) (bool, error) {
		var err error
		obj, err = ri.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return handled(obj, results...), nil
	})
	if err != nil {
		return obj, fmt.Errorf("%s is not fully handled (results %v, diff-base, no progress) in %s: %w\nlast seen: %s", name, results, timeout, err, dump(obj))
	}
	return obj, nil
}

func dump(obj *unstructured.Unstructured) string {
	if obj == nil {
		return "<nothing>"
	}
	data, _ := json.Marshal(obj.Object)
	if len(data) > 4000 {
		return string(data[:4000]) + "...(cut)"
	}
	return string(data)
}

// diffBase decodes the object's diff-base annotation.
func diffBase(t *testing.T, obj *unstructured.Unstructured) map[string]any {
	t.Helper()
	raw, ok := obj.GetAnnotations()[diffBaseKey]
	if !ok {
		t.Fatalf("%s has no diff-base", obj.GetName())
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(raw), &m); err != nil {
		t.Fatalf("%s's diff-base is not a JSON object: %v: %q", obj.GetName(), err, raw)
	}
	return m
}

// fastSettings are Kopf's defaults with a short backoff for handler errors.
func fastSettings() *settings.Settings {
	s := settings.Default()
	s.Execution.DefaultBackoff = time.Second
	return s
}

// withSettings runs a test's operator with the settings s (those of
// fastSettings, changed).
func withSettings(s *settings.Settings) kopf.Option {
	return kopf.WithSettings(func(d *kopf.Settings) { *d = *s })
}

// handler is a changing handler of KopfExample objects.
func handler(id string, fn registry.ChangingFn, reasons ...causes.Reason) registry.ChangingHandler {
	return registry.ChangingHandler{ID: id, Selector: resources.Selector{Name: "kopfexamples"}, Reasons: reasons, Fn: fn}
}

// register returns a registration function for the handlers.
func register(handlers ...registry.ChangingHandler) func(*registry.Registry) error {
	return func(r *registry.Registry) error {
		for _, h := range handlers {
			if err := r.AddChanging(h); err != nil {
				return err
			}
		}
		return nil
	}
}

// calls records handler invocations.
type calls struct {
	mu   sync.Mutex
	list []call
}

type call struct {
	Handler, Object string
	Retry           int
	Started         time.Time
	Reason          causes.Reason
	Spec            map[string]any
	Diff            string
}

func (c *calls) add(id string, kw *kwargs.Changing) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.list = append(c.list, call{Handler: id, Object: kw.Name, Retry: kw.Retry, Started: kw.Started, Reason: kw.Reason, Spec: kw.Spec, Diff: fmt.Sprint(kw.Diff)})
}

// of returns the invocations of a handler for an object, in order.
func (c *calls) of(id, object string) []call {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []call
	for _, x := range c.list {
		if x.Handler == id && x.Object == object {
			out = append(out, x)
		}
	}
	return out
}

// recording wraps a handler function so that its invocations are recorded.
func (c *calls) recording(id string, fn registry.ChangingFn) registry.ChangingFn {
	return func(ctx context.Context, kw *kwargs.Changing) (any, error) {
		c.add(id, kw)
		return fn(ctx, kw)
	}
}

// waitCalls waits until the handler has been invoked for the object n times.
func (c *calls) wait(t *testing.T, id, object string, n int, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for len(c.of(id, object)) < n {
		if time.Now().After(deadline) {
			t.Fatalf("%s was invoked %d times for %s in %s, want %d", id, len(c.of(id, object)), object, timeout, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func message(msg string) registry.ChangingFn {
	return func(context.Context, *kwargs.Changing) (any, error) {
		return map[string]any{"message": msg}, nil
	}
}
