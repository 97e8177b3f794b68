// Package watching streams the events of one resource (optionally in one
// namespace) from the API server to a callback. client-go's Reflector does
// the bookkeeping: listing (streamed as a watch when the server supports
// it, else paged), watching from the last resourceVersion, bookmarks,
// relisting after expiry and reconnecting with backoff. The requests go
// either through a REST client, with the responses decoded by this package
// in one pass per object (see decoding.go), or through client-go's dynamic
// client; the objects are the same either way.
//
// The decoders read JSON with github.com/go-json-experiment/json/jsontext,
// the tokenizer of encoding/json/v2, rather than with a lexer of their own:
// a well-kept library, fuzzed and maintained by the Go team, that checks
// the syntax as encoding/json does (and so as sigs.k8s.io/json, client-go's
// fork of it), and reads a watch stream straight from the response body
// one token at a time, so that no framing pass precedes the decoding. The
// module mirrors the standard library's encoding/json/jsontext, which Go
// 1.25 and 1.26 have only under GOEXPERIMENT=jsonv2 (and when built so, the
// module's jsontext is an alias of the standard library's). This package
// does not require the experiment; once encoding/json/jsontext leaves it,
// switching is a change of one import path, in values.go (the only file
// that imports jsontext), as the package uses only API that the two share.
// The module's version is the last that requires no Go newer than
// client-go does (1.25); its tagged v1.27 releases require Go 1.26.
//
// Unlike an informer, the watcher keeps no copy of the objects: only each
// object's key and last seen resourceVersion, so that memory per watched
// object is a few dozen bytes. Every object arrives at the callback as the
// API server sent it, less metadata.managedFields, and is not retained
// afterwards.
//
// Guarantees: events of one object are delivered in the order the API
// server sent them; the objects of the first listing are delivered with
// Initial set; an object that disappears while the watch was broken is
// delivered as a Deleted event with only its namespace and name in the body.
// Not guaranteed: that every intermediate version is seen (a relist after a
// broken watch delivers only the latest).
package watching

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	"github.com/kopf-go/kopf/runtime/body"
)

// Type is the type of a watch event; Listed is Kopf's None: an object seen
// in a listing rather than in the watch stream.
type Type string

// The event types.
const (
	Listed   Type = ""
	Added    Type = "ADDED"
	Modified Type = "MODIFIED"
	Deleted  Type = "DELETED"
)

// Event is one raw event of one object.
type Event struct {
	Type Type
	// Key is "namespace/name" (or "name" for cluster-scoped objects).
	Key    string
	Object body.Body
	// Initial is set for the objects of the first listing after start.
	Initial bool
	// Wakeup marks an event that is not the API server's: the reactor
	// asks for its object to be processed again with the latest body it
	// has (e.g. when the object's daemons have exited, to release its
	// finalizer). It never replaces a pending event, and on.event handlers
	// never see it.
	Wakeup bool
}

// Callback receives the events. It must not block for long: it is called
// from the watch loop, and a slow callback delays every object's events.
type Callback func(Event)

