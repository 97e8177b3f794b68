package deployed

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/kopf-go/kopf/envtest"
	"github.com/kopf-go/kopf/kopftest"
)

// example is an example operator (examples/<dir>) and its scenario.
type example struct {
	dir string
	// peering: the role has the rules of peering (kopf-gen --peering), and
	// Kopf's peering objects exist (examples/peering.yaml).
	peering bool
	// webhooks: the scaffold has the webhooks' binding and port (kopf-gen
	// init --webhooks).
	webhooks bool
	// scenario is the example's own end-to-end test, shortened where its
	// checks concern the handlers rather than the API calls.
	scenario func(r *run)
}

// examples are run in this order, on one control plane: 06-peering last,
// as its peering objects stay (an operator without the rules of peering
// is not deployed where they exist: docs/peering.md). 16-indexing is not
// among them: kopf-gen cannot write its role, as its timer's selector is
// kex, a short name of Kopf's CRD, which the generator does not resolve
// (it knows the //kopf:resource names, not +kubebuilder:resource:shortName).
var examples = []example{
	{dir: "01-minimal", scenario: minimal},
	{dir: "02-children", scenario: children},
	{dir: "03-exceptions", scenario: exceptions},
	{dir: "04-events", scenario: events},
	{dir: "05-handlers", scenario: handlers},
	{dir: "07-subhandlers", scenario: subhandlers},
	{dir: "11-filtering-handlers", scenario: filtering},
	{dir: "14-daemons", scenario: daemons},
	{dir: "10-builtins", scenario: builtins},
	{dir: "15-timers", scenario: timers},
	{dir: "17-admission", webhooks: true, scenario: admission},
	{dir: "06-peering", peering: true, scenario: peering},
}

// The example object (examples/obj.yaml) and the prefix of its log lines.
const (
	name = "kopf-example-1"
	ref  = "[default/kopf-example-1] "
)

var kopfexamples = schema.GroupVersionResource{Group: "kopf.dev", Version: "v1", Resource: "kopfexamples"}

// run is one example's run: its deployment, its operators, and its
// objects, which the test changes as an admin (the user of the operator).
type run struct {
	t    *testing.T
	ex   example
	d    *deployment
	objs *kopftest.Objects
	ops  []*operator
}

// start starts an operator as deployed, verbose (the scenarios read its
// debug lines), with extra arguments, and waits for its probes to pass.
func (r *run) start(label string, extra ...string) *operator {
	r.t.Helper()
	op := r.d.start(r.t, r.ex, label, append([]string{"--verbose"}, extra...)...)
	r.ops = append(r.ops, op)
	op.probes(r.t)
	return op
}

// apply applies a manifest of examples/ as an admin.
func (r *run) apply(file string) {
	r.t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "examples", file))
	if err != nil {
		r.t.Fatal(err)
	}
	if _, err := envtest.Apply(r.t.Context(), shared.Config, data); err != nil {
		r.t.Fatalf("applying %s: %v", file, err)
	}
}

// waitLogs waits for each line in the operator's log, in turn.
func (r *run) waitLogs(op *operator, timeout time.Duration, lines ...string) {
	r.t.Helper()
	for _, line := range lines {
		op.WaitLog(r.t, line, timeout)
	}
}

func minimal(r *run) {
	op := r.start("")
	r.apply("obj.yaml")
	r.objs.WaitFor(name, 30*time.Second, func(o *unstructured.Unstructured) bool {
		msg, _, _ := unstructured.NestedString(o.Object, "status", "create_fn", "message")
		_, stored := o.GetAnnotations()["kopf.zalando.org/last-handled-configuration"]
		return msg == "hello world" && stored
	})
	r.waitLogs(op, 5*time.Second, ref+"Creation is processed: 1 succeeded; 0 failed.")
	r.scrapeMetrics(op)
	op.Stop(r.t, 30*time.Second)
	// Restarted: the object is listed, found handled, and left alone.
	op = r.start("restarted")
	r.waitLogs(op, 30*time.Second, ref+"Handling cycle is finished, waiting for new changes.")
	r.objs.Delete(name, 10*time.Second)
	op.Stop(r.t, 30*time.Second)
}

