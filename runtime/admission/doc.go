// Package admission serves admission webhooks (Kopf's @kopf.on.validate
// and @kopf.on.mutate): the webhook handlers of a registry.Registry answer
// the API server's AdmissionReviews (admission.k8s.io/v1) over HTTPS.
//
// Handler is the http.Handler of the reviews: one path per handler id
// (<root>/<id>, Kopf's paths), all the matching handlers run once each
// through execution.Guard, errors become refusals with Kopf's preference
// (Error, PermanentError, TemporaryError, any other), warnings and
// mutations (kw.Patch as a JSON Patch) go into the response; a malformed,
// oversized or other-version review is answered with an HTTP error, never
// a crash.
//
// Start runs the HTTPS server (settings.Admission.Server: a local server
// reached by URL, or an in-cluster Service), with its certificate swapped
// through tls.Config.GetCertificate:
//
//   - generated (client-go's util/cert and util/keyutil): a CA and a
//     serving certificate kept in a Secret, so that every replica serves
//     the same one; the first replica creates it, the others (losing the
//     create or update race with AlreadyExists or Conflict) read the
//     winner's; renewed when a third of its validity is left, checked
//     every CheckInterval;
//   - or given as files, read again when their content changes. The files
//     are polled (every CheckInterval, hashing their content, as Kopf
//     does) rather than watched: fsnotify is not in the runtime's module
//     graph (client-go does not bring it, and the root module adds no
//     requirement for this), and a Secret mounted into a pod changes by
//     an atomic symlink swap that file mtimes and inotify watches of the
//     files themselves do not report reliably; a hash of a few KiB each
//     minute costs nothing.
//
// With settings.Admission.Managed, it keeps the ValidatingWebhookConfiguration
// and the MutatingWebhookConfiguration of that name (see manager): written
// only when they differ from what the handlers call for, and cleaned up at
// exit (only the persistent handlers' webhooks left) by the last replica,
// which each replica knows from the others' Leases.
//
// With Config.Stamp (sharding's label mode), the server also answers the
// operator's own mutating webhook that labels objects at their creation,
// whose entry of its own the manager adds to the managed
// MutatingWebhookConfiguration (failurePolicy Ignore: see Stamp).
//
// docs/admission.md is the user's guide.
package admission