// Watcher watches one resource in one namespace ("" for all namespaces or
// for cluster-scoped resources).
//
// It lists and watches either through REST at Path, decoding the responses
// itself, or, when REST is nil, through Client in Namespace. Either way the
// objects are the same *unstructured.Unstructured trees.
type Watcher struct {
	// REST, if set, sends the LIST and WATCH requests to Path, the resource's
	// collection path in the namespace (e.g. /apis/g/v/namespaces/ns/plural),
	// and the responses are decoded by this package in one pass per object.
	REST rest.Interface
	Path string
	// Client and Namespace are used when REST is nil: client-go's dynamic
	// client lists, watches and decodes.
	Client    dynamic.NamespaceableResourceInterface
	Namespace string
	// LabelSelector and FieldSelector, if set, are sent with every listing
	// and watch request (metav1.ListOptions' syntax): the API server sends
	// only the objects they select. An object that stops being selected
	// comes as a Deleted event although it still exists; telling the two
	// apart is the caller's (see reactor.Reactor.Selects).
	LabelSelector string
	FieldSelector string
	// ShardSelector, if set, is sent as the shardSelector parameter of
	// every listing and watch request over REST (KEP-5866's syntax, as
	// sharding.ShardSelector writes it): an API server with sharded list
	// and watch (Kubernetes 1.36+, the ShardedListAndWatch feature gate)
	// then sends only the objects whose uid hashes into its ranges, and
	// says so in each list's metadata.shardInfo (Status.Sharded). Other API
	// servers ignore it and send every object, so the caller filters the
	// objects itself either way (the watcher logs once which it is). Its
	// listings are then LISTs, not client-go's streamed watch-lists, whose
	// initial events carry no list metadata to tell. Not sent through
	// Client (the dynamic client's ListOptions of this client-go have no
	// such field).
	ShardSelector string
	// Lists, if set, makes the listings LISTs (paged), never client-go's
	// streamed watch-lists. A watch-list is a watch that the API server's
	// watch cache closes if the resource's new events, buffered for it
	// (10 to 100), fill up while it is still sending its initial objects:
	// under a flow of writes, a selective watch-list, which passes over
	// every object of the resource to send its few, can be closed and
	// started again and again. A LIST has no such buffer, and the watch
	// that follows it starts from its resourceVersion, with only the
	// events since then to send first.
	Lists    bool
	Callback Callback
	// Name identifies the watcher in client-go's own logs.
	Name string
	// InactivityTimeout re-establishes a watch that has sent nothing, not
	// even a bookmark, for this long, and abandons a watch request left
	// unanswered for this long (ErrNoResponse) (0: never).
	InactivityTimeout time.Duration
	// OnStall is called when a silent watch is being re-established.
	OnStall func()
	// OnError, if set, is told of every failed listing or watch request
	// (not of those cut short by ctx), which the reflector then retries
	// with backoff. It must return quickly. The reflector's own report of
	// the failure ("Failed to watch", at ERROR through klog) is then
	// lowered to DEBUG in Logger, as the caller reports it.
	OnError func(error)
	// AwaitServer, if set, is called when a listing or a watch request
	// fails with a network error (no response from the API server). It
	// waits while the server is known to be unreachable and says whether
	// it is reachable again: then the request is sent again at once;
	// otherwise the error goes to the reflector, which retries it with its
	// backoff (growing to a minute in a long outage).
	AwaitServer func(ctx context.Context) bool
	// OnWatching, if set, is called each time a watch request succeeds:
	// the resource is being watched (again).
	OnWatching func()
	// OnListed, if set, is called once, after the objects of the first
	// listing have all been delivered to Callback (also when there are
	// none). It must return quickly.
	OnListed func()
	// Logger, if set, receives client-go's own log lines about this watch
	// (the reflector's contextual logger); else they go to klog's global
	// logger.
	Logger *slog.Logger

	status tracker
}

// Status tells what the watcher has seen of its requests so far (see
// Status). It is safe to call at any time, also concurrently with Run; it
// returns the zero Status before Run.
func (w *Watcher) Status() Status { return w.status.get() }

// Run watches until ctx is done. It returns only then (client-go's
// reflector retries every failure with backoff).
func (w *Watcher) Run(ctx context.Context) {
	var lw cache.ListerWatcher = &cache.ListWatch{ListWithContextFunc: w.list, WatchFuncWithContext: w.watch}
	if w.Lists || w.ShardSelector != "" && w.REST != nil {
		lw = listsOnly{lw.(*cache.ListWatch)}
	}
	w.status.run()
	store := &keyStore{callback: w.Callback, onListed: w.OnListed, onReplace: w.status.listed, versions: map[string]string{}}
	r := cache.NewReflectorWithOptions(lw, &unstructured.Unstructured{}, store, cache.ReflectorOptions{Name: w.Name})
	if w.Logger != nil {
		h := &reflectorLog{Handler: w.Logger.Handler(), reported: w.OnError != nil, name: w.Name}
		ctx = klog.NewContext(ctx, logr.FromSlogHandler(h))
	}
	r.RunWithContext(ctx)
}

func (w *Watcher) list(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	w.selecting(&opts)
	for {
		var list runtime.Object
		var err error
		if w.REST != nil {
			list, err = listREST(ctx, w.REST, w.Path, opts, w.ShardSelector)
		} else {
			list, err = w.resourceClient().List(ctx, opts)
		}
		if err == nil {
			w.shardedListing(list)
			return list, nil
		}
		if !w.failed(ctx, err) {
			return list, err
		}
	}
}

