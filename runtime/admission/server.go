package admission

import (
	"context"
	"crypto/x509/pkix"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kopf-go/kopf/runtime/body"
	"github.com/kopf-go/kopf/runtime/diffs"
	"github.com/kopf-go/kopf/runtime/execution"
	"github.com/kopf-go/kopf/runtime/kwargs"
	"github.com/kopf-go/kopf/runtime/logging"
	"github.com/kopf-go/kopf/runtime/patches"
	"github.com/kopf-go/kopf/runtime/registry"
	"github.com/kopf-go/kopf/runtime/resources"
)

// DefaultTimeout bounds the handlers of one admission request: 30 s, the
// most an API server waits for a webhook (timeoutSeconds).
const DefaultTimeout = 30 * time.Second

// Handler answers the API server's admission requests with the webhook
// handlers of a registry (Kopf's serve_admission_request): an
// http.Handler for POST <root>/<handler id>, or <root>/ for every
// handler. It is safe for concurrent use; it serves plain HTTP, so it is
// mounted in an HTTPS server (Server).
//
// For each request, it runs, in registration order, every handler of the
// id in the path (or all) that is for the request's resource, operation
// and subresource and whose filters and when= match, each once (Kopf's
// all-at-once lifecycle with errors=permanent: no retries), each through
// execution.Guard (a panic is that handler's error), within Timeout
// altogether. The request is allowed if none failed; otherwise the
// response's status has the first error's message and code, preferring an
// *Error, then a PermanentError, a TemporaryError, any other (code 500).
// The warnings that handlers add go into the response; the changes that
// mutating handlers make to kw.Patch go as a JSON Patch against the
// request's object.
//
// A request that is not an AdmissionReview of admission.k8s.io/v1 with a
// request, a uid, a resource and an object or old object, or that exceeds
// MaxRequestBytes, is answered with HTTP 400 (413) and the reason as
// text, and logged; a resource without handlers with 404 (as Kopf).
type Handler struct {
	Registry *registry.Registry
	// Root is the URL path under which the handlers are served ("" is /).
	Root   string
	Logger *slog.Logger
	// Memo is the operator's memo: each request's handlers get a shallow
	// copy of it (Kopf gives the object's memo, which the webhook server
	// of kopf-go does not share with the workers).
	Memo kwargs.Memo
	// Resources, if set, returns the resolved resources (from the
	// cluster's discovery), so that handlers' selectors by singular,
	// kind or short name match; without it, or for a resource not among
	// them, the request's group, version, plural and kind are matched.
	Resources func() []resources.Resource
	// Context, if set, derives the context of the handlers from the
	// request's (the operator adds its clients and poster).
	Context func(context.Context) context.Context
	// Timeout bounds the handlers of a request (0: DefaultTimeout); a
	// handler still running then is abandoned, and the request refused
	// with code 504.
	Timeout time.Duration
	// MaxRequestBytes bounds a request's body (0: DefaultMaxRequestBytes).
	MaxRequestBytes int64
}

// responseStatus is the status of a refusal.
type responseStatus struct {
	Message string
	Code    int
}

func (s *responseStatus) metav1() *metav1.Status {
	return &metav1.Status{Message: s.Message, Code: int32(s.Code)}
}

// ServeHTTP serves one admission request.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	logger := h.Logger
	if logger == nil {
		logger = slog.Default()
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "admission requests are POSTed", http.StatusMethodNotAllowed)
		return
	}
	root := strings.TrimSuffix(h.Root, "/")
	if !strings.HasPrefix(r.URL.Path, root+"/") {
		http.NotFound(w, r)
		return
	}
	id := strings.TrimPrefix(r.URL.Path, root+"/")
	max := h.MaxRequestBytes
	if max <= 0 {
		max = DefaultMaxRequestBytes
	}
	req, err := readReview(r.Body, r.ContentLength, max)
	if err == nil {
		var out *reviewResult
		out, err = h.review(r, req, id, logger)
		if err == nil {
			data, merr := json.Marshal(response(req, out.allowed, out.status, out.warnings, out.patch))
			if merr != nil { // never: the response is ours, of plain types
				err = &badRequest{http.StatusInternalServerError, fmt.Sprintf("encoding the admission response: %v", merr)}
			} else {
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write(data)
				return
			}
		}
	}
	var bad *badRequest
	if !errors.As(err, &bad) {
		bad = &badRequest{http.StatusInternalServerError, err.Error()}
	}
	logger.Error(fmt.Sprintf("Admission request to %s refused: %s", r.URL.Path, bad.msg))
	http.Error(w, bad.msg, bad.status)
}

