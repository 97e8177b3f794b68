// Package queueing runs the processing of the events of objects, as Kopf
// does: events of one object are processed strictly in order, one at a
// time; different objects are processed in parallel.
//
// The queue is client-go's delaying workqueue
// (workqueue.TypedDelayingInterface of the objects' keys), which already
// guarantees what Kopf's per-object workers do: a key is handed to one
// worker at a time, a key added while it is processed is handed out again
// once its processing is done, and a key added twice before it is taken is
// taken once. Beside it, each object has a Stream that holds its events.
//
// Batching: events that arrive while an object is being processed, or
// while it waits for a worker, are batched: only the latest one is
// processed next (older versions of an object are obsolete once a newer one
// is known), keeping the Initial mark of a first-listing event it replaced.
// A Wakeup event never replaces a pending one, nor does an event whose
// resourceVersion is lower than the pending one's (an older version that
// arrives late from another source than the watch, such as sharding's
// listing of the buckets gained; see Stream.put).
//
// Workers: with a worker limit L > 0 (Kopf's batching.worker_limit), a
// fixed pool of L goroutines takes keys from the workqueue, so at most L
// objects are processed at once and the others wait in the workqueue, first
// come first served. With no limit (WorkerLimit 0, Kopf's default), every
// key taken is processed on a goroutine of its own, which ends with the
// processing. No goroutine waits for an object's next event or sleeps for
// a retry.
//
// Retries and delays: a processor never sleeps inside its cycle. It ends
// the cycle with Stream.Requeue (an event to process again after a delay);
// the queue adds the key to the workqueue after the delay (AddAfter),
// holding no worker meanwhile. A newer event of the object that arrives
// before the delay is over is processed at once instead, and the requeued
// event is dropped: the object's next cycle learns from Stream.Woke
// whether its delay elapsed or was interrupted, and how much was left.
//
// Streams: an object's Stream, with the expectation set by Stream.Expect in
// one cycle for Stream.WaitExpected in the next, lives while the object
// has a pending event, a requeue waiting for its delay, or an outstanding
// expectation; the expectation is dropped when the last event processed
// was a deletion (the object is gone), and, at the object's next cycle,
// when more than the idle timeout has passed since its previous cycle (its
// own patch has had that long to come back).
//
// Close and the context: at Close, or when the queue's context is done, no
// event is taken any more: pending events and requeues are dropped (the
// next operator run sees the objects in its listing); the processors
// running finish their cycle (see Drain).
//
// Why client-go's workqueue (issue 23): it replaced a hand-written
// multiplexer (about 780 lines: a goroutine per object with pending
// events and per sleeping retry, worker slots lent and reclaimed around
// the sleeps, an idle timeout per worker). Once the three processors that
// slept inside their cycle (the reactor's wait for a delayed handler, its
// throttling after a failed cycle, sharding's stamp retry) end it with a
// Requeue instead, what the multiplexer added on top of a workqueue is the
// Stream beside it (the latest event with its Initial mark, the
// expectation, the requeue), which this package keeps. The condition was
// that the queue's CPU per object, at catch-up and paced, be no more than
// 10 % worse; it is better. BenchmarkDispatch, the old and the new binary
// in turns in one run (-count 8, benchstat, new/old, on the project's
// loaded 2-core machine): CPU per object 0.58 at catch-up (3.2 against
// 5.6 µs) and 0.55 paced (3.6 against 6.6 µs); allocations per 1,000
// objects 1,012 against 4,394 at catch-up, 2,000 against 9,990 paced.
// Both are a few µs against the operator's 0.3-1 ms per object that make
// bench measures (bench/RESULTS.md).
package queueing

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"k8s.io/client-go/util/workqueue"

	"github.com/kopf-go/kopf/runtime/logging"
	"github.com/kopf-go/kopf/runtime/watching"
)

// Processor handles one event of one object. It may wait, through the
// stream, for the event of its own patch, and end its cycle with a requeue.
type Processor func(ctx context.Context, ev watching.Event, s *Stream)

// Options configure a Queue.
type Options struct {
	// IdleTimeout is how long after its cycle an object's expectation
	// (Stream.Expect) is waited for: a later cycle does not wait for it,
	// and Stream.WaitExpected reports it unmet at once.
	IdleTimeout time.Duration
	// WorkerLimit is the most objects processed at once (a pool of as many
	// workers); 0 or less: unbounded, a goroutine per object processed.
	WorkerLimit int
	// OnIdle, if set, is called when the last processing in progress ends
	// and none is left (a hint to check Active, not a guarantee). It is
	// called without locks held, from the worker.
	OnIdle func()
	// Logger receives the report of a processor's panic (see
	// processGuarded); nil: slog.Default().
	Logger *slog.Logger
}

