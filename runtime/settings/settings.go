// Package settings holds the operator's tunables, grouped and defaulted the
// way Kopf's OperatorSettings are (kopf/_cogs/configs/configuration.py), so
// that Kopf users find the same knobs under the same names: Kopf's
// settings.queueing.worker_limit is Settings.Queueing.WorkerLimit here. Each
// group and field names its Kopf equivalent, or says that Kopf has none.
//
// Kopf's groups that kopf-go does not have (yet): process
// (ultimate_exiting_timeout), peering and scanning.
// Kopf's fields that it does not have are listed with their group.
//
// Settings are read by the operator while it runs, so they are set before
// it starts: through kopf.WithSettings (package kopf), or Options.Settings
// of runtime/operator and runtime/cli; later, by startup handlers, which
// will get the same *Settings. Changing them while the operator runs is a
// data race. docs/settings.md is the reference of every field.
package settings

import (
	"log/slog"
	"time"

	"github.com/kopf-go/kopf/runtime/progress"
)

// Settings are all the operator's settings (Kopf's kopf.OperatorSettings).
// Its zero value is not usable: start from Default.
type Settings struct {
	Persistence Persistence // settings.persistence
	Execution   Execution   // settings.execution
	Queueing    Queueing    // settings.queueing (formerly settings.batching)
	Watching    Watching    // settings.watching
	Networking  Networking  // settings.networking
	Posting     Posting     // settings.posting
	Background  Background  // settings.background
	Admission   Admission   // settings.admission (admission.go)
	Peering     Peering     // settings.peering (see peering.go)
}

// Persistence says where and how the operator keeps its state in objects
// (Kopf's settings.persistence).
type Persistence struct {
	// Finalizer is the finalizer the operator puts on objects whose deletion
	// it must handle (Kopf's finalizer). Default:
	// "kopf.zalando.org/KopfFinalizerMarker".
	Finalizer string
	// ProgressStorage keeps per-handler progress between cycles (Kopf's
	// progress_storage). Default: progress.NewSmartProgressStorage(), as
	// Kopf's SmartProgressStorage.
	ProgressStorage progress.ProgressStorage
	// DiffBaseStorage keeps the last handled essence of objects (Kopf's
	// diffbase_storage). Default: progress.NewAnnotationsDiffBaseStorage(),
	// the annotation kopf.zalando.org/last-handled-configuration.
	DiffBaseStorage progress.DiffBaseStorage
	// ConsistencyTimeout is how long a worker waits, after patching an
	// object, to see its own patch come back through the watch stream
	// (Kopf's consistency_timeout). Past it, the worker reads the object
	// and processes what it read, where Kopf processes the older-looking
	// event anyway. Default: 5 s.
	ConsistencyTimeout time.Duration
}

// Execution governs handler invocation (Kopf's settings.execution). Kopf's
// executor and max_workers have no equivalent: handlers are plain Go
// functions called in the object's worker goroutine.
type Execution struct {
	// DefaultBackoff is the delay before retrying a handler that failed
	// with an arbitrary error, unless the handler sets its own backoff
	// (Kopf's default_backoff). Default: 60 s.
	DefaultBackoff time.Duration
	// CleanupTimeout is the most the cleanup handlers get, retries
	// included, once the operator has stopped; the ones still running are
	// then cancelled (their ctx is done) and the operator exits. 0: no
	// limit, as Kopf, which waits for them for ever. kopf-go's own.
	// Default: 10 s.
	CleanupTimeout time.Duration
}