func exceptions(r *run) {
	op := r.start("")
	r.apply("obj.yaml")
	r.waitLogs(op, 60*time.Second, ref+"Creation is processed: 1 succeeded; 3 failed.")
	for _, line := range []string{
		"Handler 'instant_failure_with_only_a_message' failed permanently: Fail once and for all.",
		"Handler 'eventual_success_with_a_few_messages' succeeded.",
		"Handler 'eventual_failure_with_tracebacks' failed with an exception and will stop now (it would exceed 3 retries on the next attempt): An error that is supposed to be recoverable.",
		"Handler 'instant_failure_with_traceback' failed with an exception and will stop now: An error that is supposed to be recoverable.",
	} {
		if !strings.Contains(op.Logs(), ref+line) {
			r.t.Errorf("the log lacks %q", line)
		}
	}
	r.objs.Delete(name, 10*time.Second)
	r.waitLogs(op, 10*time.Second, ref+"Deleted, really deleted, and we are notified.")
	op.Stop(r.t, 30*time.Second)
}

// events: the handler's four events reach the API server (posted with the
// operator's token).
func events(r *run) {
	op := r.start("")
	r.apply("obj.yaml")
	r.waitLogs(op, 30*time.Second, ref+"Handler 'create_fn' succeeded.")
	op.Stop(r.t, 30*time.Second) // posts what is queued before it exits
	obj := r.objs.Get(name)
	list, err := kubernetes.NewForConfigOrDie(shared.Config).CoreV1().Events(namespace).List(r.t.Context(), metav1.ListOptions{
		FieldSelector: "involvedObject.uid=" + string(obj.GetUID()),
	})
	if err != nil {
		r.t.Fatal(err)
	}
	got := map[[3]string]int{}
	for _, ev := range list.Items {
		got[[3]string{ev.Type, ev.Reason, ev.Message}]++
	}
	for _, want := range [][3]string{
		{"SomeType", "SomeReason", "Some message"},
		{corev1.EventTypeNormal, "SomeReason", "Some message"},
		{corev1.EventTypeWarning, "SomeReason", "Some message"},
		{"Error", "SomeReason", "Some exception: Exception text."},
	} {
		if got[want] != 1 {
			r.t.Errorf("%d events %v, want 1; all: %v", got[want], want, got)
		}
	}
	r.objs.Delete(name, 10*time.Second)
}

// handlers: creation, update, resuming after a restart, deletion.
func handlers(r *run) {
	op := r.start("")
	r.apply("obj.yaml")
	r.waitLogs(op, 30*time.Second, ref+"Creation is processed: 3 succeeded; 0 failed.")
	r.objs.MergePatch(name, map[string]any{"spec": map[string]any{"field": "changed"}})
	r.waitLogs(op, 30*time.Second, ref+"Updating is processed: 2 succeeded; 0 failed.")
	op.Stop(r.t, 30*time.Second)
	op = r.start("restarted")
	r.waitLogs(op, 30*time.Second, ref+"Resuming is processed: 2 succeeded; 0 failed.")
	r.objs.Delete(name, 30*time.Second)
	r.waitLogs(op, 10*time.Second,
		ref+"Deletion is processed: 2 succeeded; 0 failed.",
		ref+"Deleted, really deleted, and we are notified.")
	op.Stop(r.t, 30*time.Second)
}

func subhandlers(r *run) {
	op := r.start("")
	r.apply("obj.yaml")
	r.waitLogs(op, 30*time.Second,
		ref+"Handler 'create_fn/item1' succeeded.",
		ref+"Handler 'create_fn/item2' succeeded.",
		ref+"Creation is processed: 1 succeeded; 0 failed.")
	r.objs.Delete(name, 10*time.Second)
	r.waitLogs(op, 10*time.Second, ref+"Deleted, really deleted, and we are notified.")
	op.Stop(r.t, 30*time.Second)
}

// filtering: the 12 matching creation handlers, the daemon of
// spec.field=value until the update stops it, the update handler.
func filtering(r *run) {
	op := r.start("")
	r.apply("obj.yaml")
	r.waitLogs(op, 60*time.Second,
		ref+"Creation is processed: 12 succeeded; 0 failed.",
		ref+"Field daemon is satisfied.")
	r.objs.MergePatch(name, map[string]any{"spec": map[string]any{"field": "changed"}})
	r.waitLogs(op, 30*time.Second,
		ref+"Updating is processed: 1 succeeded; 0 failed.",
		ref+"Daemon 'daemon_with_field/spec.field' has exited on request and will not be retried or restarted.")
	r.objs.WaitFor(name, 10*time.Second, func(o *unstructured.Unstructured) bool { return len(o.GetFinalizers()) == 0 })
	r.objs.Delete(name, 10*time.Second)
	op.Stop(r.t, 30*time.Second)
}

