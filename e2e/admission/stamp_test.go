package admission

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	admissionregv1 "k8s.io/api/admissionregistration/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kopf-go/kopf"
	"github.com/kopf-go/kopf/envtest"
	"github.com/kopf-go/kopf/kopftest"
	"github.com/kopf-go/kopf/runtime/sharding"
)

// stampBuckets is the number of buckets of the stamp's tests.
const stampBuckets = 16

// handled records create_fn's runs: per object, when and by which
// replica.
type handled struct {
	mu   sync.Mutex
	at   map[string][]time.Time
	by   map[string][]string
	seen map[string]map[string]string // the labels create_fn saw
}

func newHandled() *handled {
	return &handled{at: map[string][]time.Time{}, by: map[string][]string{}, seen: map[string]map[string]string{}}
}

func (h *handled) record(name, replica string, labels map[string]string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.at[name] = append(h.at[name], time.Now())
	h.by[name] = append(h.by[name], replica)
	h.seen[name] = labels
}

// runs returns the object's runs: the replicas and the first run's time.
func (h *handled) runs(name string) ([]string, time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.at[name]) == 0 {
		return nil, time.Time{}
	}
	return slices.Clone(h.by[name]), h.at[name][0]
}

// labels are the labels that create_fn saw on the object.
func (h *handled) labels(name string) map[string]string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.seen[name]
}

// stampOperator registers create_fn (recorded as the replica's) and, with
// webhooks, the user's own mutating handler of the same resource, which
// ignores its failures (so that the operator down does not refuse
// creations for the handler's sake).
func stampOperator(h *handled, replica string, webhooks bool) func(*kopf.Registry) error {
	return func(r *kopf.Registry) error {
		err := r.AddChanging(kopf.ChangingHandler{ID: "create_fn", Selector: examples, Reasons: []kopf.Reason{kopf.ReasonCreate},
			Fn: func(_ context.Context, kw *kopf.ChangingKwargs) (any, error) {
				h.record(kw.Name, replica, kw.Labels)
				return nil, nil
			}})
		if err != nil || !webhooks {
			return err
		}
		return r.AddWebhook(kopf.WebhookHandler{ID: "mutate1", Kind: kopf.WebhookMutating, Selector: examples, Operations: []string{"CREATE"}, IgnoreFailures: true,
			Fn: kopf.AdmissionFunc(func(_ context.Context, kw kopf.AdmissionKwargs) error {
				kw.Patch.Spec()["injected"] = "by mutate1"
				return nil
			})})
	}
}

// labelMode is a replica's sharding in the label mode, with short Leases.
func labelMode(identity string) kopf.Option {
	return kopf.WithSharding(kopf.Sharding{
		Buckets: stampBuckets, Mode: sharding.ModeLabel, Group: "stamp", Namespace: "default", Identity: identity,
		LeaseDuration: 4 * time.Second, RenewInterval: time.Second,
	})
}

// awaitBuckets waits until identity holds every bucket.
func awaitBuckets(t *testing.T, cs kubernetes.Interface, identity string) {
	t.Helper()
	kopftest.Eventually(t, 60*time.Second, identity+" holds every bucket", func(ctx context.Context) (bool, error) {
		list, err := cs.CoordinationV1().Leases("default").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		held := 0
		for _, l := range list.Items {
			if strings.HasPrefix(l.Name, "stamp-bucket-") && ptr.Deref(l.Spec.HolderIdentity, "") == identity {
				held++
			}
		}
		return held == stampBuckets, nil
	})
}

// created is an object created by the test: the object returned by the
// create call, when the call returned, how long it took.
type created struct {
	obj  *unstructured.Unstructured
	at   time.Time
	took time.Duration
}

