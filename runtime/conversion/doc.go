// Package conversion serves the conversion webhook of the kinds that have
// several versions (docs/versions.md): the conversions of a
// registry.Registry (registry.Conversion: a hub, the storage version, and
// its spokes) answer the API server's ConversionReviews
// (apiextensions.k8s.io/v1) at <root>/convert of the admission server
// (package runtime/admission: the same HTTPS server, the same certificate
// and Secret shared by the replicas).
//
// Handler is the http.Handler of the reviews. Each object of a review is
// converted to the desired version through the hub: a spoke's ToHub, the
// hub's FromHub, or a spoke's ToHub then the other spoke's FromHub. The
// runtime sets the apiVersion and kind of every intermediate and final
// result; a result without metadata keeps the object's; a result whose
// metadata differs from the object's other than in labels and annotations
// is refused (the API server refuses a changed name, namespace or uid,
// and silently restores the rest: a conversion that edits metadata is
// thus seen at once, in its own words). A
// conversion runs through execution.Guard: its error or panic fails the
// whole review (the API server needs every object converted) with a
// message naming the object, the versions and the error, logged at ERROR;
// the operator never crashes. A malformed review, one of another version,
// or an oversized one is answered with HTTP 400 (413) and logged.
//
// CRDs keeps the conversion webhook of each CRD whose kind has
// conversions: spec.conversion's strategy Webhook and its clientConfig
// (the admission server's Service or URL at <root>/convert, and the CA
// bundle of its certificate), written by a merge patch only when they
// differ, checked again every interval and when the certificate changes.
// At exit they are left as they are, unlike the admission webhooks that
// are not persistent: without its webhook, the API server cannot serve
// the kind's objects in another version than the stored one, and a
// conversion strategy None would drop the fields that versions rename.
package conversion