// Queue dispatches the events of objects to their processing.
type Queue struct {
	process     Processor
	idleTimeout time.Duration
	limit       int
	onIdle      func()
	logger      *slog.Logger
	ctx         context.Context
	keys        workqueue.TypedDelayingInterface[string]
	wg          sync.WaitGroup // the workers (and, without a limit, each processing)

	mu      sync.Mutex
	streams map[string]*Stream
	// busy are the keys of the objects being processed now (the processor
	// called and not returned), for Busy, with when each processing began.
	busy map[string]time.Time
	// active counts the keys taken from the workqueue and not done yet.
	active int
	// added counts the events that found their object with nothing
	// pending (see Stats).
	added   uint64
	closing chan struct{}
	closed  bool
}

// New returns a queue whose workers run until ctx is done or Close.
func New(ctx context.Context, opts Options, process Processor) *Queue {
	q := &Queue{
		ctx: ctx, process: process, idleTimeout: opts.IdleTimeout, limit: max(opts.WorkerLimit, 0), onIdle: opts.OnIdle,
		logger: opts.Logger, keys: workqueue.NewTypedDelayingQueueWithConfig(workqueue.TypedDelayingQueueConfig[string]{}),
		streams: map[string]*Stream{}, busy: map[string]time.Time{}, closing: make(chan struct{}),
	}
	if q.logger == nil {
		q.logger = slog.Default()
	}
	if q.limit > 0 {
		for range q.limit {
			q.wg.Go(q.work)
		}
	} else {
		q.wg.Go(q.dispatch)
	}
	context.AfterFunc(ctx, q.Close)
	return q
}

// work is a worker of the pool (with a limit): it processes the keys it
// takes, one at a time.
func (q *Queue) work() {
	for {
		key, quit := q.keys.Get()
		if quit {
			return
		}
		q.handle(key)
	}
}

// dispatch (without a limit) processes each key it takes on a goroutine
// of its own.
func (q *Queue) dispatch() {
	for {
		key, quit := q.keys.Get()
		if quit {
			return
		}
		q.wg.Go(func() { q.handle(key) })
	}
}

// Close stops accepting events and lets every worker exit as soon as it has
// finished the event it is processing now; pending events and requeues
// are dropped (the next operator run will see the objects in its
// listing). Processors waiting in Stream.WaitExpected return at once
// (there is nothing to wait for when no event will come); those running,
// e.g. in a handler, keep their context until it is cancelled. Wait then
// waits for the workers; cancelling the queue's context makes them hurry;
// Busy names those still running.
func (q *Queue) Close() {
	q.mu.Lock()
	if !q.closed {
		q.closed = true
		close(q.closing)
		for key, s := range q.streams {
			s.drop()
			if _, busy := q.busy[key]; !busy {
				delete(q.streams, key)
			}
		}
	}
	q.mu.Unlock()
	q.keys.ShutDown()
}

// Put hands an event to its object's stream and the object to the
// workqueue. It never blocks on processing.
func (q *Queue) Put(ev watching.Event) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return
	}
	s, ok := q.streams[ev.Key]
	if !ok {
		s = newStream()
		s.key, s.q = ev.Key, q
		q.streams[ev.Key] = s
	}
	if s.put(ev) {
		q.added++
		q.keys.Add(ev.Key)
	}
}

// Active returns how many objects are in a worker's hands now: taken from
// the workqueue and not done (the processor running, or about to).
func (q *Queue) Active() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.active
}

// Queued returns how many objects wait for a worker in the workqueue (a
// requeue waiting for its delay is not counted).
func (q *Queue) Queued() int { return q.keys.Len() }

// Busy returns the keys of the objects being processed now, sorted: those
// whose processor has been called and has not returned yet. After Close
// and a cancelled context, these are the processors that ignore the
// cancellation, e.g. handlers stuck in a call that takes no context.
func (q *Queue) Busy() []string {
	q.mu.Lock()
	keys := make([]string, 0, len(q.busy))
	for key := range q.busy {
		keys = append(keys, key)
	}
	q.mu.Unlock()
	slices.Sort(keys)
	return keys
}

