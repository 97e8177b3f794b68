package reactor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/kopf-go/kopf/runtime/body"
	"github.com/kopf-go/kopf/runtime/daemons"
	"github.com/kopf-go/kopf/runtime/kwargs"
	"github.com/kopf-go/kopf/runtime/logging"
	"github.com/kopf-go/kopf/runtime/patches"
	"github.com/kopf-go/kopf/runtime/posting"
	"github.com/kopf-go/kopf/runtime/queueing"
	"github.com/kopf-go/kopf/runtime/registry"
	"github.com/kopf-go/kopf/runtime/resources"
	"github.com/kopf-go/kopf/runtime/settings"
	"github.com/kopf-go/kopf/runtime/watching"
)

// Reactor handles the objects of one resolved resource.
type Reactor struct {
	Resource resources.Resource
	// Cluster is the name of the resource's cluster in a fleet operator,
	// which the handlers' kwargs carry (kwargs.Base.Cluster); "" in a
	// single-cluster operator.
	Cluster string
	Client  dynamic.NamespaceableResourceInterface
	// REST, if set, sends the patches instead of Client: their responses
	// are read for the resourceVersion only, not decoded whole.
	REST rest.Interface
	// Patcher, if set, sends the patches instead (see Patcher): a
	// wrapper of ClientPatcher that adds a precondition, as sharding's
	// fence does. Nil: ClientPatcher over Client and REST.
	Patcher  Patcher
	Registry *registry.Registry
	Settings *settings.Settings
	Logger   *slog.Logger
	// Observe, if set, is told how every attempt of a handler ended (see
	// Observation): for a changing handler, once the cycle's patch that
	// stores the outcome is sent (or has failed), so that the object read
	// afterwards shows it; for an on.event handler, at once. It is called
	// from the workers, concurrently for different objects: it must be
	// quick and safe for concurrent use.
	Observe func(Observation)
	// ObserveProcessed, if set, is told how the processing of every event
	// ended (see Processed), after Process is done with it; from the
	// workers, as Observe is.
	ObserveProcessed func(Processed)
	// Daemons runs the daemons and timers of the resource's objects (one
	// engine per operator); nil: none are run.
	Daemons *daemons.Engine
	// Requeue, if set, hands an event back to the object's worker: the
	// reactor wakes an object with it when its daemons are done (see
	// watching.Event.Wakeup).
	Requeue func(watching.Event)
	// Selects, if set, says whether the watch's label and field selectors
	// select an object: the watch reports an object that stops being
	// selected as Deleted although it exists, so the reactor reads such an
	// object again, and one that exists but is not selected has left them:
	// it is released (its daemons stopped, its finalizer removed) without
	// any handler (see selecting.go). Nil: the watch selects everything.
	Selects func(body.Body) bool
	// Memo is the operator's memo: each object's memo starts as a shallow
	// copy of it (Kopf's copy.copy of the operator's memo), made when the
	// object is first seen, so that what its handlers store is the
	// object's own while the values set at start are shared. Nil: each
	// object's memo starts empty.
	Memo kwargs.Memo

	hostOnce sync.Once
	host     *daemons.Host // the daemons' view of the reactor (spawningHost)

	mu       sync.Mutex
	memories map[string]*memory
	// filterReports: the filters that failed and are reported, by object
	// (see filterFailed).
	filterReports filterReports
}

// memory is what the reactor remembers of one object between cycles.
type memory struct {
	uid  string
	memo kwargs.Memo
	// noticedByListing: the object was first seen in the initial listing,
	// so resume handlers apply to it; resumed: they are done.
	noticedByListing bool
	resumed          bool
	// released: our finalizer is removed from the deleting object;
	// deletionHandled: its delete handlers are done, and the finalizer
	// waits only for its daemons and timers to exit (their wake-up's
	// cycle must not run the handlers again from an older body).
	released        bool
	deletionHandled bool
	// rejected is the essence (encoded) whose handling the API server
	// refused to store (an invalid patch): it is not handled again until
	// the essence changes, whatever else (e.g. status) changes meanwhile.
	rejected string
	// daemons are the object's daemons and timers (nil if none ever ran);
	// essence is a hash of its last essence seen (essenceSum), whose
	// changes restart the timers' idle time, followed only when a timer
	// has an idle time; spawnMatched: a daemon or timer matches, so the
	// finalizer is needed; spawnDone: none is running.
	daemons      *daemons.Object
	essence      uint64
	spawnMatched bool
	spawnDone    bool
	// wait is what the object's requeue waits for (waitNone, waitDelayed,
	// waitThrottle), delay for how long; attempt is the failed cycle's try
	// (0: the first) for waitThrottle.
	wait    int
	delay   time.Duration
	attempt int
	// tally is what the processing of the current event has seen (see
	// Processed); inProgress: the object's handlers are unfinished for
	// its cause (read by InProgress, from other goroutines).
	tally      tally
	inProgress atomic.Bool
	// observed is the buffer of the attempts of a cycle, reused by the
	// next (for Reactor.Observe, which gets copies).
	observed []Observation
	// waitDue is when the reactor's own wait (wait, delay) is over: a
	// reconcile handler's earlier requeue does not end it (reconcileWake).
	waitDue time.Time
	// rec is the state of the reconcile handlers (reconcile.go); nil if
	// the resource has none.
	rec *reconcileMemory
}

