package conversion

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kopf-go/kopf/runtime/execution"
	"github.com/kopf-go/kopf/runtime/logging"
	"github.com/kopf-go/kopf/runtime/registry"
)

// Path is the last element of the conversion webhook's URL path, under
// the admission server's root: <root>/convert.
const Path = "convert"

// DefaultTimeout bounds the conversions of one review: 30 s, the most an
// API server waits for a conversion webhook.
const DefaultTimeout = 30 * time.Second

// Handler answers the API server's ConversionReviews with the
// conversions of a registry (see the package doc). It is safe for
// concurrent use; it serves plain HTTP, so it is mounted in the admission
// server's HTTPS server.
type Handler struct {
	Registry *registry.Registry
	Logger   *slog.Logger
	// Context, if set, derives the context of the conversions from the
	// request's (the operator adds its clients).
	Context func(context.Context) context.Context
	// Timeout bounds the conversions of a review (0: DefaultTimeout):
	// their context is cancelled then.
	Timeout time.Duration
	// MaxRequestBytes bounds a review's body (0: DefaultMaxRequestBytes).
	MaxRequestBytes int64
}

// ServeHTTP serves one ConversionReview.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	logger := h.logger()
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "conversion reviews are POSTed", http.StatusMethodNotAllowed)
		return
	}
	max := h.MaxRequestBytes
	if max <= 0 {
		max = DefaultMaxRequestBytes
	}
	req, err := readReview(r.Body, max)
	if err != nil {
		bad := err.(*badRequest)
		logger.Error(fmt.Sprintf("Conversion request to %s refused: %s", r.URL.Path, bad.msg))
		http.Error(w, bad.msg, bad.status)
		return
	}
	timeout := h.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(r.Context(), timeout)
	defer cancel()
	if h.Context != nil {
		ctx = h.Context(ctx)
	}
	converted, failure := h.Convert(ctx, req.desired, req.objects)
	data, err := encodeResponse(req, converted, failure)
	if err != nil {
		logger.Error(fmt.Sprintf("Conversion request to %s failed: %s", r.URL.Path, err))
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(data)
}

func (h *Handler) logger() *slog.Logger {
	if h.Logger == nil {
		return slog.Default()
	}
	return h.Logger
}

// Convert converts every object to the desired apiVersion (group/version)
// and returns them in their order, or the first failure (logged at
// ERROR). An object already of the desired version is returned as it is.
func (h *Handler) Convert(ctx context.Context, desired string, objects []map[string]any) ([]map[string]any, error) {
	out := make([]map[string]any, 0, len(objects))
	for _, obj := range objects {
		res, err := h.convertOne(ctx, desired, obj)
		if err != nil {
			ref := objectRef(obj)
			logging.ForObject(h.logger(), ref).Error(err.Error())
			execution.LogPanicStack(h.logger(), err)
			return nil, err
		}
		out = append(out, res)
	}
	return out, nil
}

// convertOne converts one object through the hub of its kind.
func (h *Handler) convertOne(ctx context.Context, desired string, obj map[string]any) (map[string]any, error) {
	from, _ := obj["apiVersion"].(string)
	kind, _ := obj["kind"].(string)
	fail := func(format string, args ...any) error {
		return &Error{Kind: kind, Object: objectRef(obj), From: from, To: desired, Reason: fmt.Sprintf(format, args...)}
	}
	if from == desired {
		return obj, nil
	}
	fromGV, err1 := schema.ParseGroupVersion(from)
	toGV, err2 := schema.ParseGroupVersion(desired)
	switch {
	case from == "" || kind == "" || err1 != nil:
		return nil, fail("the object has no valid apiVersion and kind")
	case err2 != nil:
		return nil, fail("the desired apiVersion is not valid")
	case fromGV.Group != toGV.Group:
		return nil, fail("the groups differ")
	}
	steps, err := h.route(fromGV.Group, kind, fromGV.Version, toGV.Version)
	if err != nil {
		return nil, fail("%s", err)
	}
	cur := obj
	for _, s := range steps {
		next, err := execution.Guard(func() (map[string]any, error) { return s.fn(ctx, cloneJSON(cur).(map[string]any)) })
		if err != nil {
			e := fail("%s", err).(*Error)
			e.Err = err
			return nil, e
		}
		if next, err = finish(cur, next, schema.GroupVersion{Group: fromGV.Group, Version: s.to}.String(), kind); err != nil {
			return nil, fail("%s", err)
		}
		cur = next
	}
	return cur, nil
}

// step is one conversion of a route: its function and the version it
// converts to.
type step struct {
	fn ConversionFn
	to string
}

// ConversionFn is registry.ConversionFn.
type ConversionFn = registry.ConversionFn

// route returns the conversions from one version of a kind to another:
// through the hub.
func (h *Handler) route(group, kind, from, to string) ([]step, error) {
	var hub string
	spokes := map[string]*registry.Conversion{}
	for _, c := range h.Registry.Conversions() {
		if c.Group == group && c.Kind == kind {
			hub = c.Hub
			spokes[c.Spoke] = c
		}
	}
	if hub == "" {
		return nil, fmt.Errorf("the operator has no conversions of %s.%s", kind, group)
	}
	var steps []step
	if from != hub {
		c, ok := spokes[from]
		if !ok {
			return nil, fmt.Errorf("the operator has no conversion from %s (the hub is %s)", from, hub)
		}
		steps = append(steps, step{c.ToHub, hub})
	}
	if to != hub {
		c, ok := spokes[to]
		if !ok {
			return nil, fmt.Errorf("the operator has no conversion to %s (the hub is %s)", to, hub)
		}
		steps = append(steps, step{c.FromHub, to})
	}
	return steps, nil
}

// finish sets the result's apiVersion and kind, gives it the object's
// metadata if it has none, and refuses it if its metadata changed other
// than in labels and annotations.
func finish(obj, res map[string]any, apiVersion, kind string) (map[string]any, error) {
	if res == nil {
		return nil, fmt.Errorf("the conversion returned no object")
	}
	res["apiVersion"] = apiVersion
	res["kind"] = kind
	meta, ok := res["metadata"]
	if !ok || meta == nil {
		res["metadata"] = cloneJSON(obj["metadata"])
		return res, nil
	}
	if field := changedMeta(obj["metadata"], meta); field != "" {
		return nil, fmt.Errorf("the conversion changed metadata.%s (only labels and annotations may change)", field)
	}
	return res, nil
}

// changedMeta returns the first field of metadata, other than labels and
// annotations, that differs between before and after ("" if none); an
// empty value is the same as none.
func changedMeta(before, after any) string {
	b, _ := before.(map[string]any)
	a, ok := after.(map[string]any)
	if !ok {
		return "(the whole)"
	}
	keys := map[string]bool{}
	for k := range b {
		keys[k] = true
	}
	for k := range a {
		keys[k] = true
	}
	var changed []string
	for k := range keys {
		if k == "labels" || k == "annotations" {
			continue
		}
		if !reflect.DeepEqual(nonEmpty(b[k]), nonEmpty(a[k])) {
			changed = append(changed, k)
		}
	}
	if len(changed) == 0 {
		return ""
	}
	slices.Sort(changed)
	return strings.Join(changed, ", metadata.")
}
