// Command ctrlruntime is the controller-runtime contender of the benchmark:
// a reconciler of typed KopfExample objects, as a typical kubebuilder
// operator would write it, doing the same job as the kopf-go operator:
// status.create_fn = {"message": "hello world"} once, and
// status.update_fn = {"value": spec.value} whenever spec.value is set and
// differs. One merge patch per reconciliation (to /status with
// -subresource), 4 workers, otherwise controller-runtime's defaults.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/kopf-go/kopf/bench/internal/instrument"
)

// GroupVersion is the KopfExample's API group and version.
var GroupVersion = schema.GroupVersion{Group: "kopf.dev", Version: "v1"}

// KopfExampleSpec is the benchmark objects' spec.
type KopfExampleSpec struct {
	Duration string   `json:"duration,omitempty"`
	Field    string   `json:"field,omitempty"`
	Items    []string `json:"items,omitempty"`
	Value    string   `json:"value,omitempty"`
}

// Result is a handler's result.
type Result struct {
	Message string `json:"message,omitempty"`
	Value   string `json:"value,omitempty"`
}

// KopfExampleStatus holds the results.
type KopfExampleStatus struct {
	CreateFn *Result `json:"create_fn,omitempty"`
	UpdateFn *Result `json:"update_fn,omitempty"`
}

// KopfExample is the typed object.
type KopfExample struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              KopfExampleSpec   `json:"spec,omitempty"`
	Status            KopfExampleStatus `json:"status,omitempty"`
}

// KopfExampleList is a list of KopfExamples.
type KopfExampleList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []KopfExample `json:"items"`
}

// DeepCopy copies the object.
func (in *KopfExample) DeepCopy() *KopfExample {
	out := *in
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	out.Spec.Items = append([]string(nil), in.Spec.Items...)
	if in.Status.CreateFn != nil {
		r := *in.Status.CreateFn
		out.Status.CreateFn = &r
	}
	if in.Status.UpdateFn != nil {
		r := *in.Status.UpdateFn
		out.Status.UpdateFn = &r
	}
	return &out
}

// DeepCopyObject implements runtime.Object.
func (in *KopfExample) DeepCopyObject() runtime.Object { return in.DeepCopy() }

// DeepCopyObject implements runtime.Object.
func (in *KopfExampleList) DeepCopyObject() runtime.Object {
	out := *in
	out.Items = make([]KopfExample, len(in.Items))
	for i := range in.Items {
		out.Items[i] = *in.Items[i].DeepCopy()
	}
	return &out
}

// Reconciler writes the results.
type Reconciler struct {
	client.Client
	Subresource bool
}

// Reconcile brings one object's status in line with its spec.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var obj KopfExample
	if err := r.Get(ctx, req.NamespacedName, &obj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	before := obj.DeepCopy()
	changed := false
	if obj.Status.CreateFn == nil {
		obj.Status.CreateFn = &Result{Message: "hello world"}
		changed = true
	}
	if v := obj.Spec.Value; v != "" && (obj.Status.UpdateFn == nil || obj.Status.UpdateFn.Value != v) {
		obj.Status.UpdateFn = &Result{Value: v}
		changed = true
	}
	if !changed {
		return ctrl.Result{}, nil
	}
	patch := client.MergeFrom(before)
	if r.Subresource {
		return ctrl.Result{}, r.Status().Patch(ctx, &obj, patch)
	}
	return ctrl.Result{}, r.Patch(ctx, &obj, patch)
}

func main() {
	instrument.Start()
	err := run()
	instrument.Stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run() error {
	subresource := flag.Bool("subresource", false, "status is a subresource")
	workers := flag.Int("workers", 4, "MaxConcurrentReconciles")
	flag.Parse()
	ctrl.SetLogger(logr.Discard())

	scheme := runtime.NewScheme()
	scheme.AddKnownTypes(GroupVersion, &KopfExample{}, &KopfExampleList{})
	metav1.AddToGroupVersion(scheme, GroupVersion)

	cfg, err := ctrl.GetConfig()
	if err != nil {
		return err
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:  scheme,
		Metrics: metricsserver.Options{BindAddress: "0"},
	})
	if err != nil {
		return err
	}
	err = ctrl.NewControllerManagedBy(mgr).
		For(&KopfExample{}).
		WithOptions(controller.Options{MaxConcurrentReconciles: *workers}).
		Complete(&Reconciler{Client: mgr.GetClient(), Subresource: *subresource})
	if err != nil {
		return err
	}
	return mgr.Start(ctrl.SetupSignalHandler())
}
