package posting

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kopf-go/kopf/internal/testutil"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kopf-go/kopf/runtime/body"
	"github.com/kopf-go/kopf/runtime/settings"
)

// fakeSink records the events; it fails with err if set, and waits for
// release (if set) before each event.
type fakeSink struct {
	mu      sync.Mutex
	events  []*corev1.Event
	err     error
	release chan struct{}
	started chan struct{} // receives once per call, if set
}

func (s *fakeSink) CreateEvent(ctx context.Context, ev *corev1.Event) error {
	if s.started != nil {
		s.started <- struct{}{}
	}
	if s.release != nil {
		select {
		case <-s.release:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return s.err
	}
	s.events = append(s.events, ev)
	return nil
}

func (s *fakeSink) got() []*corev1.Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*corev1.Event(nil), s.events...)
}

type syncBuffer = testutil.Buffer

func newTestPoster(t *testing.T, sink Sink, s settings.Posting, opts Options) (*Poster, *syncBuffer) {
	t.Helper()
	logs := &syncBuffer{}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	p := New(sink, s, opts)
	t.Cleanup(func() { _ = p.Stop(context.Background()) })
	return p, logs
}

func stop(t *testing.T, p *Poster) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := p.Stop(ctx); err != nil {
		t.Fatalf("Stop: %v", err)
	}
}

type summary struct{ typ, reason, message string }

func summarize(evs []*corev1.Event) []summary {
	out := make([]summary, len(evs))
	for i, ev := range evs {
		out[i] = summary{ev.Type, ev.Reason, ev.Message}
	}
	return out
}

func TestPosterPostsInOrder(t *testing.T) {
	sink := &fakeSink{}
	p, _ := newTestPoster(t, sink, settings.Default().Posting, Options{})
	obj := configMap("ns1")
	ctx := WithPoster(context.Background(), p)
	Event(ctx, obj, "SomeType", "SomeReason", "Some message")
	Info(ctx, obj, "R1", "info")
	Warn(ctx, obj, "R2", "warn")
	Exception(ctx, obj, "R3", errors.New("Exception text."))
	Exception(ctx, obj, "", &fs.PathError{Op: "open", Path: "/x", Err: fs.ErrNotExist})
	// The message is optional, as Kopf's message='' is; Exception's goes
	// before the error's text, as Kopf's f'{message} {exc}'.
	Info(ctx, obj, "R4")
	Warn(ctx, obj, "R5", "two", "parts")
	Exception(ctx, obj, "R6", errors.New("Exception text."), "Some exception:")
	Exception(ctx, obj, "R7", nil, "No error.")
	Event(ctx, obj, "SomeType", "R8")
	stop(t, p)
	want := []summary{
		{"SomeType", "SomeReason", "Some message"},
		{"Normal", "R1", "info"},
		{"Warning", "R2", "warn"},
		{"Error", "R3", "Exception text."},
		{"Error", "PathError", "open /x: file does not exist"},
		{"Normal", "R4", ""},
		{"Warning", "R5", "two parts"},
		{"Error", "R6", "Some exception: Exception text."},
		{"Error", "R7", "No error."},
		{"SomeType", "R8", ""},
	}
	if got := summarize(sink.got()); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("posted %v, want %v", got, want)
	}
	for _, ev := range sink.got() {
		if ev.InvolvedObject.UID != "uid-1" || ev.Namespace != "ns1" || ev.GenerateName != "kopf-event-" {
			t.Errorf("event not about the object: %+v", ev)
		}
	}
}

func TestPosterLevelAndEnabled(t *testing.T) {
	obj := configMap("ns1")
	for _, tc := range []struct {
		name    string
		enabled bool
		level   slog.Level
		want    []string
	}{
		{"defaults", true, slog.LevelInfo, []string{"event", "info", "warn", "exception"}},
		{"warning", true, slog.LevelWarn, []string{"event", "warn", "exception"}},
		{"error", true, slog.LevelError, []string{"event", "exception"}},
		{"above error", true, slog.LevelError + 1, []string{"event"}},
		{"disabled", false, slog.LevelInfo, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sink := &fakeSink{}
			s := settings.Default().Posting
			s.Enabled = tc.enabled
			p, _ := newTestPoster(t, sink, s, Options{Level: tc.level})
			p.Event(obj, "T", "event", "")
			p.Info(obj, "info", "")
			p.Warn(obj, "warn", "")
			p.Exception(obj, "exception", nil, "")
			stop(t, p)
			var got []string
			for _, ev := range sink.got() {
				got = append(got, ev.Reason)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("posted %v, want %v", got, tc.want)
			}
		})
	}
}

func TestPosterSkipsCoreEvents(t *testing.T) {
	sink := &fakeSink{}
	p, _ := newTestPoster(t, sink, settings.Default().Posting, Options{})
	coreEvent := body.Body{"apiVersion": "v1", "kind": "Event", "metadata": map[string]any{"name": "e", "namespace": "ns"}}
	newEvent := body.Body{"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": map[string]any{"name": "e", "namespace": "ns"}}
	p.Info(coreEvent, "Skipped", "")
	p.Event(coreEvent, "Normal", "Skipped", "")
	p.Info(newEvent, "Posted", "")
	stop(t, p)
	if got := summarize(sink.got()); len(got) != 1 || got[0].reason != "Posted" {
		t.Errorf("posted %v, want only the events.k8s.io one", got)
	}
}