// daemons: three failures each, a patch of the status from each, the
// pings, then the deletion stops both.
func daemons(r *run) {
	op := r.start("")
	r.apply("obj.yaml")
	r.waitLogs(op, 30*time.Second,
		ref+"=> Ping from a sync daemon: field='value', retry=3",
		ref+"=> Ping from an async daemon: field='value'")
	r.objs.WaitFor(name, 10*time.Second, func(o *unstructured.Unstructured) bool {
		msg, _, _ := unstructured.NestedString(o.Object, "status", "message")
		return msg == "Failed 3 times."
	})
	r.objs.Delete(name, 20*time.Second)
	r.waitLogs(op, 10*time.Second,
		ref+"Daemon 'background_sync' has exited on request and will not be retried or restarted.",
		ref+"Daemon 'background_async' has exited on request and will not be retried or restarted.")
	op.Stop(r.t, 30*time.Second)
}

// timers: both timers run once the object is idle (10 s for the async
// one), then the deletion is not held up by them.
func timers(r *run) {
	op := r.start("")
	r.apply("obj.yaml")
	r.waitLogs(op, 30*time.Second,
		ref+"Ping from a sync timer: field='value'",
		ref+"Ping from an async timer: field='value'")
	r.objs.Delete(name, 10*time.Second)
	op.Stop(r.t, 30*time.Second)
}

// children: the handler creates the child pod with the operator's token
// (its //kopf:rbac marker's rule) and stores its uid.
func children(r *run) {
	op := r.start("")
	r.apply("obj.yaml")
	obj := r.objs.WaitFor(name, 30*time.Second, func(o *unstructured.Unstructured) bool {
		children, _, _ := unstructured.NestedStringSlice(o.Object, "status", "create_fn", "children")
		return len(children) == 1
	})
	children, _, _ := unstructured.NestedStringSlice(obj.Object, "status", "create_fn", "children")
	list, err := kubernetes.NewForConfigOrDie(shared.Config).CoreV1().Pods(namespace).List(r.t.Context(), metav1.ListOptions{})
	if err != nil {
		r.t.Fatal(err)
	}
	if len(list.Items) != 1 || string(list.Items[0].UID) != children[0] || len(list.Items[0].OwnerReferences) != 1 {
		r.t.Errorf("pods %v, want the one child %s, adopted", list.Items, children[0])
	}
	r.objs.Delete(name, 10*time.Second)
	op.Stop(r.t, 30*time.Second)
}

// builtins: a pod in sight gets a killer, and the delete handler's
// finalizer; its deletion cancels the killer. (The kill itself, 30 s
// later, with the rule of its //kopf:rbac marker, is not waited for.)
func builtins(r *run) {
	createPod(r.t, "example-pod")
	op := r.start("")
	const pod = "[default/example-pod] "
	r.waitLogs(op, 30*time.Second,
		pod+"=== Pod killing happens in 30s.",
		pod+"Creation is processed: 1 succeeded; 0 failed.")
	pods := kopftest.NewObjects(r.t, shared.Config, corev1.SchemeGroupVersion.WithResource("pods"), namespace)
	pods.Delete("example-pod", 30*time.Second)
	r.waitLogs(op, 10*time.Second,
		pod+"=== Pod killing is cancelled!",
		pod+"Deletion is processed: 1 succeeded; 0 failed.")
	op.Stop(r.t, 30*time.Second)
}

