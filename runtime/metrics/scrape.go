package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// scrapeCollector reports the figures read at each scrape: the queues',
// the objects in progress, the ages of the watches' last events. It reads
// them from the resources' queueing.Queue and reactor.Reactor, which
// keep them anyway, rather than having the hot path update gauges.
type scrapeCollector struct{ m *Metrics }

var (
	inProgressDesc = prometheus.NewDesc("kopf_objects_in_progress",
		"Objects whose changing handlers are unfinished for their cause (delayed, or due in a next cycle).",
		[]string{"resource"}, nil)
	depthDesc = prometheus.NewDesc("kopf_queue_depth",
		"Objects with an event waiting to be processed (the events batched into one count once).",
		[]string{"resource"}, nil)
	workersDesc = prometheus.NewDesc("kopf_queue_workers",
		"Worker goroutines alive: the pool's with a worker limit, else those processing an object.",
		[]string{"resource"}, nil)
	busyDesc = prometheus.NewDesc("kopf_queue_busy_workers",
		"Objects being processed now.",
		[]string{"resource"}, nil)
	lastEventDesc = prometheus.NewDesc("kopf_watch_last_event_age_seconds",
		"Seconds since the last event of a watch (since the watch began, if none has come yet).",
		[]string{"resource", "namespace"}, nil)

	activeWorkersDesc = prometheus.NewDesc("controller_runtime_active_workers",
		"Number of currently used workers per controller", []string{"controller"}, nil)
	maxReconcilesDesc = prometheus.NewDesc("controller_runtime_max_concurrent_reconciles",
		"Maximum number of concurrent reconciles per controller", []string{"controller"}, nil)
	wqDepthDesc = prometheus.NewDesc("workqueue_depth",
		"Current depth of workqueue by workqueue and priority", []string{"name", "controller", "priority"}, nil)
	wqAddsDesc = prometheus.NewDesc("workqueue_adds_total",
		"Total number of adds handled by workqueue", []string{"name", "controller"}, nil)
	wqUnfinishedDesc = prometheus.NewDesc("workqueue_unfinished_work_seconds",
		"How many seconds of work has been done that is in progress and hasn't been observed by work_duration. "+
			"Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at which this increases.",
		[]string{"name", "controller"}, nil)
	wqLongestDesc = prometheus.NewDesc("workqueue_longest_running_processor_seconds",
		"How many seconds has the longest running processor for workqueue been running.", []string{"name", "controller"}, nil)
)

func (c *scrapeCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{inProgressDesc, depthDesc, workersDesc, busyDesc, lastEventDesc,
		activeWorkersDesc, maxReconcilesDesc, wqDepthDesc, wqAddsDesc, wqUnfinishedDesc, wqLongestDesc} {
		ch <- d
	}
}

func (c *scrapeCollector) Collect(ch chan<- prometheus.Metric) {
	c.m.mu.Lock()
	resources := c.m.resources[:len(c.m.resources):len(c.m.resources)]
	c.m.mu.Unlock()
	now := time.Now()
	for _, r := range resources {
		name := r.name
		if r.inProgress != nil {
			ch <- prometheus.MustNewConstMetric(inProgressDesc, prometheus.GaugeValue, float64(r.inProgress()), name)
		}
		if r.stats != nil {
			st := r.stats()
			ch <- prometheus.MustNewConstMetric(depthDesc, prometheus.GaugeValue, float64(st.Pending), name)
			ch <- prometheus.MustNewConstMetric(workersDesc, prometheus.GaugeValue, float64(st.Workers), name)
			ch <- prometheus.MustNewConstMetric(busyDesc, prometheus.GaugeValue, float64(st.Busy), name)
			ch <- prometheus.MustNewConstMetric(activeWorkersDesc, prometheus.GaugeValue, float64(st.Busy), name)
			ch <- prometheus.MustNewConstMetric(maxReconcilesDesc, prometheus.GaugeValue, float64(st.Limit), name)
			ch <- prometheus.MustNewConstMetric(wqDepthDesc, prometheus.GaugeValue, float64(st.Pending), name, name, "")
			ch <- prometheus.MustNewConstMetric(wqAddsDesc, prometheus.CounterValue, float64(st.Added), name, name)
			ch <- prometheus.MustNewConstMetric(wqUnfinishedDesc, prometheus.GaugeValue, st.BusyFor.Seconds(), name, name)
			ch <- prometheus.MustNewConstMetric(wqLongestDesc, prometheus.GaugeValue, st.Longest.Seconds(), name, name)
		}
		r.mu.RLock()
		watches := r.watches[:len(r.watches):len(r.watches)]
		r.mu.RUnlock()
		for _, w := range watches {
			ch <- prometheus.MustNewConstMetric(lastEventDesc, prometheus.GaugeValue, w.age(now).Seconds(), name, w.namespace)
		}
	}
}
