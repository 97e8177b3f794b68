// Package posting posts Kubernetes Events (core/v1) about objects, as Kopf's
// kopf.event(), kopf.info(), kopf.warn() and kopf.exception() do, and —
// optionally — turns the log records about objects into such Events, as
// Kopf does when settings.posting.loggers is set.
//
// # Wire format
//
// Every event is one POST to /api/v1/namespaces/<ns>/events of exactly
// Kopf's shape:
//
//	metadata:       {namespace: <ns>, generateName: <settings.EventNamePrefix>}
//	action:         "Action?"
//	type, reason:   as given
//	message:        as given, cut in the middle with "..." to 1024 bytes
//	reportingComponent, source.component: settings.ReportingComponent
//	reportingInstance: settings.ReportingInstance
//	involvedObject: {apiVersion, kind, name, uid, namespace} of the object
//	firstTimestamp, lastTimestamp, eventTime: the time of the call
//
// where <ns> is the object's namespace or, for cluster-scoped objects, the
// poster's default namespace ("default" unless configured), which then is
// also the involvedObject's namespace (Kopf's behaviour, nolar/kopf#164).
// Events are never aggregated, deduplicated, rate-limited or patched: every
// call is a new Event, as in Kopf.
//
// Events about core/v1 Events (apiVersion "v1", kind "Event") are never
// posted, silently, to prevent "event explosions"; events.k8s.io Events are
// not affected, as in Kopf.
//
// # Why not client-go's tools/record
//
// client-go's EventBroadcaster/EventRecorder does not fit Kopf's format:
// the recorder drops every event whose type is not Normal or Warning (Kopf's
// exception() posts type "Error"), names events "<object>.<hex nanoseconds>"
// instead of using generateName, and its EventCorrelator aggregates and
// spam-filters similar events, rewriting their messages ("(combined from
// similar events): ...") and PATCHing the count of existing events instead of
// creating new ones. A custom EventSink cannot undo the dropped types. This
// package therefore has its own small queue and worker.
//
// # Delivery
//
// Posting never blocks the caller and never fails it: an event is shaped at
// the time of the call and put into a bounded in-memory queue; one
// background goroutine sends the queued events in order. Failures to send
// are logged as warnings on the poster's logger and dropped; there is no
// retry beyond what the client itself does. When the queue is full, new
// events are dropped with a warning. Poster.Stop sends what is queued within
// a bounded time and drops the rest.
//
// # Settings
//
// settings.Posting.Enabled switches everything off (kopf.event() too, as in
// Kopf). Options.Level (Kopf's settings.posting.level, default INFO) is the
// lowest level at which Info (INFO), Warn (WARNING), Exception (ERROR) and
// log records post; Event posts regardless of the level, as in Kopf.
//
// # Handlers
//
// Handlers post through their context: the operator installs its Poster
// with WithPoster, and Event, Info, Warn and Exception find it there. Without
// a poster in the context they do nothing.
package posting