// reviewResult is what the handlers decided.
type reviewResult struct {
	allowed  bool
	status   *responseStatus
	warnings []string
	patch    []byte
}

// review runs the handlers of one request.
func (h *Handler) review(r *http.Request, req *request, id string, logger *slog.Logger) (*reviewResult, error) {
	ar := req.review.Request
	res := h.resource(ar.Resource.Group, ar.Resource.Version, ar.Resource.Resource, ar.Kind.Kind)
	selected, err := h.selectHandlers(res, req, id)
	if err != nil {
		return nil, err
	}
	b := req.object
	if b == nil {
		b = req.old
	}
	patch := patches.New()
	var warnings []string
	objLogger := logging.ForObject(logger, objectRef(ar.Namespace, ar.Name, b))
	kw := h.kwargs(r, req, res, b, patch, &warnings, objLogger)
	timeout := h.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(r.Context(), timeout)
	defer cancel()
	if h.Context != nil {
		ctx = h.Context(ctx)
	}
	errs, mutated := invoke(ctx, selected, kw, objLogger)
	out := &reviewResult{allowed: len(errs) == 0, warnings: warnings}
	if len(errs) > 0 {
		out.status = statusOf(errs)
	}
	if mutated && !patch.IsEmpty() {
		if err := out.setPatch(b, patch, objLogger); err != nil {
			return nil, err
		}
	}
	if !out.allowed {
		out.patch = nil
	}
	return out, nil
}

// selectHandlers returns the handlers (all, or the one of the URL's id) that
// serve the request's resource and admit its operation; none serving the
// resource at all is a 404.
func (h *Handler) selectHandlers(res resources.Resource, req *request, id string) ([]*registry.WebhookHandler, error) {
	ar := req.review.Request
	var selected []*registry.WebhookHandler
	known := false
	for _, wh := range h.Registry.WebhookHandlers("") {
		if (id != "" && wh.ID != id) || !wh.Selector.Matches(res) {
			continue
		}
		known = true
		if wh.Admits(string(ar.Operation), ar.SubResource) {
			selected = append(selected, wh)
		}
	}
	if !known {
		what := fmt.Sprintf("%s/%s %s", ar.Resource.Group, ar.Resource.Version, ar.Resource.Resource)
		if id != "" {
			return nil, &badRequest{http.StatusNotFound, fmt.Sprintf("No webhook handler %q serves the resource %s.", id, what)}
		}
		return nil, &badRequest{http.StatusNotFound, fmt.Sprintf("The specified resource has no handlers: %s", what)}
	}
	return selected, nil
}

// kwargs are what the handlers receive. User code gets copies: the patch
// is computed against b as received, whatever handlers do to their body.
func (h *Handler) kwargs(r *http.Request, req *request, res resources.Resource, b body.Body, patch patches.Patch, warnings *[]string, objLogger *slog.Logger) *kwargs.Admission {
	ar := req.review.Request
	memo := kwargs.Memo{}
	maps.Copy(memo, h.Memo)
	userBody, userOld, userNew := b.DeepCopy(), req.old, req.object
	if req.object != nil {
		userNew = userBody
		if req.old != nil {
			userOld = req.old.DeepCopy()
		}
	} else {
		userOld = userBody
	}
	kw := &kwargs.Admission{
		Base:        kwargs.FromBody(res, userBody, patch, objLogger, memo),
		DryRun:      ar.DryRun != nil && *ar.DryRun,
		Headers:     headers(r.Header),
		SSLPeer:     sslPeer(r),
		UserInfo:    ar.UserInfo,
		Warnings:    warnings,
		Operation:   string(ar.Operation),
		Subresource: ar.SubResource,
		Old:         userOld,
		New:         userNew,
	}
	kw.Diff = diffs.Compute(nilIfEmpty(req.old), nilIfEmpty(req.object))
	kw.ShareDecoded()
	return kw
}

