package admission

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	admissionv1 "k8s.io/api/admission/v1"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	"github.com/kopf-go/kopf/runtime/body"
)

// DefaultMaxRequestBytes bounds an AdmissionReview's size: 7 MiB. An
// object is at most ~1.5 MiB in etcd (3 MiB as the API server accepts
// it), and an UPDATE's review carries the object twice, in JSON that may
// be larger than what etcd stores.
const DefaultMaxRequestBytes = 7 << 20

// reviewVersion is the only AdmissionReview version served (and declared in
// managed configurations' admissionReviewVersions).
const reviewVersion = "admission.k8s.io/v1"

// request is an AdmissionReview's request, decoded and checked.
type request struct {
	review admissionv1.AdmissionReview
	object body.Body // nil if absent
	old    body.Body // nil if absent
}

// badRequest is a webhook request that cannot be served: not an
// admission request that is judged (Kopf's WebhookError). It is answered
// with its HTTP status and message, not with an AdmissionReview.
type badRequest struct {
	status int
	msg    string
}

func (e *badRequest) Error() string { return e.msg }

// readReview reads and decodes an AdmissionReview from r, at most max
// bytes of it (size is its announced length, -1 if unknown).
func readReview(r io.Reader, size, max int64) (*request, error) {
	var buf bytes.Buffer
	if size > 0 && size <= max {
		buf.Grow(int(size) + bytes.MinRead)
	}
	_, err := buf.ReadFrom(io.LimitReader(r, max+1))
	data := buf.Bytes()
	if err != nil {
		return nil, &badRequest{http.StatusBadRequest, fmt.Sprintf("reading the admission review: %v", err)}
	}
	if int64(len(data)) > max {
		return nil, &badRequest{http.StatusRequestEntityTooLarge, fmt.Sprintf("the admission review exceeds %d bytes", max)}
	}
	return decodeReview(data)
}

// decodeReview decodes an AdmissionReview of admission.k8s.io/v1 and the
// objects in it (numbers as int64 or float64, as client-go decodes
// objects). Whatever the input, it returns a request or a *badRequest,
// never panics.
func decodeReview(data []byte) (*request, error) {
	req := &request{}
	if err := json.Unmarshal(data, &req.review); err != nil {
		return nil, &badRequest{http.StatusBadRequest, fmt.Sprintf("malformed admission review: %v", err)}
	}
	rv := &req.review
	if rv.APIVersion != reviewVersion || rv.Kind != "AdmissionReview" {
		return nil, &badRequest{http.StatusBadRequest, fmt.Sprintf("unsupported review: apiVersion %q, kind %q (want %s AdmissionReview)", rv.APIVersion, rv.Kind, reviewVersion)}
	}
	if rv.Request == nil {
		return nil, &badRequest{http.StatusBadRequest, "the admission review has no request"}
	}
	if rv.Request.UID == "" {
		return nil, &badRequest{http.StatusBadRequest, "the admission request has no uid"}
	}
	if rv.Request.Resource.Resource == "" || rv.Request.Resource.Version == "" {
		return nil, &badRequest{http.StatusBadRequest, "the admission request has no resource"}
	}
	var err error
	if req.object, err = decodeObject(rv.Request.Object.Raw); err != nil {
		return nil, &badRequest{http.StatusBadRequest, fmt.Sprintf("malformed object in the admission request: %v", err)}
	}
	if req.old, err = decodeObject(rv.Request.OldObject.Raw); err != nil {
		return nil, &badRequest{http.StatusBadRequest, fmt.Sprintf("malformed oldObject in the admission request: %v", err)}
	}
	if req.object == nil && req.old == nil {
		// Kopf's MissingDataError.
		return nil, &badRequest{http.StatusBadRequest, "Either old or new object is missing from the admission request."}
	}
	return req, nil
}

// decodeObject decodes a raw object; null or nothing is nil.
func decodeObject(raw []byte) (body.Body, error) {
	if len(bytes.TrimSpace(raw)) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return nil, nil
	}
	var m map[string]any
	if err := utiljson.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	if m == nil {
		return nil, errors.New("not an object")
	}
	return body.Body(m), nil
}

// response builds the AdmissionReview answering req.
func response(req *request, allowed bool, status *responseStatus, warnings []string, patch []byte) *admissionv1.AdmissionReview {
	out := &admissionv1.AdmissionReview{}
	out.APIVersion = reviewVersion
	out.Kind = "AdmissionReview"
	out.Response = &admissionv1.AdmissionResponse{
		UID:      req.review.Request.UID,
		Allowed:  allowed,
		Warnings: warnings,
	}
	if status != nil {
		out.Response.Result = status.metav1()
	}
	if len(patch) > 0 {
		pt := admissionv1.PatchTypeJSONPatch
		out.Response.Patch = patch
		out.Response.PatchType = &pt
	}
	return out
}

// encodePatch returns the JSON of ops, or nil if there are none.
// (encoding/json writes the []byte of AdmissionResponse.Patch in base64,
// as the API expects.)
func encodePatch(ops []patchOp) ([]byte, error) {
	if len(ops) == 0 {
		return nil, nil
	}
	return json.Marshal(ops)
}