// createExamples creates n KopfExamples named prefix-NN.
func createExamples(t *testing.T, objs dynamic.ResourceInterface, prefix string, n int) []created {
	t.Helper()
	var out []created
	for i := range n {
		begun := time.Now()
		obj, err := objs.Create(t.Context(), example(fmt.Sprintf("%s-%02d", prefix, i), nil, map[string]any{}), metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("creating %s-%02d: %v", prefix, i, err)
		}
		out = append(out, created{obj: obj, at: time.Now(), took: time.Since(begun)})
	}
	return out
}

// latencies waits until create_fn has run for every object, checks that
// it ran once, on replica, with the object's bucket label, and returns
// the times from each creation's return to its handler's run, and the
// creation calls' durations, sorted.
func latencies(t *testing.T, h *handled, objs []created, replica string) (handledIn, creations []time.Duration) {
	t.Helper()
	kopftest.Eventually(t, 60*time.Second, "create_fn runs for every object", func(context.Context) (bool, error) {
		for _, c := range objs {
			if by, _ := h.runs(c.obj.GetName()); len(by) == 0 {
				return false, nil
			}
		}
		return true, nil
	})
	key := sharding.LabelKey(stampBuckets)
	for _, c := range objs {
		name := c.obj.GetName()
		by, first := h.runs(name)
		if len(by) != 1 || by[0] != replica {
			t.Errorf("create_fn of %s ran on %v, want once on %s", name, by, replica)
		}
		if _, want := sharding.BucketLabel("default", name, stampBuckets); h.labels(name)[key] != want {
			t.Errorf("create_fn of %s saw the labels %v, want %s=%s", name, h.labels(name), key, want)
		}
		handledIn = append(handledIn, first.Sub(c.at))
		creations = append(creations, c.took)
	}
	slices.Sort(handledIn)
	slices.Sort(creations)
	return handledIn, creations
}

// figures are a sorted sample's median and maximum, for the log.
func figures(d []time.Duration) string {
	return fmt.Sprintf("median %s, max %s", d[len(d)/2].Round(100*time.Microsecond), d[len(d)-1].Round(100*time.Microsecond))
}

