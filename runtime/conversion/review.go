package conversion

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utiljson "k8s.io/apimachinery/pkg/util/json"
)

// DefaultMaxRequestBytes bounds a ConversionReview's size: 7 MiB, as an
// AdmissionReview's (a review of a list carries many objects, which the
// API server sends in chunks of its own).
const DefaultMaxRequestBytes = 7 << 20

// reviewVersion is the only ConversionReview version served (the CRD's
// conversionReviewVersions: [v1]).
const reviewVersion = "apiextensions.k8s.io/v1"

// review is a ConversionReview of apiextensions.k8s.io/v1 (declared here:
// the root module does not require k8s.io/apiextensions-apiserver).
type review struct {
	APIVersion string          `json:"apiVersion"`
	Kind       string          `json:"kind"`
	Request    *reviewRequest  `json:"request,omitempty"`
	Response   *reviewResponse `json:"response,omitempty"`
}

type reviewRequest struct {
	UID               types.UID         `json:"uid"`
	DesiredAPIVersion string            `json:"desiredAPIVersion"`
	Objects           []json.RawMessage `json:"objects"`
}

type reviewResponse struct {
	UID              types.UID        `json:"uid"`
	ConvertedObjects []map[string]any `json:"convertedObjects"`
	Result           metav1.Status    `json:"result"`
}

// request is a ConversionReview's request, decoded and checked.
type request struct {
	uid     types.UID
	desired string // the desired apiVersion: group/version
	objects []map[string]any
}

// badRequest is a request that cannot be served: answered with its HTTP
// status and message, not with a ConversionReview.
type badRequest struct {
	status int
	msg    string
}

func (e *badRequest) Error() string { return e.msg }

// readReview reads and decodes a ConversionReview from r, at most max
// bytes of it.
func readReview(r io.Reader, max int64) (*request, error) {
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(io.LimitReader(r, max+1)); err != nil {
		return nil, &badRequest{http.StatusBadRequest, fmt.Sprintf("reading the conversion review: %v", err)}
	}
	if int64(buf.Len()) > max {
		return nil, &badRequest{http.StatusRequestEntityTooLarge, fmt.Sprintf("the conversion review exceeds %d bytes", max)}
	}
	return decodeReview(buf.Bytes())
}

// decodeReview decodes a ConversionReview of apiextensions.k8s.io/v1 and
// its objects (numbers as int64 or float64, as client-go decodes
// objects). Whatever the input, it returns a request or a *badRequest,
// never panics.
func decodeReview(data []byte) (*request, error) {
	var rv review
	if err := json.Unmarshal(data, &rv); err != nil {
		return nil, &badRequest{http.StatusBadRequest, fmt.Sprintf("malformed conversion review: %v", err)}
	}
	if rv.APIVersion != reviewVersion || rv.Kind != "ConversionReview" {
		return nil, &badRequest{http.StatusBadRequest, fmt.Sprintf("unsupported review: apiVersion %q, kind %q (want %s ConversionReview)", rv.APIVersion, rv.Kind, reviewVersion)}
	}
	switch {
	case rv.Request == nil:
		return nil, &badRequest{http.StatusBadRequest, "the conversion review has no request"}
	case rv.Request.UID == "":
		return nil, &badRequest{http.StatusBadRequest, "the conversion request has no uid"}
	case rv.Request.DesiredAPIVersion == "":
		return nil, &badRequest{http.StatusBadRequest, "the conversion request has no desiredAPIVersion"}
	}
	req := &request{uid: rv.Request.UID, desired: rv.Request.DesiredAPIVersion}
	for i, raw := range rv.Request.Objects {
		var obj map[string]any
		if err := utiljson.Unmarshal(raw, &obj); err != nil {
			return nil, &badRequest{http.StatusBadRequest, fmt.Sprintf("malformed object #%d in the conversion request: %v", i, err)}
		}
		if obj == nil {
			return nil, &badRequest{http.StatusBadRequest, fmt.Sprintf("object #%d in the conversion request is not an object", i)}
		}
		req.objects = append(req.objects, obj)
	}
	return req, nil
}

// encodeResponse is the ConversionReview answering req: the converted
// objects, or the failure's message.
func encodeResponse(req *request, converted []map[string]any, failure error) ([]byte, error) {
	resp := &reviewResponse{UID: req.uid, ConvertedObjects: converted, Result: metav1.Status{Status: metav1.StatusSuccess}}
	if failure != nil {
		resp.ConvertedObjects = nil
		resp.Result = metav1.Status{Status: metav1.StatusFailure, Message: failure.Error()}
	}
	if resp.ConvertedObjects == nil {
		resp.ConvertedObjects = []map[string]any{}
	}
	data, err := json.Marshal(&review{APIVersion: reviewVersion, Kind: "ConversionReview", Response: resp})
	if err != nil {
		return nil, fmt.Errorf("encoding the conversion response: %w", err)
	}
	return data, nil
}
