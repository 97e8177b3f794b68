// Package posting_test checks, against a real control plane, that the
// events posted by runtime/posting are accepted by the API server and have
// exactly Kopf's fields.
package posting_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"

	"github.com/kopf-go/kopf/e2e/cluster"
	"github.com/kopf-go/kopf/runtime/body"
	"github.com/kopf-go/kopf/runtime/logging"
	"github.com/kopf-go/kopf/runtime/posting"
	"github.com/kopf-go/kopf/runtime/settings"
)

// logBuffer collects the poster's own log.
type logBuffer struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// toBody renders a typed object as the reactor sees objects.
func toBody(t *testing.T, obj runtime.Object, apiVersion, kind string) body.Body {
	t.Helper()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	m["apiVersion"], m["kind"] = apiVersion, kind
	return body.Body(m)
}

// kopfCut is Kopf's cut of long messages (ASCII).
func kopfCut(m string) string {
	if len(m) <= 1024 {
		return m
	}
	return m[:511] + "..." + m[len(m)-510:]
}

func TestPosting(t *testing.T) {
	ctx := context.Background()
	c := cluster.Start(t)
	cs := kubernetes.NewForConfigOrDie(c.Config)

	ns := "posting-e2e"
	nsObj, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cm, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "kopf-example-1"}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := cluster.WaitFor(ctx, 30*time.Second, func(ctx context.Context) (bool, error) {
		_, err := cs.CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{})
		return err == nil, err
	}); err != nil {
		t.Fatalf("the default namespace: %v", err)
	}
	obj := toBody(t, cm, "v1", "ConfigMap")
	nsBody := toBody(t, nsObj, "v1", "Namespace")
	// An existing core/v1 Event, to post about (which must be skipped).
	coreEvent, err := cs.CoreV1().Events(ns).Create(ctx, &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{GenerateName: "seed-"},
		InvolvedObject: corev1.ObjectReference{APIVersion: "v1", Kind: "ConfigMap", Name: cm.Name, Namespace: ns, UID: cm.UID},
		Reason:         "Seed", Message: "seed", Type: "Normal",
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	logs := &logBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	p, err := posting.NewForConfig(c.Config, settings.Default().Posting, posting.Options{Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	hctx := posting.WithPoster(ctx, p)

	long := strings.Repeat("0123456789", 300) // 3000 bytes
	wide := strings.Repeat("ä", 600)          // 600 characters, 1200 bytes: too long for the API
	posting.Info(hctx, obj, "SomeReason", "Some info")
	posting.Warn(hctx, obj, "SomeWarning", "Some warning")
	posting.Exception(hctx, obj, "SomeException", errors.New("Exception text."), "Some exception:")
	posting.Event(hctx, obj, "SomeType", "LongMessage", long)
	posting.Event(hctx, obj, "Normal", "WideMessage", wide)
	posting.Info(hctx, toBody(t, coreEvent, "v1", "Event"), "AboutAnEvent", "must be skipped")
	posting.Info(hctx, nsBody, "ClusterScoped", "about a namespace")
	// Log records about the object, as with settings.posting.loggers.
	objLogger := posting.ForObject(slog.New(posting.NewLogHandler(logging.New(logs, logging.Plain, slog.LevelDebug).Handler(), p)), obj)
	objLogger.Info("Handler 'create_fn' succeeded.")
	objLogger.Debug("below the posting level")
	logging.ForObject(objLogger, obj.Ref()).Error("a local logger is not posted")

	stopCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := p.Stop(stopCtx); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if strings.Contains(logs.String(), "Failed to post") {
		t.Errorf("posting failed:\n%s", logs.String())
	}

	list, err := cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.uid=" + string(cm.UID)})
	if err != nil {
		t.Fatal(err)
	}
	byReason := map[string]corev1.Event{}
	for _, ev := range list.Items {
		byReason[ev.Reason] = ev
	}
	want := []struct{ typ, reason, message string }{
		{"Normal", "SomeReason", "Some info"},
		{"Warning", "SomeWarning", "Some warning"},
		{"Error", "SomeException", "Some exception: Exception text."},
		{"SomeType", "LongMessage", kopfCut(long)},
		{"Normal", "Logging", "Handler 'create_fn' succeeded."},
	}
	for _, w := range want {
		ev, ok := byReason[w.reason]
		if !ok {
			t.Errorf("no event with reason %q; events: %v", w.reason, reasons(list.Items))
			continue
		}
		if ev.Type != w.typ || ev.Message != w.message {
			t.Errorf("event %q: type %q, message %q; want %q, %q", w.reason, ev.Type, ev.Message, w.typ, w.message)
		}
		checkKopfFields(t, ev, ns, corev1.ObjectReference{APIVersion: "v1", Kind: "ConfigMap", Name: cm.Name, Namespace: ns, UID: cm.UID})
	}
	if ev := byReason["LongMessage"]; len(ev.Message) != 1024 || !strings.HasPrefix(ev.Message, long[:511]+"...") {
		t.Errorf("the long message is not cut to 1024 bytes in the middle: %d bytes", len(ev.Message))
	}
	if ev, ok := byReason["WideMessage"]; !ok || len(ev.Message) > 1024 || !strings.Contains(ev.Message, "...") {
		t.Errorf("the multi-byte message is not cut to fit: %q", ev.Message)
	}
	for _, single := range []string{"Seed", "Logging"} {
		n := 0
		for _, ev := range list.Items {
			if ev.Reason == single {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%d events with reason %q, want 1 (debug and local log records are not posted)", n, single)
		}
	}
	if len(list.Items) != len(want)+2 { // + the seed and the wide message
		t.Errorf("%d events about the object, want %d: %v", len(list.Items), len(want)+2, reasons(list.Items))
	}

	// No events about events.
	aboutEvents, err := cs.CoreV1().Events("").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.kind=Event"})
	if err != nil {
		t.Fatal(err)
	}
	if len(aboutEvents.Items) != 0 {
		t.Errorf("events about v1 Events were posted: %v", reasons(aboutEvents.Items))
	}

	// Cluster-scoped objects: the event and its involvedObject are in "default".
	clusterScoped, err := cs.CoreV1().Events("default").List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.uid=" + string(nsObj.UID)})
	if err != nil {
		t.Fatal(err)
	}
	if len(clusterScoped.Items) != 1 {
		t.Fatalf("%d events about the namespace in \"default\", want 1", len(clusterScoped.Items))
	}
	checkKopfFields(t, clusterScoped.Items[0], "default", corev1.ObjectReference{APIVersion: "v1", Kind: "Namespace", Name: ns, Namespace: "default", UID: nsObj.UID})
}

func checkKopfFields(t *testing.T, ev corev1.Event, ns string, involved corev1.ObjectReference) {
	t.Helper()
	if ev.GenerateName != "kopf-event-" || !strings.HasPrefix(ev.Name, "kopf-event-") || ev.Namespace != ns {
		t.Errorf("event %q: generateName %q, name %q, namespace %q", ev.Reason, ev.GenerateName, ev.Name, ev.Namespace)
	}
	if ev.Action != "Action?" || ev.ReportingController != "kopf" || ev.ReportingInstance != "dev" || ev.Source.Component != "kopf" || ev.Source.Host != "" {
		t.Errorf("event %q: action %q, reportingComponent %q, reportingInstance %q, source %+v",
			ev.Reason, ev.Action, ev.ReportingController, ev.ReportingInstance, ev.Source)
	}
	if ev.InvolvedObject != involved {
		t.Errorf("event %q: involvedObject %+v, want %+v", ev.Reason, ev.InvolvedObject, involved)
	}
	if ev.EventTime.IsZero() || ev.FirstTimestamp.IsZero() || ev.LastTimestamp.IsZero() || time.Since(ev.EventTime.Time) > time.Minute {
		t.Errorf("event %q: times %v %v %v", ev.Reason, ev.EventTime, ev.FirstTimestamp, ev.LastTimestamp)
	}
	if ev.Count != 0 || ev.Series != nil || ev.Related != nil {
		t.Errorf("event %q: count %d, series %v, related %v; Kopf sets none", ev.Reason, ev.Count, ev.Series, ev.Related)
	}
}

// TestAPIServerLimits documents what the API server accepts from core/v1
// clients for events with eventTime set, which the poster relies on: any
// type (Kopf's "Error" included), and messages of at most 1024 bytes (not
// characters).
func TestAPIServerLimits(t *testing.T) {
	ctx := context.Background()
	c := cluster.Start(t)
	cs := kubernetes.NewForConfigOrDie(c.Config)
	if err := cluster.WaitFor(ctx, 30*time.Second, func(ctx context.Context) (bool, error) {
		_, err := cs.CoreV1().Namespaces().Get(ctx, "default", metav1.GetOptions{})
		return err == nil, err
	}); err != nil {
		t.Fatalf("the default namespace: %v", err)
	}
	now := time.Now()
	event := func(typ, message string) *corev1.Event {
		return &corev1.Event{
			ObjectMeta:          metav1.ObjectMeta{GenerateName: "kopf-event-"},
			Action:              "Action?",
			Type:                typ,
			Reason:              "Limits",
			Message:             message,
			ReportingController: "kopf",
			ReportingInstance:   "dev",
			Source:              corev1.EventSource{Component: "kopf"},
			InvolvedObject:      corev1.ObjectReference{APIVersion: "v1", Kind: "ConfigMap", Name: "x", Namespace: "default"},
			FirstTimestamp:      metav1.NewTime(now),
			LastTimestamp:       metav1.NewTime(now),
			EventTime:           metav1.NewMicroTime(now),
		}
	}
	for _, typ := range []string{"Normal", "Warning", "Error", "Fatal", "SomeType"} {
		if _, err := cs.CoreV1().Events("default").Create(ctx, event(typ, "m"), metav1.CreateOptions{}); err != nil {
			t.Errorf("type %q is rejected: %v", typ, err)
		}
	}
	if _, err := cs.CoreV1().Events("default").Create(ctx, event("Normal", strings.Repeat("a", 1024)), metav1.CreateOptions{}); err != nil {
		t.Errorf("a message of 1024 bytes is rejected: %v", err)
	}
	_, err := cs.CoreV1().Events("default").Create(ctx, event("Normal", strings.Repeat("ä", 600)), metav1.CreateOptions{})
	if !apierrors.IsInvalid(err) {
		t.Errorf("a message of 600 characters but 1200 bytes: got %v, want it rejected as invalid", err)
	}
}

func reasons(evs []corev1.Event) []string {
	out := make([]string, len(evs))
	for i, ev := range evs {
		out[i] = ev.Type + "/" + ev.Reason
	}
	return out
}