// InProgress counts the objects whose changing handlers are unfinished:
// delayed or due, as their last cycle left them. It takes the reactor's
// lock for a pass over its objects: for a metrics scrape, not for every
// event.
func (r *Reactor) InProgress() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, m := range r.memories {
		if m.inProgress.Load() {
			n++
		}
	}
	return n
}

func (r *Reactor) memory(key, uid string) *memory {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.memories == nil {
		r.memories = map[string]*memory{}
	}
	m, ok := r.memories[key]
	if !ok || m.uid != uid {
		if ok {
			r.filterReports.forget(m.uid)
			if m.daemons != nil {
				m.daemons.Forget()
			}
		}
		m = &memory{uid: uid, memo: newMemo(r.Memo), rec: r.newReconcileMemory()}
		r.memories[key] = m
	}
	return m
}

// newMemo returns an object's memo: a shallow copy of the operator's.
func newMemo(base kwargs.Memo) kwargs.Memo {
	memo := make(kwargs.Memo, len(base))
	maps.Copy(memo, base)
	return memo
}

func (r *Reactor) forget(key string) {
	r.mu.Lock()
	m, ok := r.memories[key]
	if ok {
		r.filterReports.forget(m.uid)
	}
	delete(r.memories, key)
	r.mu.Unlock()
	if ok && m.daemons != nil {
		m.daemons.Forget()
	}
}

// Process handles one event of one object; see the package doc. It never
// returns an error: failures are logged and retried after
// settings.Queueing.ErrorDelays, jittered and stretched to the API
// server's Retry-After (see retryDelay), or left to the next event. A
// retry, as the wait for a delayed handler, ends the cycle with a requeue
// (queueing.Stream.Requeue): the object's next cycle resumes it, unless a
// newer event comes first. When the operator exits (the stream is
// stopping), it returns as soon as the cycle in progress is finished; once
// ctx is cancelled (the exit timeout is over), nothing more is sent to the
// API server.
func (r *Reactor) Process(ctx context.Context, ev watching.Event, s *queueing.Stream) {
	if r.ObserveProcessed == nil {
		r.process(ctx, ev, s)
		return
	}
	started := time.Now()
	mem := r.process(ctx, ev, s)
	r.ObserveProcessed(Processed{
		Arrived:  s.Arrived(),
		Started:  started,
		Elapsed:  time.Since(started),
		Result:   mem.tally.result(),
		Terminal: mem.tally.terminal,
		Retries:  mem.tally.retries,
	})
}