// invoke calls the selected handlers whose filters match, one after
// another, with Kopf's log lines; it returns their errors and whether a
// mutating handler ran.
func invoke(ctx context.Context, selected []*registry.WebhookHandler, kw *kwargs.Admission, objLogger *slog.Logger) ([]error, bool) {
	var errs []error
	mutated := false
	for _, wh := range selected {
		hk := *kw
		hk.Param = wh.Param
		if !matches(wh, &hk) {
			continue
		}
		name := fmt.Sprintf("Webhook '%s'", wh.ID)
		objLogger.Debug(name + " is invoked.")
		err := call(ctx, func() error { return wh.Fn(ctx, &hk) })
		if wh.Kind == registry.WebhookMutating {
			mutated = true
		}
		if err == nil {
			objLogger.Info(name + " succeeded.")
			continue
		}
		var tmp *execution.TemporaryError
		if errors.As(err, &tmp) {
			objLogger.Error(fmt.Sprintf("%s failed temporarily: %s", name, err))
		} else {
			objLogger.Error(fmt.Sprintf("%s failed permanently: %s", name, err))
		}
		execution.LogPanicStack(objLogger, err)
		errs = append(errs, err)
	}
	return errs, mutated
}

// setPatch encodes the handlers' patch of b as the response's JSON
// patch; one that cannot be encoded refuses the request rather than
// admit it without the mutation.
func (out *reviewResult) setPatch(b body.Body, patch patches.Patch, objLogger *slog.Logger) error {
	ops, err := jsonPatch(b, patch)
	if err != nil {
		objLogger.Error(fmt.Sprintf("The mutation cannot be encoded: %s", err))
		out.allowed = false
		if out.status == nil {
			out.status = &responseStatus{Message: fmt.Sprintf("The mutation cannot be encoded: %s", err), Code: http.StatusInternalServerError}
		}
		return nil
	}
	out.patch, err = encodePatch(ops)
	return err
}

// call runs fn through execution.Guard; if ctx is done first, it returns
// at once, leaving fn to finish on its own.
func call(ctx context.Context, fn func() error) error {
	done := make(chan error, 1)
	go func() {
		_, err := execution.Guard(func() (struct{}, error) { return struct{}{}, fn() })
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return &Error{Message: "The admission request has timed out.", Code: http.StatusGatewayTimeout}
	}
}

// matches checks the handler's filters and when= (user code, guarded: a
// panicking callback does not match, as for other handlers).
func matches(wh *registry.WebhookHandler, kw *kwargs.Admission) bool {
	ok, err := execution.Guard(func() (bool, error) {
		if !wh.Filter.MatchMeta(&kw.Base) {
			return false, nil
		}
		if wh.Field != nil {
			v, present := lookup(map[string]any(kw.Body), wh.Field)
			if !wh.Filter.MatchValues(nil, false, v, present, false, &kw.Base) {
				return false, nil
			}
		} else if !wh.Filter.MatchValues(nil, false, nil, false, false, &kw.Base) {
			return false, nil
		}
		if wh.When != nil && !wh.When(kw) {
			return false, nil
		}
		return true, nil
	})
	if err != nil {
		kw.Logger.Error(fmt.Sprintf("The filters of webhook '%s' failed: %s", wh.ID, err))
		execution.LogPanicStack(kw.Logger, err)
		return false
	}
	return ok
}

