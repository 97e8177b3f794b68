package posting

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/kopf-go/kopf/runtime/body"
	"github.com/kopf-go/kopf/runtime/settings"
)

// Defaults of Options.
const (
	DefaultQueueSize        = 1024
	DefaultRequestTimeout   = 30 * time.Second
	DefaultDefaultNamespace = "default"
)

// Sink sends one event to the API server. It is called from the poster's
// one goroutine, one event at a time, and may block for as long as ctx
// allows. The event must not be modified.
type Sink interface {
	CreateEvent(ctx context.Context, event *corev1.Event) error
}

// ClientSink returns a Sink that creates the events with a dynamic client:
// POST /api/v1/namespaces/<the event's namespace>/events with the event as
// JSON.
func ClientSink(c dynamic.Interface) Sink { return clientSink{c} }

type clientSink struct{ c dynamic.Interface }

func (s clientSink) CreateEvent(ctx context.Context, ev *corev1.Event) error {
	obj, err := toUnstructured(ev)
	if err != nil {
		return err
	}
	if _, err := s.c.Resource(schema.GroupVersionResource{Version: "v1", Resource: "events"}).Namespace(ev.Namespace).Create(ctx, obj, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("creating an event in namespace %q: %w", ev.Namespace, err)
	}
	return nil
}

// toUnstructured renders the event as the JSON tree the API receives.
func toUnstructured(ev *corev1.Event) (*unstructured.Unstructured, error) {
	data, err := json.Marshal(ev)
	if err != nil {
		return nil, fmt.Errorf("encoding the event: %w", err)
	}
	obj := map[string]any{}
	if err := json.Unmarshal(data, &obj); err != nil {
		return nil, fmt.Errorf("encoding the event: %w", err)
	}
	if meta, ok := obj["metadata"].(map[string]any); ok && meta["creationTimestamp"] == nil {
		delete(meta, "creationTimestamp") // an unset time encodes as null
	}
	obj["apiVersion"], obj["kind"] = "v1", "Event"
	return &unstructured.Unstructured{Object: obj}, nil
}

// Options tune a Poster. The zero value means Kopf's defaults.
type Options struct {
	// Level is Kopf's settings.posting.level: the lowest level at which
	// Info (INFO), Warn (WARNING), Exception (ERROR) and log records (see
	// NewLogHandler) post. The zero value is slog.LevelInfo, Kopf's default.
	Level slog.Level
	// DefaultNamespace is where events about cluster-scoped objects go
	// (Kopf: the current context's namespace, else "default"). Default:
	// "default".
	DefaultNamespace string
	// Logger receives the warnings about events that could not be posted.
	// Its records never carry an ObjectRef, so they are never posted back.
	// Default: slog.Default() at the time of New.
	Logger *slog.Logger
	// QueueSize is how many events may wait to be sent; events beyond it
	// are dropped with a warning. Default: DefaultQueueSize.
	QueueSize int
	// RequestTimeout bounds each request to the API server. Default:
	// DefaultRequestTimeout.
	RequestTimeout time.Duration
}

// Poster posts events in the background. It is safe for concurrent use;
// its posting methods never block and never panic, and do nothing on a nil
// *Poster, after Stop, or when posting is disabled in the settings.
//
// A Poster starts its one goroutine in New and ends it in Stop; a Poster
// that is never stopped keeps its goroutine for the life of the process.
type Poster struct {
	sink             Sink
	settings         settings.Posting
	level            slog.Level
	defaultNamespace string
	logger           *slog.Logger
	timeout          time.Duration
	now              func() time.Time

	mu      sync.RWMutex // guards closed against sending on a closed queue
	closed  bool
	queue   chan *corev1.Event
	done    chan struct{} // closed when the worker has exited
	stopped sync.Once

	// abort cancels the worker's requests and makes it drop what is left.
	abortCtx context.Context
	abort    context.CancelFunc
	dropped  int // events dropped on abort; read after done is closed
}

// New returns a running Poster that sends the events to sink. The settings
// are copied: later changes to them do not affect the Poster.
func New(sink Sink, s settings.Posting, opts Options) *Poster {
	if opts.DefaultNamespace == "" {
		opts.DefaultNamespace = DefaultDefaultNamespace
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.QueueSize <= 0 {
		opts.QueueSize = DefaultQueueSize
	}
	if opts.RequestTimeout <= 0 {
		opts.RequestTimeout = DefaultRequestTimeout
	}
	abortCtx, abort := context.WithCancel(context.Background())
	p := &Poster{
		sink:             sink,
		settings:         s,
		level:            opts.Level,
		defaultNamespace: opts.DefaultNamespace,
		logger:           opts.Logger,
		timeout:          opts.RequestTimeout,
		now:              time.Now,
		queue:            make(chan *corev1.Event, opts.QueueSize),
		done:             make(chan struct{}),
		abortCtx:         abortCtx,
		abort:            abort,
	}
	go p.run()
	return p
}

// NewForConfig returns a running Poster that posts with a ClientSink of a
// dynamic client made from cfg (which is not modified).
func NewForConfig(cfg *rest.Config, s settings.Posting, opts Options) (*Poster, error) {
	c, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("creating the client for events: %w", err)
	}
	return New(ClientSink(c), s, opts), nil
}

// Event posts an event of any type about obj, if posting is enabled,
// regardless of Options.Level (as kopf.event does).
func (p *Poster) Event(obj body.Body, typ, reason, message string) {
	if p == nil || !p.settings.Enabled {
		return
	}
	p.PostRef(RefOf(obj), typ, reason, message)
}