// TestBucketStamp: in sharding's label mode with managed webhooks, the
// operator's own mutating webhook stamps the bucket label at creation
// (its own entry beside the user's mutating handler of the resource): the
// object that the create call returns carries it, and its owner handles
// it once, at once; an object with generateName has no name at mutating
// admission (kube-apiserver generates it after), so the labeller labels
// it. With the webhook's server down (the operator stopped while another
// replica's Lease keeps the configuration), creations succeed
// (failurePolicy Ignore), unlabelled, and another replica's labeller
// labels them. It logs the time from creation to handling both ways.
func TestBucketStamp(t *testing.T) {
	env := envtest.Start(t, envtest.WithCRDs("../../examples/crd.yaml"))
	ctx := t.Context()
	cs := kubernetes.NewForConfigOrDie(env.Config)
	objs := client(t, env.Config, nil).Namespace("default")
	key := sharding.LabelKey(stampBuckets)
	h := newHandled()
	op := kopftest.Start(t, env.Config, stampOperator(h, "op-1", true), append(server(freePort(t)), labelMode("op-1"))...)
	op.WaitReady(60 * time.Second)
	awaitBuckets(t, cs, "op-1")
	kopftest.Eventually(t, 30*time.Second, "the API server calls the stamp", func(ctx context.Context) (bool, error) {
		obj, err := objs.Create(ctx, example("probe", nil, nil), metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err == nil && obj.GetLabels()[key] != "", err
	})
	checkStampEntry(t, cs)

	stamped := createExamples(t, objs, "stamped", 20)
	for _, c := range stamped {
		_, want := sharding.BucketLabel("default", c.obj.GetName(), stampBuckets)
		if got := c.obj.GetLabels()[key]; got != want {
			t.Errorf("%s as created: %s=%q, want %q", c.obj.GetName(), key, got, want)
		}
		if v, _, _ := unstructured.NestedString(c.obj.Object, "spec", "injected"); v != "by mutate1" {
			t.Errorf("%s as created: spec.injected %q, want the user's mutation beside the stamp", c.obj.GetName(), v)
		}
	}
	generated := example("", nil, map[string]any{})
	generated.SetGenerateName("generated-")
	obj, err := objs.Create(ctx, generated, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	generatedAt := time.Now()
	if v, ok := obj.GetLabels()[key]; ok {
		t.Errorf("%s (generateName) as created: %s=%q; kube-apiserver names it after the mutating webhooks, so the stamp cannot", obj.GetName(), key, v)
	}
	withWebhook, createUp := latencies(t, h, stamped, "op-1")
	t.Logf("stamped at creation: create → create_fn %s; the create calls %s", figures(withWebhook), figures(createUp))
	byLabeller, _ := latencies(t, h, []created{{obj: obj, at: generatedAt}}, "op-1")
	t.Logf("%s (generateName), labelled by the labeller: handled %s after its creation", obj.GetName(), byLabeller[0].Round(100*time.Microsecond))

	// The server down: another replica's live Lease keeps the
	// configuration (with the stamp) as the operator exits.
	keepConfigurations(t, cs)
	if err := op.Stop(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(op.Logs(), "Keeping the admission webhook auto.kopf.dev: other replicas serve it.") {
		t.Fatalf("the configurations are not kept:\n%s", op.Logs())
	}
	checkStampEntry(t, cs)
	op2 := kopftest.Start(t, env.Config, stampOperator(h, "op-2", false), labelMode("op-2"))
	op2.WaitReady(60 * time.Second)
	awaitBuckets(t, cs, "op-2")
	unstamped := createExamples(t, objs, "unstamped", 20)
	for _, c := range unstamped {
		if v, ok := c.obj.GetLabels()[key]; ok {
			t.Errorf("%s as created with the stamp's server down: %s=%q", c.obj.GetName(), key, v)
		}
	}
	labellerOnly, createDown := latencies(t, h, unstamped, "op-2")
	t.Logf("the stamp's server down, labelled by the labeller: create → create_fn %s; the create calls %s", figures(labellerOnly), figures(createDown))
	for _, c := range stamped {
		if by, _ := h.runs(c.obj.GetName()); len(by) != 1 {
			t.Errorf("create_fn of %s ran on %v after the hand-over, want once", c.obj.GetName(), by)
		}
	}
}

// checkStampEntry checks the stamp's entry of the managed mutating
// configuration: its own, after the user's handler's, ignoring failures.
func checkStampEntry(t *testing.T, cs kubernetes.Interface) {
	t.Helper()
	cfg, err := cs.AdmissionregistrationV1().MutatingWebhookConfigurations().Get(t.Context(), managed, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, w := range cfg.Webhooks {
		names = append(names, w.Name)
	}
	if len(cfg.Webhooks) != 2 || names[0] != "mutate1."+managed || names[1] != "kopf-bucket-stamp."+managed {
		t.Fatalf("mutating webhooks %v, want the user's and the stamp", names)
	}
	w := cfg.Webhooks[1]
	if *w.FailurePolicy != admissionregv1.Ignore || len(w.Rules) != 1 || w.Rules[0].Operations[0] != admissionregv1.Create || w.Rules[0].Resources[0] != "kopfexamples" {
		t.Errorf("the stamp's entry: failurePolicy %s, rules %+v", *w.FailurePolicy, w.Rules)
	}
}

// keepConfigurations writes a live admission Lease of another replica, so
// that the operator that exits keeps the managed configurations.
func keepConfigurations(t *testing.T, cs kubernetes.Interface) {
	t.Helper()
	now := metav1.NewMicroTime(time.Now())
	_, err := cs.CoordinationV1().Leases("default").Create(t.Context(), &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: managed + ".another", Labels: map[string]string{"kopf.dev/admission-managed": managed}},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: ptr.To("another"), LeaseDurationSeconds: ptr.To[int32](15), AcquireTime: &now, RenewTime: &now},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
}