// statusOf picks the error reported to the API server (Kopf's order:
// AdmissionError, PermanentError, TemporaryError, any other).
func statusOf(errs []error) *responseStatus {
	rank := func(err error) int {
		var ae *Error
		var pe *execution.PermanentError
		var te *execution.TemporaryError
		switch {
		case errors.As(err, &ae):
			return 0
		case errors.As(err, &pe):
			return 1
		case errors.As(err, &te):
			return 2
		}
		return 9
	}
	best := errs[0]
	for _, err := range errs[1:] {
		if rank(err) < rank(best) {
			best = err
		}
	}
	st := &responseStatus{Message: best.Error(), Code: http.StatusInternalServerError}
	var ae *Error
	if errors.As(best, &ae) {
		st.Code = ae.StatusCode()
	}
	if st.Message == "" {
		st.Message = fmt.Sprintf("%T", best)
	}
	return st
}

func lookup(m map[string]any, path []string) (any, bool) {
	var cur any = m
	for _, k := range path {
		mm, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = mm[k]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// resource returns the resolved resource of a request.
func (h *Handler) resource(group, version, plural, kind string) resources.Resource {
	if h.Resources != nil {
		for _, r := range h.Resources() {
			if r.Group == group && r.Version == version && r.Plural == plural {
				return r
			}
		}
	}
	return resources.Resource{Group: group, Version: version, Plural: plural, Kind: kind}
}

func objectRef(namespace, name string, b body.Body) string {
	if name == "" {
		name = b.Meta().Name()
	}
	if name == "" {
		if gn, _ := b.Meta()["generateName"].(string); gn != "" {
			name = gn + "*"
		}
	}
	if namespace != "" {
		return namespace + "/" + name
	}
	return name
}

func nilIfEmpty(b body.Body) any {
	if b == nil {
		return nil
	}
	return map[string]any(b)
}

// headers gives the first value of each header, as Kopf's dict(headers).
func headers(h http.Header) map[string]string {
	out := make(map[string]string, len(h))
	for k, vs := range h {
		if len(vs) > 0 {
			out[k] = vs[0]
		}
	}
	return out
}

// sslPeer describes the client's certificate, if any (Kopf's sslpeer, in
// the spirit of Python's SSLSocket.getpeercert()).
func sslPeer(r *http.Request) map[string]any {
	out := map[string]any{}
	if r.TLS == nil || len(r.TLS.PeerCertificates) == 0 {
		return out
	}
	c := r.TLS.PeerCertificates[0]
	out["subject"] = names(c.Subject.ToRDNSequence())
	out["issuer"] = names(c.Issuer.ToRDNSequence())
	out["serialNumber"] = strings.ToUpper(c.SerialNumber.Text(16))
	out["notBefore"] = c.NotBefore.UTC().Format(time.RFC3339)
	out["notAfter"] = c.NotAfter.UTC().Format(time.RFC3339)
	var sans [][2]string
	for _, d := range c.DNSNames {
		sans = append(sans, [2]string{"DNS", d})
	}
	for _, ip := range c.IPAddresses {
		sans = append(sans, [2]string{"IP Address", ip.String()})
	}
	out["subjectAltName"] = sans
	out["certificate"] = c
	return out
}

// oidNames are Python's ssl names of the usual attributes of a
// certificate's subject and issuer.
var oidNames = map[string]string{
	"2.5.4.3": "commonName", "2.5.4.5": "serialNumber", "2.5.4.6": "countryName", "2.5.4.7": "localityName",
	"2.5.4.8": "stateOrProvinceName", "2.5.4.9": "streetAddress", "2.5.4.10": "organizationName",
	"2.5.4.11": "organizationalUnitName", "1.2.840.113549.1.9.1": "emailAddress",
}

// names renders a distinguished name as Python's getpeercert() does: a
// list of relative distinguished names, each a list of (name, value)
// pairs, e.g. [[["commonName", "kube-apiserver"]]].
func names(rdns pkix.RDNSequence) [][][2]string {
	out := [][][2]string{}
	for _, rdn := range rdns {
		var pairs [][2]string
		for _, a := range rdn {
			name, ok := oidNames[a.Type.String()]
			if !ok {
				name = a.Type.String()
			}
			pairs = append(pairs, [2]string{name, fmt.Sprint(a.Value)})
		}
		out = append(out, pairs)
	}
	return out
}