// createPod creates a pod in the namespace as an admin (nothing runs it
// here).
func createPod(t *testing.T, name string) {
	t.Helper()
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "main", Image: "busybox"}}},
	}
	if _, err := kubernetes.NewForConfigOrDie(shared.Config).CoreV1().Pods(namespace).Create(t.Context(), pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// webhookConfigurations are the resources of the admission example's
// managed configurations (auto.kopf.dev).
var webhookConfigurations = []schema.GroupVersionResource{
	{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingwebhookconfigurations"},
	{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "mutatingwebhookconfigurations"},
}

// admission: the operator serves its webhooks on a free port, at
// 127.0.0.1 (the example's automatic server, outside a cluster, for an
// API server that is no recognised local cluster) and manages their
// configurations and its certificate Secret with its token; the API
// server calls them: a refusal, a mutation, a refused status; at exit,
// the operator removes its webhooks from the configurations.
func admission(r *run) {
	op := r.start("")
	r.waitLogs(op, 60*time.Second, "Activity 'config' succeeded.")
	objs := dynamic.NewForConfigOrDie(shared.Config).Resource(kopfexamples).Namespace(namespace)
	ctx := r.t.Context()
	wrong := exampleObject(r.t, "wrong", "wrong")
	if _, err := objs.Create(ctx, wrong, metav1.CreateOptions{}); err == nil || !strings.Contains(err.Error(), `admission webhook "validate1.auto.kopf.dev" denied the request`) {
		r.t.Errorf("creating a wrong object: %v, want validate1's refusal", err)
	}
	stored, err := objs.Create(ctx, exampleObject(r.t, name, "value"), metav1.CreateOptions{})
	if err != nil {
		r.t.Fatal(err)
	}
	if v, found, _ := unstructured.NestedInt64(stored.Object, "spec", "injected"); !found || v != 123 {
		r.t.Errorf("spec.injected = %v (found: %v), want mutate1's 123", v, found)
	}
	stored.Object["status"] = map[string]any{"field": "other"}
	if _, err := objs.UpdateStatus(ctx, stored, metav1.UpdateOptions{}); err == nil || !strings.Contains(err.Error(), "status.field MUST be equal to spec.field!") {
		r.t.Errorf("a status that differs from the spec: %v, want validate_subresources' refusal", err)
	}
	r.checkCertSecretAccess()
	op.Stop(r.t, 60*time.Second)
	// At exit, the last replica leaves only the persistent handlers'
	// webhooks: none here.
	dyn := dynamic.NewForConfigOrDie(shared.Config)
	for _, gvr := range webhookConfigurations {
		cfg, err := dyn.Resource(gvr).Get(ctx, "auto.kopf.dev", metav1.GetOptions{})
		if err != nil {
			r.t.Fatalf("the %s auto.kopf.dev: %v", gvr.Resource, err)
		}
		if webhooks, _, _ := unstructured.NestedSlice(cfg.Object, "webhooks"); len(webhooks) != 0 {
			r.t.Errorf("the %s auto.kopf.dev keeps %d webhooks after the operator's exit, want none", gvr.Resource, len(webhooks))
		}
	}
}

// exampleObject is examples/obj.yaml with another name and spec.field.
func exampleObject(t *testing.T, name, field string) *unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "examples", "obj.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var obj unstructured.Unstructured
	if err := yaml.Unmarshal(data, &obj.Object); err != nil {
		t.Fatal(err)
	}
	obj.SetName(name)
	obj.SetNamespace(namespace)
	if err := unstructured.SetNestedField(obj.Object, field, "spec", "field"); err != nil {
		t.Fatal(err)
	}
	return &obj
}

// peering: as the example's README, operator A pauses while operator B
// runs with --dev, and resumes when B exits; both keep their records in
// Kopf's peering object and elect through a Lease with their token.
func peering(r *run) {
	r.apply("peering.yaml")
	a := r.start("A")
	r.apply("obj.yaml")
	r.waitLogs(a, 30*time.Second, ref+"Handler 'create_fn' succeeded.")
	b := r.start("B", "--dev")
	r.waitLogs(a, 30*time.Second, "Pausing operations in favour of [<Peer ")
	b.Stop(r.t, 30*time.Second)
	r.waitLogs(a, 30*time.Second, "Resuming operations after the pause.")
	r.objs.Delete(name, 10*time.Second)
	a.Stop(r.t, 30*time.Second)
}

// clean removes what a run left as an admin: the webhook configurations,
// then the example objects and the pods (their finalizers dropped; no
// garbage collector deletes the children here).
func clean(t *testing.T) {
	ctx := context.Background()
	dyn := dynamic.NewForConfigOrDie(shared.Config)
	for _, gvr := range webhookConfigurations {
		if err := dyn.Resource(gvr).Delete(ctx, "auto.kopf.dev", metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("cleaning up the %s: %v", gvr.Resource, err)
		}
	}
	for _, gvr := range []schema.GroupVersionResource{kopfexamples, corev1.SchemeGroupVersion.WithResource("pods")} {
		removeAll(t, dyn.Resource(gvr).Namespace(namespace))
	}
}

// removeAll deletes every object of a resource at once, dropping their
// finalizers.
func removeAll(t *testing.T, objs dynamic.ResourceInterface) {
	ctx := context.Background()
	list, err := objs.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Errorf("cleaning up: %v", err)
		return
	}
	for _, obj := range list.Items {
		if len(obj.GetFinalizers()) > 0 {
			patch := []byte(`{"metadata":{"finalizers":null}}`)
			if _, err := objs.Patch(ctx, obj.GetName(), types.MergePatchType, patch, metav1.PatchOptions{}); err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("dropping the finalizers of %s: %v", obj.GetName(), err)
			}
		}
		if err := objs.Delete(ctx, obj.GetName(), metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting %s: %v", obj.GetName(), err)
		}
	}
}