// Info posts a "Normal" event about obj, if posting is enabled and
// Options.Level is INFO or lower.
func (p *Poster) Info(obj body.Body, reason, message string) {
	if p.allows(slog.LevelInfo) {
		p.PostRef(RefOf(obj), TypeNormal, reason, message)
	}
}

// Warn posts a "Warning" event about obj, if posting is enabled and
// Options.Level is WARNING or lower.
func (p *Poster) Warn(obj body.Body, reason, message string) {
	if p.allows(slog.LevelWarn) {
		p.PostRef(RefOf(obj), TypeWarning, reason, message)
	}
}

// Exception posts an "Error" event about obj, if posting is enabled and
// Options.Level is ERROR or lower, as Kopf's kopf.exception(): the message
// is message and err's text joined by a space, or whichever of them is
// not empty. An empty reason becomes the name of err's type without
// package and pointer (e.g. "PathError"; Kopf uses the exception's class
// name), or "Error" if err is nil.
func (p *Poster) Exception(obj body.Body, reason string, err error, message string) {
	if !p.allows(slog.LevelError) {
		return
	}
	if reason == "" {
		reason = errorTypeName(err)
	}
	switch {
	case err != nil && message != "":
		message += " " + err.Error()
	case err != nil:
		message = err.Error()
	}
	p.PostRef(RefOf(obj), TypeError, reason, message)
}

// PostRef queues an event about the referenced object, if posting is
// enabled, regardless of Options.Level; events about core/v1 Events are
// skipped. It never blocks: if the queue is full, the event is dropped and a
// warning is logged.
func (p *Poster) PostRef(ref ObjectRef, typ, reason, message string) {
	if p == nil || !p.settings.Enabled || ref.isCoreEvent() {
		return
	}
	ev := shape(ref, typ, reason, message, p.settings, p.defaultNamespace, p.now())
	queued, closed := p.enqueue(ev)
	switch { // logged outside the lock: the logger may post events itself
	case closed:
		p.logger.Debug(fmt.Sprintf("The event poster is stopped; the event is not posted. %s", describe(ev)))
	case !queued:
		p.logger.Warn(fmt.Sprintf("Failed to post an event. The queue is full (%d events); dropping it. %s", cap(p.queue), describe(ev)))
	}
}

// enqueue puts the event into the queue unless the queue is full or closed.
func (p *Poster) enqueue(ev *corev1.Event) (queued, closed bool) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.closed {
		return false, true
	}
	select {
	case p.queue <- ev:
		return true, false
	default:
		return false, false
	}
}

// allows reports whether events of the given level are posted.
func (p *Poster) allows(l slog.Level) bool {
	return p != nil && p.settings.Enabled && l >= p.level
}

// Stop stops accepting events and sends those already queued, waiting at
// most until ctx is done. If ctx ends first, the request in flight is
// cancelled, the remaining events are dropped, and an error wrapping
// ctx.Err() says how many were not posted. Stop may be called more than
// once and concurrently; every call waits for the same flush. A nil
// *Poster stops at once.
func (p *Poster) Stop(ctx context.Context) error {
	if p == nil {
		return nil
	}
	p.stopped.Do(func() {
		p.mu.Lock()
		p.closed = true
		close(p.queue)
		p.mu.Unlock()
	})
	select {
	case <-p.done:
		return nil
	case <-ctx.Done():
	}
	p.abort()
	<-p.done // prompt: the request is cancelled, the rest is only counted
	if p.dropped > 0 {
		return fmt.Errorf("posting: %d event(s) not posted on stop: %w", p.dropped, ctx.Err())
	}
	return nil
}

// run sends the queued events until the queue is closed and drained, or
// until aborted, after which it only counts what is left.
func (p *Poster) run() {
	defer close(p.done)
	defer p.abort() // release the context's resources
	for ev := range p.queue {
		if p.abortCtx.Err() != nil {
			p.dropped++
			continue
		}
		p.send(ev)
	}
}

func (p *Poster) send(ev *corev1.Event) {
	ctx, cancel := context.WithTimeout(p.abortCtx, p.timeout)
	defer cancel()
	err := p.sink.CreateEvent(ctx, ev)
	if err == nil {
		return
	}
	if p.abortCtx.Err() != nil {
		p.dropped++ // cut short by Stop's deadline
		return
	}
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		st := status.Status()
		details := ""
		if st.Details != nil {
			if data, jerr := json.Marshal(st.Details); jerr == nil {
				details = " Details: " + string(data) + "."
			}
		}
		p.logger.Warn(fmt.Sprintf("Failed to post an event. Ignoring and continuing. Code: %d. Message: %s.%s %s",
			st.Code, st.Message, details, describe(ev)))
		return
	}
	p.logger.Warn(fmt.Sprintf("Failed to post an event. Ignoring and continuing. Error: %v. %s", err, describe(ev)))
}

// describe renders an event for the log, as Kopf's warnings do.
func describe(ev *corev1.Event) string {
	return fmt.Sprintf("Event: type=%q, reason=%q, message=%q.", ev.Type, ev.Reason, ev.Message)
}

// errorTypeName is the name of err's dynamic type without the package and
// pointers, or "Error" when it has none (nil or an unnamed type).
func errorTypeName(err error) string {
	if err == nil {
		return "Error"
	}
	t := reflect.TypeOf(err)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Name() == "" {
		return "Error"
	}
	return t.Name()
}