func (w *Watcher) watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	var wi watch.Interface
	var err error
	var stream uint64
	var rd *responseDeadline // the request's wait for its response (see ErrNoResponse)
	w.selecting(&opts)
	// Over REST, the stream watcher's own goroutine tells of the events
	// and of the stream's end (see trackDecoder); over the dynamic client,
	// a goroutine in between does (see tracked).
	track := func(d watch.Decoder) watch.Decoder {
		stream = w.status.opened()
		s, release := stream, rd.release
		return trackDecoder(d, w.InactivityTimeout, w.OnStall, w.status.event, func() { w.status.closed(s); release() })
	}
	for {
		rd = awaitResponse(ctx, w.InactivityTimeout)
		if w.REST != nil {
			wi, err = watchREST(rd.ctx, w.REST, w.Path, opts, w.ShardSelector, track)
		} else {
			wi, err = w.resourceClient().Watch(rd.ctx, opts)
		}
		if err = rd.answered(err); err == nil {
			break
		}
		rd.release()
		if !w.failed(ctx, err) {
			return nil, err
		}
	}
	if w.OnWatching != nil {
		defer w.OnWatching()
	}
	if w.REST != nil {
		if stream == 0 { // an empty watch: the connection was lost before the response
			stream = w.status.opened()
			w.status.closed(stream)
			rd.release()
		}
		return wi, nil
	}
	stream = w.status.opened()
	release := rd.release
	return tracked(wi, w.InactivityTimeout, w.OnStall, w.status.event, func() { w.status.closed(stream); release() }), nil
}

// selecting puts the watcher's selectors into a request's options.
func (w *Watcher) selecting(opts *metav1.ListOptions) {
	opts.LabelSelector = w.LabelSelector
	opts.FieldSelector = w.FieldSelector
}

// failed reports a failed request and says whether to send it again now.
func (w *Watcher) failed(ctx context.Context, err error) bool {
	if ctx.Err() != nil {
		return false
	}
	w.status.failed(err)
	if w.OnError != nil {
		w.OnError(err)
	}
	var status apierrors.APIStatus
	return w.AwaitServer != nil && !errors.As(err, &status) && w.AwaitServer(ctx)
}

func (w *Watcher) resourceClient() dynamic.ResourceInterface {
	if w.Namespace != "" {
		return w.Client.Namespace(w.Namespace)
	}
	return w.Client
}

// keyStore is a cache.ReflectorStore that remembers only keys and
// resourceVersions, and forwards every change to the callback.
type keyStore struct {
	callback  Callback
	onListed  func() // called after the first listing's events; may be nil
	onReplace func() // called after every listing's events; may be nil
	mu        sync.Mutex
	versions  map[string]string
	listed    bool // the first listing has been delivered
}

func (s *keyStore) Add(obj any) error    { return s.event(Added, obj) }
func (s *keyStore) Update(obj any) error { return s.event(Modified, obj) }
func (s *keyStore) Delete(obj any) error { return s.event(Deleted, obj) }
func (s *keyStore) Resync() error        { return nil }

// Transformer makes the reflector strip managedFields from the objects it
// keeps while streaming the initial list (client-go's watch-list mode). The
// decoders of the REST path never build them; the dynamic client's do.
func (s *keyStore) Transformer() cache.TransformFunc { return stripManagedFields }

// stripManagedFields drops metadata.managedFields: server-side apply
// bookkeeping that handlers do not need, often the largest part of a small
// object, and pure cost in memory, in decoding and in debug logs.
func stripManagedFields(obj any) (any, error) {
	if u, ok := obj.(*unstructured.Unstructured); ok {
		if meta, ok := u.Object["metadata"].(map[string]any); ok {
			delete(meta, "managedFields")
		}
	}
	return obj, nil
}

func (s *keyStore) event(t Type, obj any) error {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return fmt.Errorf("unexpected object of type %T", obj)
	}
	_, _ = stripManagedFields(u)
	key := keyOf(u)
	s.mu.Lock()
	if t == Deleted {
		delete(s.versions, key)
	} else {
		s.versions[key] = u.GetResourceVersion()
	}
	s.mu.Unlock()
	s.callback(Event{Type: t, Key: key, Object: body.Body(u.Object)})
	return nil
}

