package selectors

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/kopf-go/kopf"
	"github.com/kopf-go/kopf/envtest"
	"github.com/kopf-go/kopf/kopftest"
)

// The resource of testdata/phased-crd.yaml, whose spec.phase is selectable.
var (
	phasedGVR = schema.GroupVersionResource{Group: "kopf.dev", Version: "v1", Resource: "phasedexamples"}
	phased    = kopf.Selector{Group: "kopf.dev", Version: "v1", Name: "phasedexamples"}
	phase     = []string{"spec", "phase"}
)

// registerPhased adds a create, an update, a delete, an on.event handler
// and a daemon, each filtered by field=spec.phase and the value "on"
// (new=on for the update handler: its value= would match either side of a
// change, and require nothing), and declares spec.phase selectable, as
// kopf-gen does for a type marked +kubebuilder:selectablefield.
func registerPhased(j *journal) func(*kopf.Registry) error {
	on := kopf.Equal("on")
	valueOn := kopf.Filter{Value: &on}
	changing := func(id string, reason kopf.Reason, f kopf.Filter) kopf.ChangingHandler {
		return kopf.ChangingHandler{ID: id, Selector: phased, Reasons: []kopf.Reason{reason}, Field: phase, Filter: f,
			Fn: func(ctx context.Context, kw *kopf.ChangingKwargs) (any, error) {
				j.add(id + " " + kw.Name)
				return nil, nil
			}}
	}
	return func(r *kopf.Registry) error {
		if err := r.AddSelectableFields(kopf.SelectableFields{Selector: phased, Fields: []string{".spec.phase"}}); err != nil {
			return err
		}
		for _, h := range []kopf.ChangingHandler{
			changing("create", kopf.ReasonCreate, valueOn),
			changing("update", kopf.ReasonUpdate, kopf.Filter{New: &on}),
			changing("delete", kopf.ReasonDelete, valueOn),
		} {
			if err := r.AddChanging(h); err != nil {
				return err
			}
		}
		err := r.AddEvent(kopf.EventHandler{ID: "event", Selector: phased, Field: phase, Filter: valueOn,
			Fn: func(ctx context.Context, kw *kopf.EventKwargs) error {
				j.add("event " + kw.Type + " " + kw.Name)
				return nil
			}})
		if err != nil {
			return err
		}
		return r.AddDaemon(kopf.DaemonHandler{ID: "daemon", Selector: phased, Field: phase, Filter: valueOn,
			Fn: func(ctx context.Context, kw *kopf.DaemonKwargs) (any, error) {
				j.add("daemon " + kw.Name)
				<-kw.Stopped.Done()
				j.stop(context.Cause(kw.Stopped))
				return nil, nil
			}})
	}
}

func phasedExample(name, phase string) map[string]any {
	return map[string]any{"apiVersion": "kopf.dev/v1", "kind": "PhasedExample",
		"metadata": map[string]any{"name": name}, "spec": map[string]any{"phase": phase, "field": "value"}}
}

func setPhase(phase string) map[string]any {
	return map[string]any{"spec": map[string]any{"phase": phase}}
}

// The field selector inferred from field= filters on a CRD's selectable
// field: the watch carries it, and an object whose field changes so that
// it leaves the selector (reported by the watch as deleted) has stopped
// matching; one that comes back is handled from its persisted state; one
// deleted while selected is deleted.
func TestFieldSelectors(t *testing.T) {
	env := envtest.Start(t, envtest.WithCRDs(filepath.Join("testdata", "phased-crd.yaml")))
	ns := namespace(t, env.Config, "fields")
	objs := kopftest.NewObjects(t, env.Config, phasedGVR, ns)
	rq := &requests{path: "/namespaces/" + ns + "/phasedexamples"}
	cfg := rest.CopyConfig(env.Config)
	cfg.Wrap(rq.wrap)
	var j journal
	op := kopftest.Start(t, cfg, registerPhased(&j), kopf.WithNamespaces(ns))

	objs.Create(phasedExample("plain", "off"))
	objs.Create(phasedExample("obj", "on"))
	waitFor(t, "the daemon's start", 20*time.Second, func() bool { return j.count("daemon obj") == 1 })
	objs.WaitFor("obj", 10*time.Second, hasFinalizer)
	op.WaitLog(fmt.Sprintf("Watching phasedexamples.v1.kopf.dev in %s with the field selector 'spec.phase=on' (inferred from the handlers' filters).", ns), 5*time.Second)

	t.Run("the watch requests carry the field selector", func(t *testing.T) {
		watches := 0
		for _, u := range rq.snapshot() {
			if !strings.Contains(u, "fieldSelector=spec.phase%3Don") {
				t.Errorf("a request without the field selector: %s", u)
			}
			if strings.Contains(u, "labelSelector") {
				t.Errorf("a request with a label selector: %s", u)
			}
			if strings.Contains(u, "watch=true") {
				watches++
			}
		}
		if watches == 0 {
			t.Errorf("no watch request seen: %v", rq.snapshot())
		}
		if n := op.CountLog(fmt.Sprintf("[%s/plain]", ns)); n > 0 {
			t.Errorf("the object not selected is in the log %d times", n)
		}
		calls, _ := j.snapshot()
		for _, c := range calls {
			if strings.HasSuffix(c, " plain") {
				t.Errorf("a handler saw the object not selected: %s", c)
			}
		}
	})

	t.Run("an object whose field leaves the selector is released, not deleted", func(t *testing.T) {
		objs.MergePatch("obj", setPhase("off"))
		waitFor(t, "the daemon's stop", 20*time.Second, func() bool { _, stopped := j.snapshot(); return len(stopped) == 1 })
		obj := objs.WaitFor("obj", 20*time.Second, func(obj *unstructured.Unstructured) bool { return !hasFinalizer(obj) })
		if obj.GetDeletionTimestamp() != nil {
			t.Errorf("the object is being deleted")
		}
		_, stopped := j.snapshot()
		if !errors.Is(stopped[0], kopf.StopFiltersMismatch) {
			t.Errorf("the daemon stopped for %v, want the filters' mismatch", stopped[0])
		}
		for _, call := range []string{"delete obj", "event DELETED obj", "update obj"} {
			if n := j.count(call); n != 0 {
				t.Errorf("%q: %d times", call, n)
			}
		}
	})

	t.Run("an object whose field enters the selector again is handled from its persisted state", func(t *testing.T) {
		objs.MergePatch("obj", setPhase("on"))
		waitFor(t, "the daemon's restart", 20*time.Second, func() bool { return j.count("daemon obj") == 2 })
		objs.WaitFor("obj", 10*time.Second, hasFinalizer)
		if n := j.count("create obj"); n != 1 {
			t.Errorf("the create handler ran %d times, want once: the diff-base says it is created", n)
		}
		// spec.phase is "on" as last handled: no change of the field, so
		// no update (docs/filters.md: Kopf, which saw "off", would run it).
		if n := j.count("update obj"); n != 0 {
			t.Errorf("the update handler ran %d times, want none: the essence is the one last handled", n)
		}
	})

	t.Run("an object deleted while selected is deleted", func(t *testing.T) { checkDeleted(t, objs, &j) })
	stopAndReport(t, op, &j)
}