// Stats are a queue's figures at one moment, for metrics.
type Stats struct {
	// Limit is Options.WorkerLimit (0: none).
	Limit int
	// Workers are the worker goroutines alive: the pool's with a limit,
	// else those processing an object (see Active).
	Workers int
	// Busy counts the objects being processed now (see Busy); BusyFor is
	// the sum of how long each has been, Longest the longest of them.
	Busy    int
	BusyFor time.Duration
	Longest time.Duration
	// Pending counts the objects with an event waiting to be processed
	// (however many events were batched into it); Queued, the objects
	// waiting for a worker in the workqueue (see Queued).
	Pending int
	Queued  int
	// Added counts, since the start, the events that found their object
	// with nothing pending: those batched into a pending one are not
	// counted (as a workqueue counts the adds of an item not yet queued).
	Added uint64
}

// Stats returns the queue's figures now. It takes the queue's lock for a
// pass over its objects: cheap enough for a metrics scrape, not for every
// event.
func (q *Queue) Stats() Stats {
	now := time.Now()
	q.mu.Lock()
	defer q.mu.Unlock()
	st := Stats{Limit: q.limit, Workers: q.active, Busy: len(q.busy), Queued: q.keys.Len(), Added: q.added}
	if q.limit > 0 && !q.closed {
		st.Workers = q.limit
	}
	for _, since := range q.busy {
		d := now.Sub(since)
		st.BusyFor += d
		st.Longest = max(st.Longest, d)
	}
	for _, s := range q.streams {
		if s.pending() {
			st.Pending++
		}
	}
	return st
}

// Wait blocks until every worker has exited (after Close or ctx is done).
func (q *Queue) Wait() { q.wg.Wait() }

// handle processes what the object of key has to process now, if anything:
// its pending event, else its requeued event if its delay is over. An
// event that arrived during the cycle (often the cycle's own patch) is
// processed next by the same worker, before the key is done, as Kopf's
// per-object worker goes on with its stream: the object's cycles are not
// spread over the whole queue in a burst.
func (q *Queue) handle(key string) {
	defer q.keys.Done(key)
	q.mu.Lock()
	q.active++
	s, ev, ok := q.takeLocked(key)
	for ok {
		q.busy[key] = time.Now()
		q.mu.Unlock()
		q.processGuarded(ev, s)
		q.mu.Lock()
		delete(q.busy, key)
		q.finishLocked(s, ev)
		if !s.pending() {
			break
		}
		s, ev, ok = q.takeLocked(key)
	}
	q.active--
	idle := q.active == 0
	q.mu.Unlock()
	if idle && q.onIdle != nil {
		q.onIdle()
	}
}

// takeLocked takes the event to process for key, if any.
func (q *Queue) takeLocked(key string) (*Stream, watching.Event, bool) {
	s := q.streams[key]
	if s == nil || q.stoppingLocked() {
		return nil, watching.Event{}, false
	}
	ev, wait, ok := s.take(time.Now(), q.idleTimeout)
	if wait > 0 {
		q.keys.AddAfter(key, wait) // an earlier delay, now superseded
	}
	return s, ev, ok
}

// finishLocked ends the cycle of s: its requeue, if any, is scheduled,
// and s is forgotten if nothing of it remains.
func (q *Queue) finishLocked(s *Stream, ev watching.Event) {
	if d, ok := s.finish(ev, time.Now(), q.stoppingLocked()); ok {
		q.keys.AddAfter(s.key, d)
	}
	if s.empty() && q.streams[s.key] == s {
		delete(q.streams, s.key)
	}
}

// processGuarded calls the processor; a panic that escapes it (a bug: the
// processor guards user code itself) is the last resort's to catch here.
// It is logged with the object's key, at ERROR with the panic's value and
// at DEBUG with the stack; the worker then goes on as if the event were
// processed: the other objects are unaffected, and the object's next
// event is processed as usual.
func (q *Queue) processGuarded(ev watching.Event, s *Stream) {
	defer func() {
		if v := recover(); v != nil {
			logger := logging.ForObject(q.logger, ev.Key)
			logger.Error(fmt.Sprintf("Event processing has failed with an unrecoverable error for %s: %v", ev.Key, v))
			logger.Debug(fmt.Sprintf("The stack of the panic: %v", v), slog.String("stack", string(debug.Stack())))
		}
	}()
	q.process(q.ctx, ev, s)
}

func (q *Queue) stoppingLocked() bool { return q.closed || q.ctx.Err() != nil }

func (q *Queue) isClosed() bool {
	select {
	case <-q.closing:
		return true
	default:
		return false
	}
}
