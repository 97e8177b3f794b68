package metrics

import (
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Watch are the series of one watch: a resource in a namespace ("" for a
// cluster-wide watch). Its methods are the watcher's callbacks' (see
// runtime/watching: Callback, OnWatching, OnError): cheap and safe for
// concurrent use.
type Watch struct {
	namespace string
	events    prometheus.Counter
	restarts  prometheus.Counter
	errors    prometheus.Counter
	started   time.Time
	last      atomic.Int64 // the last event's time, in Unix nanoseconds; 0: none yet
	watching  atomic.Bool  // a watch request has succeeded before
}

// Watch returns the series of the resource's watch in namespace.
func (r *Resource) Watch(namespace string) *Watch {
	w := &Watch{
		namespace: namespace,
		events:    r.m.watchEvents.WithLabelValues(r.name, namespace),
		restarts:  r.m.watchRestarts.WithLabelValues(r.name, namespace),
		errors:    r.m.watchErrors.WithLabelValues(r.name, namespace),
		started:   time.Now(),
	}
	r.mu.Lock()
	r.watches = append(r.watches, w)
	r.mu.Unlock()
	return w
}

// Event counts an event received from the watch.
func (w *Watch) Event() {
	w.events.Inc()
	w.last.Store(time.Now().UnixNano())
}

// Watching counts a watch request that succeeded: every one after the
// first re-establishes the watch stream.
func (w *Watch) Watching() {
	if w.watching.Swap(true) {
		w.restarts.Inc()
	}
}

// Failed counts a failed listing or watch request.
func (w *Watch) Failed() { w.errors.Inc() }

// age returns the time since the watch's last event, or since the watch
// began if none has come yet.
func (w *Watch) age(now time.Time) time.Duration {
	if last := w.last.Load(); last != 0 {
		return now.Sub(time.Unix(0, last))
	}
	return now.Sub(w.started)
}
