package kopf_test

// The settings and the code of docs/filters.md ("Server-side selectors"),
// compiled here.

import (
	"context"
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kopf-go/kopf"
)

// explicitSelectors narrows the watch of KopfExamples on the server.
func explicitSelectors() kopf.Option {
	return kopf.WithSettings(func(s *kopf.Settings) {
		s.Watching.Selectors = map[string]kopf.WatchSelector{
			"kopfexamples.kopf.dev": {Labels: "tier in (web,db)", Fields: "metadata.namespace!=kube-system"},
		}
	})
}

// noInferredSelectors watches every object and filters here, as Kopf.
func noInferredSelectors() kopf.Option {
	return kopf.WithSettings(func(s *kopf.Settings) { s.Watching.InferSelectors = false })
}

var _, _ = explicitSelectors, noInferredSelectors

// Task is a resource whose spec.phase the API server selects on: kopf-gen
// writes the marker into its CRD's selectableFields (Kubernetes 1.32+)
// and declares the field to the runtime in Register.
//
// +kubebuilder:selectablefield:JSONPath=.spec.phase
//
//kopf:resource example.com/v1/tasks
type Task struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              TaskSpec `json:"spec,omitempty"`
}

// TaskSpec is a Task's spec.
type TaskSpec struct {
	Phase string `json:"phase,omitempty"`
}

// StartTask (on creation and resumption) and WatchTask serve the tasks
// whose spec.phase is "ready", and only them: with ReadyTask, every
// handler of tasks requires it, so the watch of tasks carries the field
// selector spec.phase=ready.
//
//kopf:on.create tasks field=spec.phase value=ready
//kopf:on.resume tasks field=spec.phase value=ready
func StartTask(ctx context.Context, kw StartTaskKwargs) error {
	kw.Logger.Info(fmt.Sprintf("starting %s", kw.Object.Name))
	return nil
}

// WatchTask runs while the task is ready; it is stopped, as for any
// filter mismatch, when spec.phase changes.
//
//kopf:daemon tasks field=spec.phase value=ready
func WatchTask(ctx context.Context, kw WatchTaskKwargs) error {
	<-kw.Stopped.Done()
	return nil
}

// ReadyTask runs when spec.phase becomes "ready": new= requires the
// value after the change, where value= would match either side of it.
//
//kopf:on.update tasks field=spec.phase new=ready
func ReadyTask(ctx context.Context, kw ReadyTaskKwargs) error { return nil }

// What kopf-gen generates beside the handlers above.
type (
	StartTaskKwargs = kopf.TypedChangingKwargs[Task]
	WatchTaskKwargs = kopf.TypedDaemonKwargs[Task]
	ReadyTaskKwargs = kopf.TypedChangingKwargs[Task]
)

var _, _, _ = StartTask, WatchTask, ReadyTask

// A hand-written registration declares what kopf-gen declares for Task's
// marker: for a CRD that kopf-gen does not generate, or a built-in
// resource's own field selectors (pods' spec.nodeName).
func ExampleSelectableFields() {
	r := kopf.NewRegistry()
	err := r.AddSelectableFields(kopf.SelectableFields{
		Selector: kopf.Selector{Group: "example.com", Version: "v1", Name: "tasks"},
		Fields:   []string{"spec.phase"},
	})
	if err != nil {
		panic(err)
	}
	tasks := kopf.Resource{Group: "example.com", Version: "v1", Plural: "tasks", Kind: "Task", Namespaced: true}
	fmt.Println(r.SelectableFields(tasks))
	// Output: [spec.phase]
}