// Queueing governs the objects' queue and its workers (Kopf's
// settings.queueing, formerly settings.batching; Kopf's deprecated
// batch_window has no equivalent).
type Queueing struct {
	// IdleTimeout is how long after an object's cycle its next one still
	// waits for the event of the patch it sent (Kopf's idle_timeout, the
	// life of an idle per-object worker, which forgot that expectation).
	// Past it, the next cycle does not wait: it reads the object, as after
	// Persistence.ConsistencyTimeout, rather than trust an event that may
	// be older than its patch (Kopf processes that event as it is).
	// Default: 5 s.
	IdleTimeout time.Duration
	// WorkerLimit is the most objects processed at once (Kopf's
	// worker_limit, formerly settings.batching.worker_limit); 0:
	// unbounded, a goroutine per object processed, as Kopf's default. An
	// object over the limit waits for a worker in a first-come queue, with
	// only its latest event; a delay (a retry's backoff, a delayed
	// handler) is a requeue, which holds no worker.
	// kopf-go's default is 64, not unbounded: API requests are bounded by
	// Networking.MaxInFlight anyway, so more workers only wait for them, each
	// with a goroutine and its grown stack, whereas a queued object costs
	// its latest event's body only (this bounds memory in a burst, e.g. the
	// first listing of many objects).
	WorkerLimit int
	// ReleaseMemoryAfter: once no object of any resource has been
	// processed for this long, the memory freed after the work is returned to the OS
	// (runtime/debug.FreeOSMemory: one garbage collection per busy → idle
	// transition, nothing while idle). 0: never; the Go runtime's scavenger
	// then returns it gradually, after its next collection. Kopf has no
	// such setting (Python keeps what it has grown). Default: 10 s.
	ReleaseMemoryAfter time.Duration
	// ExitTimeout is how long the workers get to finish the cycle they are
	// in when the operator exits (Kopf's exit_timeout; same default, 2 s).
	// What they store meanwhile is stored. Then their context is
	// cancelled, the objects still being processed are logged
	// ("Unprocessed streams left for ..."), and after one more second those
	// whose handlers ignore the cancellation are logged as hung ("Hung
	// tasks are not stopped: ...") and left behind: the operator exits
	// without waiting for them, and nothing they return is stored.
	ExitTimeout time.Duration
	// ErrorDelays are the delays between attempts of a failed cycle (e.g.
	// when a patch fails or the API server is unreachable), the last one
	// repeated: Kopf's settings.queueing.error_delays (formerly
	// settings.batching.error_delays), with its default, Fibonacci numbers
	// from 1 second to 10 minutes. The sequence starts again after a
	// success. Each delay is stretched by ErrorJitter, and is never shorter
	// than the delay the API server asks for (Retry-After). Empty: a failed
	// cycle is not retried, the object is processed again on its next
	// event (Kopf's "no throttling").
	ErrorDelays []time.Duration
	// ErrorJitter stretches each of ErrorDelays by a random factor in
	// [1, 1+ErrorJitter] (apimachinery's wait.Jitter), so that objects that
	// fail together, e.g. during an API server outage, do not all retry in
	// the same instant. 0 or less: the delays are exact, as Kopf's. Kopf has
	// no such setting. Default: 0.5.
	ErrorJitter float64
}

// Watching governs the watch streams (Kopf's settings.watching).
// Reconnection backoff and server timeouts are client-go's reflector's
// (randomised 5-10 min watches, exponential backoff on errors), so Kopf's
// server_timeout, client_timeout, connect_timeout and reconnect_backoff
// have no equivalent.
type Watching struct {
	// InactivityTimeout is how long a watch may stay silent, not even
	// sending a bookmark, before it is re-established (Kopf's
	// inactivity_timeout; 0: never), and how long a watch request may
	// wait for its response before it is abandoned as the API server's
	// timeout (watching.ErrNoResponse). Default: 70 s.
	InactivityTimeout time.Duration
	// InferSelectors makes the watch of a resource carry the label
	// selector that every handler of the resource requires (each handler,
	// daemon, timer and index has labels={key: value} or {key: PRESENT}
	// for the key), and the field selector "path=value" when every one
	// requires that exact value of one field the API server selects on
	// (field=path value=value: metadata.name, metadata.namespace, a CRD's
	// selectableFields): the API server then sends only the objects that
	// some handler may match (docs/filters.md). Off: neither is inferred,
	// every object is listed, watched and filtered by the handlers'
	// filters, as Kopf does. Kopf has no such setting. Default: on.
	InferSelectors bool
	// Selectors are explicit selectors of resources' watches, by resource
	// ("kopfexamples.v1.kopf.dev", "kopfexamples.kopf.dev", or a plural
	// alone: "pods"), as Kopf's pull request #1311 proposes: an object
	// they do not select is never seen, as if no handler matched it. Each
	// is ANDed with the inferred one. Default: none.
	Selectors map[string]Selector
}

// Selector is an explicit selector of a resource's watch, in the syntax of
// kubectl's --selector and --field-selector (metav1.ListOptions): "" for
// none.
type Selector struct {
	Labels string // e.g. "app=x,tier in (a,b)"
	Fields string // e.g. "metadata.namespace!=kube-system"
}

// Networking governs the operator's own API requests (Kopf's
// settings.networking). Kopf's connect_timeout, enforce_retry_after (the
// server's Retry-After is always a minimum, never the only delay) and
// trust_env (client-go uses the proxy environment variables) have no
// equivalent.
type Networking struct {
	// RequestTimeout bounds every patch the reactor sends, not the watches
	// (Kopf's request_timeout). Default: 300 s.
	RequestTimeout time.Duration
	// MaxInFlight bounds the operator's concurrent API requests, watches
	// excepted (0: unbounded). In a burst, requests queue briefly instead
	// of opening a new connection each past the API server's HTTP/2 stream
	// limit. Kopf has no such setting. Default: 16.
	MaxInFlight int
	// ErrorBackoffs are the delays between the attempts of one request
	// that failed for a reason worth retrying as it is (no connection, a
	// timeout, 5xx, 403 or 429; Kopf's settings.networking.error_backoffs,
	// same default: 1, 1, 2, 3, 5, 8, 13, 21 s, so nine attempts over about
	// a minute). Each is stretched by Queueing.ErrorJitter and is never
	// shorter than the server's Retry-After. Retrying the request, not the
	// cycle, keeps a handler whose outcome could not be written from running
	// again. Empty: every request is tried once. After the last attempt the
	// error escalates: the cycle is retried after Queueing.ErrorDelays.
	ErrorBackoffs []time.Duration
}