// process is Process; it returns the object's memory, whose tally sums up
// the processing.
func (r *Reactor) process(ctx context.Context, ev watching.Event, s *queueing.Stream) *memory {
	ctx, ev, logger, ok := r.begin(ctx, ev, s)
	if !ok {
		return &memory{} // nothing is known of the object yet
	}
	mem := r.memory(ev.Key, body.Body(ev.Object).Meta().UID())
	mem.tally = tally{}
	if ev.Initial {
		mem.noticedByListing = true
	}
	if r.reconcileWake(ctx, ev, s, mem, logger) || r.resume(ctx, ev, s, mem, logger) {
		return mem
	}
	if r.left(ev) {
		r.leave(ctx, ev, s, mem, logger) // not a deletion: no handler runs
		return mem
	}
	if !ev.Wakeup {
		r.runEventHandlers(ctx, ev, s, mem, logger)
	}
	if ev.Type == watching.Deleted {
		if r.Registry.HasChanging(r.Resource) { // as Kopf: a GONE cause only with changing handlers
			logger.Debug("Deleted, really deleted, and we are notified.")
		}
		r.forget(ev.Key)
		return mem
	}
	spawning, kopfs := r.hasSpawning(), r.Registry.HasChanging(r.Resource)
	if !kopfs && !spawning && mem.rec == nil {
		return mem
	}
	if ev, ok = r.consistent(ctx, ev, s, logger); !ok {
		return mem
	}
	if s.Pending() {
		return mem // a newer version is waiting: it supersedes this one
	}
	if spawning {
		r.spawning(ev.Key, ev.Object, mem)
	}
	var err error
	if kopfs || spawning {
		err = r.cycle(ctx, ev.Object, mem, s, logger)
	}
	r.reconcile(ctx, ev, s, mem, logger) // the last step: after Kopf's handlers
	r.settle(ctx, ev, s, mem, logger, 0, err)
	return mem
}

// consistent waits until the object's own latest patch has come back
// through the watch, so that the object is not judged by an older version
// of it (which would, e.g., still lack the diff-base or a handler's
// progress). Past settings.Persistence.ConsistencyTimeout, Kopf processes
// the latest version it knows ("fakes the consistency"), and may run a
// handler that has succeeded again; the reactor reads the object instead,
// processes that version and expects it from the watch. False: nothing to
// process now (the operator is exiting; the object could not be read, and
// the event is requeued; or it is gone, and its deletion comes through the
// watch).
func (r *Reactor) consistent(ctx context.Context, ev watching.Event, s *queueing.Stream, logger *slog.Logger) (watching.Event, bool) {
	if s.WaitExpected(ctx, r.Settings.Persistence.ConsistencyTimeout) {
		return ev, true
	}
	if ctx.Err() != nil || s.Stopping() {
		return ev, false // the operator is exiting: the version will never come
	}
	fresh, found, err := r.readNow(ctx, ev.Object.Meta())
	switch {
	case err != nil:
		logger.Error(fmt.Sprintf("The patched resource version is not seen in time, and reading the object has failed: %v; trying again.", err))
		s.Requeue(ev, r.rereadDelay())
		return ev, false
	case !found:
		logger.Debug("The patched resource version is not seen in time, and the object is gone: its deletion comes through the watch.")
		return ev, false
	}
	logger.Debug("The patched resource version is not seen in time; processing the object as it is read now.")
	s.Expect(fresh.Meta().ResourceVersion())
	ev.Object = fresh
	return ev, true
}

// begin prepares an event's processing: a selecting watch's Deleted is
// read again (gone, or left the selectors?), and the object gets its
// logger, which the context carries too (the requests' retries are logged
// about the object). False if the object could not be read: the event is
// requeued.
func (r *Reactor) begin(ctx context.Context, ev watching.Event, s *queueing.Stream) (context.Context, watching.Event, *slog.Logger, bool) {
	ev, err := r.reread(ctx, ev)
	var logger *slog.Logger
	if b := body.Body(ev.Object); b.Kind() != "" { // not a stub of a vanished object
		logger = posting.ForObject(r.Logger, b) // posted with settings.Posting.Loggers
	} else {
		logger = logging.ForObject(r.Logger, ev.Key) // prints the same; never posted
	}
	ctx = withLogger(ctx, logger)
	if err != nil {
		logger.Error(fmt.Sprintf("%v; trying again.", err))
		s.Requeue(ev, r.rereadDelay())
		return ctx, ev, logger, false
	}
	return ctx, ev, logger, true
}

// What the reactor's own requeue of an object waits for (memory.wait).
const (
	waitNone     = iota
	waitDelayed  // the earliest delayed handler: the object is touched then
	waitThrottle // the retry of a failed cycle
)

