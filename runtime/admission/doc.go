// Package admission serves admission webhooks (Kopf's @kopf.on.validate
// and @kopf.on.mutate): the handlers of a registry.Registry answer the API
// server's AdmissionReviews.
package admission