// Posting governs the Kubernetes Events the operator posts (Kopf's
// settings.posting).
type Posting struct {
	// Enabled: post events at all, kopf.Event's included (Kopf's enabled).
	// Default: true.
	Enabled bool
	// Loggers: also post the log records about objects as events (reason
	// "Logging", type by level; Kopf's loggers). Default: false, as Kopf's
	// since 1.44.
	Loggers bool
	// Level: the lowest level posted by Info, Warn, Exception and, with
	// Loggers, by log records; Event posts regardless (Kopf's level).
	// Default: INFO.
	Level slog.Level
	// ReportingComponent is the events' reportingComponent and
	// source.component (Kopf's reporting_component). Default: "kopf".
	ReportingComponent string
	// ReportingInstance is the events' reportingInstance (Kopf's
	// reporting_instance). Default: "dev".
	ReportingInstance string
	// EventNamePrefix is the events' metadata.generateName (Kopf's
	// event_name_prefix). Default: "kopf-event-".
	EventNamePrefix string
}

// Background governs daemons and timers (Kopf's settings.background).
// Kopf's instant_exit_timeout and instant_exit_zero_time_cycles have no
// equivalent: the runtime learns of a daemon's exit at once, with no
// polling, so there is no "instant exit" to wait for.
type Background struct {
	// CancellationPolling is how often a daemon or timer that is asked to
	// stop, and has no cancellation timeout, is reported as still exiting
	// ("... is still exiting. The next check is in N seconds."); its exit
	// is noticed at once regardless (Kopf's cancellation_polling, same
	// default, 60 s).
	CancellationPolling time.Duration
	// CancellationTimeout is the cancellation_timeout of daemons that set
	// none: how long a daemon of a deleted (or no longer matching) object
	// is given to exit once its context is cancelled, before the object is
	// released and the daemon left orphaned. 0: no limit, as Kopf (the
	// object keeps its finalizer until the daemon exits). Kopf has no such
	// setting. Default: 0.
	CancellationTimeout time.Duration
	// ExitTimeout is the most the operator waits for its daemons and
	// timers when it exits: all are told to stop at once, each escalates
	// per its own cancellation_backoff and cancellation_timeout, and those
	// still running after ExitTimeout are left orphaned (logged as "...
	// did not exit in time. Leaving it orphaned."), so the operator exits
	// even when a daemon ignores its context. Kopf has no such setting
	// (its bound is settings.process.ultimate_exiting_timeout, 10 min).
	// Default: 5 s.
	ExitTimeout time.Duration
}

// Default returns new settings with Kopf's defaults (kopf-go's own where
// Kopf has no such setting, or where a field says it differs).
func Default() *Settings {
	return &Settings{
		Persistence: Persistence{
			Finalizer:          "kopf.zalando.org/KopfFinalizerMarker",
			ProgressStorage:    progress.NewSmartProgressStorage(),
			DiffBaseStorage:    progress.NewAnnotationsDiffBaseStorage(),
			ConsistencyTimeout: 5 * time.Second,
		},
		Execution: Execution{DefaultBackoff: 60 * time.Second, CleanupTimeout: 10 * time.Second},
		Queueing: Queueing{
			IdleTimeout:        5 * time.Second,
			WorkerLimit:        64,
			ReleaseMemoryAfter: 10 * time.Second,
			ExitTimeout:        2 * time.Second,
			ErrorDelays:        seconds(1, 1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144, 233, 377, 610),
			ErrorJitter:        0.5,
		},
		Watching: Watching{InactivityTimeout: 70 * time.Second, InferSelectors: true},
		Networking: Networking{
			RequestTimeout: 300 * time.Second,
			MaxInFlight:    16,
			ErrorBackoffs:  seconds(1, 1, 2, 3, 5, 8, 13, 21),
		},
		Posting: Posting{
			Enabled:            true,
			ReportingComponent: "kopf",
			ReportingInstance:  "dev",
			EventNamePrefix:    "kopf-event-",
		},
		Background: Background{
			CancellationPolling: 60 * time.Second,
			ExitTimeout:         5 * time.Second,
		},
		Peering: defaultPeering(),
	}
}

func seconds(ns ...int) []time.Duration {
	out := make([]time.Duration, len(ns))
	for i, n := range ns {
		out[i] = time.Duration(n) * time.Second
	}
	return out
}

// FieldManager is the operator's field owner in server-side apply: the
// manager of the runtime's own applies (the admission webhooks'
// configurations) and the default of handlers' applies (kopf.Apply).
const FieldManager = "kopf"