// resume ends the wait of the object's requeue, if the previous cycle
// asked for one (memory.wait), as Kopf's sleep ends: interrupted by a
// newer event, which is processed as usual (false), or elapsed: the
// delayed handlers' object is touched, the failed cycle is repeated, and
// that is this event's processing (true).
func (r *Reactor) resume(ctx context.Context, ev watching.Event, s *queueing.Stream, mem *memory, logger *slog.Logger) bool {
	wait := mem.wait
	mem.wait = waitNone
	woke, left := s.Woke()
	switch {
	case wait == waitNone || woke == queueing.NotRequeued:
		return false
	case woke == queueing.Elapsed && !ev.Wakeup:
		return false // another stage's requeue (sharding's stamp), not the reactor's
	case woke == queueing.Interrupted:
		if wait == waitDelayed {
			logger.Debug(fmt.Sprintf("Sleeping was interrupted by new changes, %s seconds left.", seconds(left)))
		}
		return false
	case wait == waitThrottle:
		logger.Info("Throttling is over. Switching back to normal operations.")
		r.settle(ctx, ev, s, mem, logger, mem.attempt+1, r.cycle(ctx, ev.Object, mem, s, logger))
	default: // waitDelayed
		mem.tally.requeue = ResultRequeue // the touch's event runs the handlers
		r.settle(ctx, ev, s, mem, logger, 0, r.touch(ctx, ev.Object, s))
	}
	return true
}

// settle ends a cycle of the attempt-th try: a failed one (err) is
// throttled, and the object is requeued if the cycle or the throttling
// asked for it (memory.wait), or a reconcile handler's timed run is due
// (the earlier of the two; see reconcileWake).
func (r *Reactor) settle(ctx context.Context, ev watching.Event, s *queueing.Stream, mem *memory, logger *slog.Logger, attempt int, err error) {
	if err != nil {
		r.throttle(ctx, mem, logger, attempt, err)
	}
	d, ok := mem.delay, mem.wait != waitNone
	if ok {
		mem.waitDue = time.Now().Add(d)
	}
	if rd, due := mem.reconcileDelay(); due && (!ok || rd < d) {
		d, ok = rd, true
	}
	if ok {
		ev.Wakeup = true // the reactor's own: no on.event handler sees it
		s.Requeue(ev, d)
	}
}

// throttle decides the retry of a failed cycle: after a delay (memory.wait
// and delay), or at the object's next change.
func (r *Reactor) throttle(ctx context.Context, mem *memory, logger *slog.Logger, attempt int, err error) {
	if ctx.Err() != nil {
		logger.Debug(fmt.Sprintf("The operator is exiting; the outcome of this cycle is not stored: %v", err))
		return
	}
	mem.tally.failed = true
	var invalid *invalidPatchError
	if errors.As(err, &invalid) {
		// Retrying cannot help: the same patch would be rejected again.
		logger.Error(fmt.Sprintf("The object cannot be patched; it will be processed again when it changes: %v", err))
		return
	}
	delay, backoff, ok := retryDelay(r.Settings.Queueing, attempt, err)
	if !ok {
		logger.Error(fmt.Sprintf("Processing failed and will be retried when the object changes (settings.Queueing.ErrorDelays is empty): %v", err))
		return
	}
	mem.tally.retries++
	if delay > backoff {
		logger.Debug(fmt.Sprintf("Overriding the backoff %ss with the retry-after %ss from the server.", seconds(backoff), seconds(delay)))
	}
	logger.Error(fmt.Sprintf("Throttling for %s seconds due to an unexpected error: %v", seconds(delay), err))
	mem.wait, mem.attempt, mem.delay = waitThrottle, attempt, delay
}

// apply sends the merge patch (split for the status subresource) and
// returns the resulting resourceVersion ("" if nothing was sent). A patch
// of an object that is gone is not an error.
func (r *Reactor) apply(ctx context.Context, b body.Body, p patches.Patch) (string, error) {
	if p.IsEmpty() {
		return "", nil
	}
	meta := b.Meta()
	main, status := patches.Patch(p), patches.Patch(nil)
	if r.Resource.HasStatusSubresource() {
		main, status = p.Split()
	}
	rv := ""
	for _, part := range []struct {
		patch patches.Patch
		sub   []string
	}{{status, []string{"status"}}, {main, nil}} {
		if part.patch == nil || part.patch.IsEmpty() {
			continue
		}
		data, err := json.Marshal(part.patch)
		if err != nil {
			return "", fmt.Errorf("encoding the patch: %w", err)
		}
		prv, err := r.patch(ctx, meta.Namespace(), meta.Name(), types.MergePatchType, data, part.sub...)
		if err == nil {
			rv = prv
			continue
		}
		if apierrors.IsNotFound(err) {
			r.objectLogger(b).Debug("Patching was skipped: the object does not exist anymore.")
			return "", nil
		}
		if apierrors.IsInvalid(err) || apierrors.IsRequestEntityTooLargeError(err) {
			return "", &invalidPatchError{ref: b.Ref(), err: err}
		}
		return "", fmt.Errorf("patching %s: %w", b.Ref(), err)
	}
	return rv, nil
}