func TestNoPoster(t *testing.T) {
	obj := configMap("ns1")
	var nilPoster *Poster
	for _, ctx := range []context.Context{context.Background(), WithPoster(context.Background(), nil), nil} {
		Event(ctx, obj, "T", "R", "M")
		Info(ctx, obj, "R", "M")
		Warn(ctx, obj, "R", "M")
		Exception(ctx, obj, "R", errors.New("x"))
		Exception(ctx, nil, "", nil)
	}
	nilPoster.PostRef(ObjectRef{}, "T", "R", "M")
	if err := nilPoster.Stop(context.Background()); err != nil {
		t.Errorf("Stop of a nil poster: %v", err)
	}
	if FromContext(context.Background()) != nil {
		t.Errorf("FromContext of an empty context is not nil")
	}
}

func TestPosterLogsFailures(t *testing.T) {
	invalid := apierrors.NewInvalid(schema.GroupKind{Kind: "Event"}, "",
		field.ErrorList{field.Required(field.NewPath("reason"), "")})
	sink := &fakeSink{err: fmt.Errorf("creating: %w", invalid)}
	p, logs := newTestPoster(t, sink, settings.Default().Posting, Options{})
	p.Info(configMap("ns1"), "R", "first")
	p.Info(configMap("ns1"), "R", "second")
	stop(t, p)
	out := logs.String()
	for _, want := range []string{
		`level=WARN msg="Failed to post an event. Ignoring and continuing. Code: 422. Message: Event \"\" is invalid: reason: Required value.`,
		`Event: type=\"Normal\", reason=\"R\", message=\"first\".`,
		`message=\"second\".`,
		`Details: {`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}

	sink2 := &fakeSink{err: errors.New("connection refused")}
	p2, logs2 := newTestPoster(t, sink2, settings.Default().Posting, Options{})
	p2.Info(configMap("ns1"), "R", "m")
	stop(t, p2)
	if !strings.Contains(logs2.String(), `Failed to post an event. Ignoring and continuing. Error: connection refused. Event: type=\"Normal\"`) {
		t.Errorf("log lacks the failure:\n%s", logs2.String())
	}
}

func TestPosterNeverBlocks(t *testing.T) {
	sink := &fakeSink{release: make(chan struct{}), started: make(chan struct{}, 100)}
	p, logs := newTestPoster(t, sink, settings.Default().Posting, Options{QueueSize: 2})
	obj := configMap("ns1")
	p.Info(obj, "R", "in flight")
	<-sink.started // the worker holds it; the queue is empty
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.Info(obj, "R", "queued 1")
		p.Info(obj, "R", "queued 2")
		p.Info(obj, "R", "dropped")
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("posting blocked on a full queue")
	}
	if !strings.Contains(logs.String(), `The queue is full (2 events); dropping it. Event: type=\"Normal\", reason=\"R\", message=\"dropped\".`) {
		t.Errorf("no warning about the dropped event:\n%s", logs.String())
	}
	close(sink.release)
	stop(t, p)
	if got := summarize(sink.got()); len(got) != 3 || got[2].message != "queued 2" {
		t.Errorf("posted %v", got)
	}
}

func TestStopIsBounded(t *testing.T) {
	sink := &fakeSink{release: make(chan struct{}), started: make(chan struct{}, 100)}
	p, _ := newTestPoster(t, sink, settings.Default().Posting, Options{})
	obj := configMap("ns1")
	for i := range 5 {
		p.Info(obj, "R", fmt.Sprint(i))
	}
	<-sink.started
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := p.Stop(ctx)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "5 event(s) not posted") {
		t.Errorf("Stop = %v, want 5 events not posted, wrapping the deadline", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Stop took %s", d)
	}
	if err := p.Stop(context.Background()); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("second Stop = %v", err)
	}
	p.Info(obj, "R", "after stop") // dropped, no panic
	if got := sink.got(); len(got) != 0 {
		t.Errorf("posted %d events, want none", len(got))
	}
}

func TestStopFlushes(t *testing.T) {
	sink := &fakeSink{}
	p, _ := newTestPoster(t, sink, settings.Default().Posting, Options{})
	for i := range 100 {
		p.Info(configMap("ns1"), "R", fmt.Sprint(i))
	}
	stop(t, p)
	if got := sink.got(); len(got) != 100 {
		t.Errorf("posted %d events, want 100", len(got))
	}
}

func TestPosterConcurrent(t *testing.T) {
	sink := &fakeSink{}
	p, _ := newTestPoster(t, sink, settings.Default().Posting, Options{QueueSize: 10000})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 100 {
				p.Info(configMap(fmt.Sprint("ns", g)), "R", fmt.Sprint(i))
			}
		}()
	}
	stopped := make(chan error)
	go func() {
		wg.Wait()
		stopped <- p.Stop(context.Background())
	}()
	go func() { _ = p.Stop(context.Background()) }() // concurrent Stop: the rest is dropped or posted, never a panic
	if err := <-stopped; err != nil {
		t.Errorf("Stop: %v", err)
	}
}

func TestErrorTypeName(t *testing.T) {
	type plain struct{ error }
	for _, tc := range []struct {
		err  error
		want string
	}{
		{nil, "Error"},
		{&fs.PathError{}, "PathError"},
		{plain{errors.New("x")}, "plain"},
		{errors.New("x"), "errorString"},
		{context.DeadlineExceeded, "deadlineExceededError"},
	} {
		if got := errorTypeName(tc.err); got != tc.want {
			t.Errorf("errorTypeName(%T) = %q, want %q", tc.err, got, tc.want)
		}
	}
}
