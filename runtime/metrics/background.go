package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Stop outcomes of daemons and timers, as kopf_daemon_stop_seconds labels
// them: the runner exited when asked, or it did not exit within its
// cancellation timeout (or the operator's exit timeout) and was left
// orphaned.
const (
	StopExited   = "exited"
	StopOrphaned = "orphaned"
)

// backgroundKey names the series of one daemon or timer of a resource.
type backgroundKey struct {
	resource, handler, kind string
}

// backgroundSeries are the series of one daemon or timer of a resource.
type backgroundSeries struct {
	exited, orphaned prometheus.Observer
	lag              prometheus.Observer // nil for a daemon
}

// DaemonStopped observes the stop of one runner of a daemon or a timer
// (kind "daemon" or "timer"; runtime/daemons' Engine.OnStopped): how long
// it took from the request to stop to its exit, or to its being left
// orphaned. Safe for concurrent use; the series of a handler are resolved
// on its first stop.
func (m *Metrics) DaemonStopped(resource, handler, kind string, latency time.Duration, orphaned bool) {
	bs := m.background(resource, handler, kind)
	if orphaned {
		bs.orphaned.Observe(latency.Seconds())
		return
	}
	bs.exited.Observe(latency.Seconds())
}

// TimerTicked observes one tick of a timer (runtime/daemons'
// Engine.OnTick): how much later than scheduled it started. Safe for
// concurrent use; the series are resolved on the timer's first tick.
func (m *Metrics) TimerTicked(resource, handler string, lag time.Duration) {
	m.background(resource, handler, "timer").lag.Observe(max(lag, 0).Seconds())
}

// background returns the series of a daemon or timer, resolving them on
// first use.
func (m *Metrics) background(resource, handler, kind string) *backgroundSeries {
	key := backgroundKey{resource: resource, handler: handler, kind: kind}
	m.bgMu.RLock()
	bs := m.bg[key]
	m.bgMu.RUnlock()
	if bs != nil {
		return bs
	}
	m.bgMu.Lock()
	defer m.bgMu.Unlock()
	if bs = m.bg[key]; bs != nil {
		return bs
	}
	bs = &backgroundSeries{
		exited:   m.daemonStop.WithLabelValues(resource, handler, kind, StopExited),
		orphaned: m.daemonStop.WithLabelValues(resource, handler, kind, StopOrphaned),
	}
	if kind == "timer" {
		bs.lag = m.timerLag.WithLabelValues(resource, handler)
	}
	m.bg[key] = bs
	return bs
}

func newDaemonStop() *prometheus.HistogramVec {
	return prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "kopf_daemon_stop_seconds",
		Help:    "How long daemons and timers took to stop, from the request (the object's deletion, a filter's mismatch, the operator's pause or exit) to their exit (outcome=exited) or to their being left orphaned (outcome=orphaned).",
		Buckets: handlerBuckets,
	}, []string{"resource", "handler", "kind", "outcome"})
}

func newTimerLag() *prometheus.HistogramVec {
	return prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "kopf_timer_lag_seconds",
		Help:    "How much later than scheduled (by its interval, sharp grid or idle time) each tick of a timer started.",
		Buckets: latencyBuckets,
	}, []string{"resource", "handler"})
}