// jsonPatch sends a JSON patch (the finalizer's) guarded by the object's
// resourceVersion. A conflict (the object changed meanwhile: a 409, or
// the 422 of a failed "test" operation) is not an error, logged at debug
// level: the newer version is on its way and the next cycle will try
// again. Neither is a vanished object. Any other rejection as invalid
// (422) is an invalidPatchError, which Process logs.
func (r *Reactor) jsonPatch(ctx context.Context, b body.Body, ops []map[string]any) (string, error) {
	meta := b.Meta()
	guarded := append([]map[string]any{{"op": "test", "path": "/metadata/resourceVersion", "value": meta.ResourceVersion()}}, ops...)
	data, err := json.Marshal(guarded)
	if err != nil {
		return "", fmt.Errorf("encoding the patch: %w", err)
	}
	rv, err := r.patch(ctx, meta.Namespace(), meta.Name(), types.JSONPatchType, data)
	switch {
	case err == nil:
		return rv, nil
	case apierrors.IsNotFound(err):
		r.objectLogger(b).Debug("Patching was skipped: the object does not exist anymore.")
		return "", nil
	case apierrors.IsConflict(err), isInapplicable(err):
		r.objectLogger(b).Debug(fmt.Sprintf("Could not apply the patch in full due to conflicts with newer changes. Will try on the next cycle soon. (%v)", err))
		return "", nil
	case apierrors.IsInvalid(err):
		return "", &invalidPatchError{ref: b.Ref(), err: err}
	}
	return "", fmt.Errorf("patching %s: %w", b.Ref(), err)
}

// objectLogger is the logger of the object's messages.
func (r *Reactor) objectLogger(b body.Body) *slog.Logger {
	return posting.ForObject(r.Logger, b)
}

// patch sends one patch and returns the patched object's resourceVersion.
// A failure worth retrying as it is (see retryRequest) is retried with
// settings.Networking.ErrorBackoffs, as Kopf retries every request, so that
// a handler whose outcome could not be written is not run again: the same
// patch is. Nothing is sent once ctx is done: the operator is exiting and the workers' time is up
// (settings.Queueing.ExitTimeout), so what a handler returns after that is
// not stored, whether a success or a failure.
func (r *Reactor) patch(ctx context.Context, namespace, name string, pt types.PatchType, data []byte, sub ...string) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("not sent, the operator is exiting: %w", err)
	}
	what := func() string { // for the log only: not made unless logged
		return "PATCH " + strings.Join(append([]string{r.Resource.Path(namespace), name}, sub...), "/")
	}
	return retryRequest(ctx, r.Settings, loggerFrom(ctx, r.Logger), what, func(ctx context.Context) (string, error) {
		return r.patchOnce(ctx, namespace, name, pt, data, sub...)
	})
}

// patchOnce sends one patch by the Patcher, bounded by
// settings.Networking.RequestTimeout, and returns the patched object's
// resourceVersion.
func (r *Reactor) patchOnce(ctx context.Context, namespace, name string, pt types.PatchType, data []byte, sub ...string) (string, error) {
	if t := r.Settings.Networking.RequestTimeout; t > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, t)
		defer cancel()
	}
	return r.patcher().Patch(ctx, namespace, name, pt, data, sub...)
}

// invalidPatchError is a patch that the API server rejects as invalid (for
// example, annotations over the 256 KiB limit): retrying it is pointless.
type invalidPatchError struct {
	ref string
	err error
}

func (e *invalidPatchError) Error() string {
	msg := fmt.Sprintf("patching %s: %v", e.ref, e.err)
	if strings.Contains(e.err.Error(), "annotations: Too long") {
		msg += " (the object's essence or the handlers' progress does not fit into annotations," +
			" whose total size is limited to 256 KiB; keep the diff-base in the status instead:" +
			" kopf.WithSettings(func(s *kopf.Settings) { s.Persistence.DiffBaseStorage = &kopf.StatusDiffBaseStorage{} }))"
	}
	return msg
}

func (e *invalidPatchError) Unwrap() error { return e.err }

func seconds(d time.Duration) string {
	return fmt.Sprintf("%g", d.Seconds())
}