// Replace is called with a full listing: at start, and after a watch could
// not be resumed. Objects that are new or changed since the last known
// version are delivered as Listed; those that vanished as Deleted.
func (s *keyStore) Replace(list []any, _ string) error {
	s.mu.Lock()
	initial := !s.listed
	s.listed = true
	seen := make(map[string]bool, len(list))
	var events []Event
	for _, obj := range list {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			continue
		}
		_, _ = stripManagedFields(u)
		key := keyOf(u)
		seen[key] = true
		rv := u.GetResourceVersion()
		if old, ok := s.versions[key]; ok && old == rv && !initial {
			continue
		}
		s.versions[key] = rv
		events = append(events, Event{Type: Listed, Key: key, Object: body.Body(u.Object), Initial: initial})
	}
	for key := range s.versions {
		if !seen[key] {
			delete(s.versions, key)
			events = append(events, Event{Type: Deleted, Key: key, Object: stub(key)})
		}
	}
	s.mu.Unlock()
	for _, ev := range events {
		s.callback(ev)
	}
	if s.onReplace != nil {
		s.onReplace()
	}
	if initial && s.onListed != nil {
		s.onListed()
	}
	return nil
}

func keyOf(u *unstructured.Unstructured) string {
	if ns := u.GetNamespace(); ns != "" {
		return ns + "/" + u.GetName()
	}
	return u.GetName()
}

// stub is the body of an object known only by its key.
func stub(key string) body.Body {
	meta := map[string]any{}
	ns, name, _ := cache.SplitMetaNamespaceKey(key)
	meta["name"] = name
	if ns != "" {
		meta["namespace"] = ns
	}
	return body.Body{"metadata": meta}
}

// reflectorLog is the slog handler behind the reflector's contextual
// logger. client-go logs a failed listing or watch as "Failed to watch" at
// ERROR; when the watcher's owner reports the failures itself (OnError),
// that line is lowered to DEBUG. "Warning: watch ended with error", which
// client-go logs at INFO, is raised to WARNING. "Watch closed" with an
// expired resourceVersion (410 Gone: etcd compacted, or the watch cache's
// window moved past it; a listing follows) is said in Kopf's words, at
// DEBUG as Kopf does: "Restarting the watch-stream for <name>: its
// resource version has expired (410 Gone): <error>."
type reflectorLog struct {
	slog.Handler
	reported bool
	name     string // the watcher's Name
}

// expired rewrites client-go's "Watch closed" record of an expired
// resourceVersion, if r is one.
func (h *reflectorLog) expired(r slog.Record) (slog.Record, bool) {
	if r.Message != "Watch closed" {
		return r, false
	}
	var err error
	r.Attrs(func(a slog.Attr) bool {
		if e, ok := a.Value.Any().(error); ok && a.Key == "err" {
			err = e
		}
		return err == nil
	})
	if err == nil || !(apierrors.IsResourceExpired(err) || apierrors.IsGone(err)) {
		return r, false
	}
	msg := fmt.Sprintf("Restarting the watch-stream for %s: its resource version has expired (410 Gone): %v", h.name, err)
	return slog.NewRecord(r.Time, slog.LevelDebug, msg, r.PC), true
}

func (h *reflectorLog) level(r slog.Record) slog.Level {
	switch {
	case r.Message == "Failed to watch" && h.reported:
		return slog.LevelDebug
	case r.Message == "Warning: watch ended with error":
		return slog.LevelWarn
	}
	return r.Level
}

func (h *reflectorLog) Enabled(ctx context.Context, l slog.Level) bool {
	// The level of a record is known only in Handle: let ERROR and INFO
	// records through, to be re-levelled there.
	return h.Handler.Enabled(ctx, l) || l >= slog.LevelInfo
}

func (h *reflectorLog) Handle(ctx context.Context, r slog.Record) error {
	if rec, ok := h.expired(r); ok {
		r = rec
	}
	r.Level = h.level(r)
	if !h.Handler.Enabled(ctx, r.Level) {
		return nil
	}
	return h.Handler.Handle(ctx, r)
}

func (h *reflectorLog) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &reflectorLog{Handler: h.Handler.WithAttrs(attrs), reported: h.reported, name: h.name}
}

func (h *reflectorLog) WithGroup(name string) slog.Handler {
	return &reflectorLog{Handler: h.Handler.WithGroup(name), reported: h.reported, name: h.name}
}
