package kwargs

import (
	authenticationv1 "k8s.io/api/authentication/v1"

	"github.com/kopf-go/kopf/runtime/body"
	"github.com/kopf-go/kopf/runtime/diffs"
)

// Admission are the arguments of an admission webhook handler (Kopf's
// @kopf.on.validate and @kopf.on.mutate), in the body-only form: the
// resource kwargs of the object under admission (Base: its body, spec,
// meta, status, name, namespace, labels, annotations, logger, memo) and
// the admission request's own.
//
// Body is the new object of the request (the old one for DELETE, which has
// no new object). Patch starts empty and refers to that body: a mutating
// handler changes Patch as a merge patch (nil removes a key), and the
// webhook answers with the JSON Patch that turns the body into the body
// with Patch merged in; what a validating handler puts in Patch is
// ignored by the API server (Kopf sends it, and so does kopf-go, but the
// API server refuses patches from validating webhooks: do not).
type Admission struct {
	Base
	// Param is the handler's param= option, as registered.
	Param any
	// DryRun is true for a dry-run request (kubectl --dry-run=server):
	// the object will not be stored, so a handler with side effects must
	// make none (and be registered with SideEffects).
	DryRun bool
	// Headers are the HTTP headers of the webhook request (those of the
	// API server calling the webhook, not of the user's request), with
	// the first value of each header.
	Headers map[string]string
	// SSLPeer describes the client certificate of the API server calling
	// the webhook, if it presented one (Kopf's sslpeer, as Python's
	// getpeercert() gives it): "subject" and "issuer" (lists of relative
	// distinguished names, each a list of [name, value] pairs, e.g.
	// [][][2]string{{{"commonName", "kube-apiserver"}}}), "serialNumber",
	// "notBefore", "notAfter" (RFC 3339), "subjectAltName" ([][2]string of
	// "DNS" or "IP Address" and the value) and "certificate" (the
	// *x509.Certificate); empty without a client certificate.
	SSLPeer map[string]any
	// UserInfo is who sends the request under admission (Kopf's userinfo).
	UserInfo authenticationv1.UserInfo
	// Warnings collects the warnings to send to the user's client (Kopf's
	// warnings list; kubectl prints them as "Warning: ..."): append to
	// *Warnings or call Warn. Shared by every handler of the request.
	Warnings *[]string
	// Operation is the operation under admission: CREATE, UPDATE, DELETE
	// or CONNECT.
	Operation string
	// Subresource is the subresource of the request ("status", "scale",
	// ...), or "" for the object itself.
	Subresource string
	// Old and New are the object before and after the operation (whole
	// objects, as Kopf gives them), nil if there is none: Old is nil for
	// CREATE, New is nil for DELETE.
	Old, New body.Body
	// Diff lists the changes from Old to New.
	Diff diffs.Diff
}

// Warn adds a warning for the user's client to the response (Kopf's
// warnings.append(text)).
func (kw Admission) Warn(text string) {
	if kw.Warnings != nil {
		*kw.Warnings = append(*kw.Warnings, text)
	}
}

// TypedAdmission are the arguments of an admission webhook handler of a
// resource whose objects are of the Go type T: every kwarg of Admission,
// and the object, the old and the new objects decoded as T.
type TypedAdmission[T any] struct {
	Admission
	// Object is the body decoded as a T.
	Object *T
	// Old and New are the old and new objects decoded as T, nil if there
	// is none.
	Old, New *T
}

// ShareDecoded starts a cache of typed views of kw's body and objects,
// shared by kw and by every copy made of it from now on (see
// Changing.ShareDecoded): the handlers of one admission request decode
// them at most once per Go type.
func (kw *Admission) ShareDecoded() {
	c := &decodedCache{body: kw.Body}
	if kw.Old != nil {
		c.old = map[string]any(kw.Old)
	}
	if kw.New != nil {
		c.new = map[string]any(kw.New)
	}
	kw.decoded = c
}

// DecodeAdmission returns kw in the typed form for T: the body and the old
// and new objects decoded as T, once per request and T (see the package
// doc). An error means that one of them does not decode as T.
func DecodeAdmission[T any](kw *Admission) (TypedAdmission[T], error) {
	src := kw.Body
	var old, new any
	if kw.Old != nil {
		old = map[string]any(kw.Old)
	}
	if kw.New != nil {
		new = map[string]any(kw.New)
	}
	if c := kw.decoded; c != nil {
		src, old, new = c.body, c.old, c.new
	}
	out := TypedAdmission[T]{Admission: *kw}
	var err error
	out.Object, out.Old, out.New, err = decodeStates[T](kw.decoded, src, old, new)
	return out, err
}

func (kw *Admission) embedded() *Admission                 { return kw }
func (kw *TypedAdmission[T]) embedded() *TypedAdmission[T] { return kw }
