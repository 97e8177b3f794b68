package admission

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"sync"

	admissionv1 "k8s.io/api/admission/v1"
	admissionregv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/kopf-go/kopf/runtime/patches"
	"github.com/kopf-go/kopf/runtime/resources"
)

// StampID names the operator's own mutating webhook of a Stamp: it is
// served at <root>/<StampID> and named "<StampID>.<managed>" in the
// managed MutatingWebhookConfiguration. A webhook handler of this id is
// refused at start when a Stamp is configured.
const StampID = "kopf-bucket-stamp"

// StampTimeout is the stamp's timeoutSeconds: the stamp answers at once,
// and a creation should not wait long for an operator that is down (its
// failurePolicy is Ignore).
const StampTimeout = 5

// Stamp is a label that the operator's own mutating webhook writes onto
// every object of some resources at its creation (sharding's bucket
// label, docs/sharding.md), whatever the handlers: its entry in the
// managed MutatingWebhookConfiguration is its own, after the handlers'
// webhooks, and
//
//   - is called for CREATE of the resources that Resources holds now
//     (rules of group, version and plural, matchPolicy Equivalent), in the
//     namespaces Namespaces lists (a namespaceSelector), in all if nil;
//   - never refuses and never fails a creation: failurePolicy Ignore (an
//     operator that is down or unreachable lets the object through
//     unlabelled, the caller's fallback labels it), timeoutSeconds
//     StampTimeout, sideEffects None, reinvocationPolicy IfNeeded (the
//     stamp is written again if a later webhook changed the object);
//   - answers a JSON patch that sets the label Label computes from the
//     request's namespace and the object's name (the key escaped per RFC
//     6901, the labels map added if there is none), or nothing if the
//     label is already right, if the object has no name yet (generateName:
//     the API server generates the name after the mutating webhooks), or
//     if Serves says the namespace is not served.
//
// It is written only with managed configurations (settings.Admission.Managed),
// and left out of what the last replica leaves at exit (it is not
// persistent). Where RBAC does not allow the MutatingWebhookConfiguration
// (an operator without mutating handlers whose Role lacks it), the stamp
// is left out with a warning, and the operator runs on.
type Stamp struct {
	// Label returns the label's key and value of the object name in
	// namespace ("" if cluster-scoped).
	Label func(namespace, name string) (key, value string)
	// Namespaces, if not nil, are the only namespaces whose objects are
	// sent to the stamp (a namespaceSelector on kubernetes.io/metadata.name).
	Namespaces []string
	// Serves, if set, says whether the objects of a namespace are
	// stamped; the others are admitted unchanged.
	Serves func(namespace string) bool

	mu        sync.Mutex
	resources []resources.Resource
	changed   func() // the manager's poke, once it runs
}

// Add adds a resource whose objects are stamped from now on; the managed
// configuration is written again.
func (s *Stamp) Add(r resources.Resource) {
	s.mu.Lock()
	if slices.ContainsFunc(s.resources, func(x resources.Resource) bool {
		return x.Group == r.Group && x.Version == r.Version && x.Plural == r.Plural
	}) {
		s.mu.Unlock()
		return
	}
	s.resources = append(s.resources, r)
	changed := s.changed
	s.mu.Unlock()
	if changed != nil {
		changed()
	}
}

// Resources are the resources stamped now.
func (s *Stamp) Resources() []resources.Resource {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.resources)
}

// onChange sets what Add calls.
func (s *Stamp) onChange(fn func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.changed = fn
}

// webhook is the stamp's entry of the managed configuration named
// suffix; nil while there are no resources.
func (s *Stamp) webhook(suffix string, cc admissionregv1.WebhookClientConfig) *admissionregv1.MutatingWebhook {
	res := s.Resources()
	if len(res) == 0 {
		return nil
	}
	var rules []admissionregv1.RuleWithOperations
	for _, r := range res {
		rules = append(rules, admissionregv1.RuleWithOperations{
			Operations: []admissionregv1.OperationType{admissionregv1.Create},
			Rule: admissionregv1.Rule{
				APIGroups:   []string{r.Group},
				APIVersions: []string{r.Version},
				Resources:   []string{r.Plural},
				Scope:       ptr.To(admissionregv1.AllScopes),
			},
		})
	}
	var namespaces *metav1.LabelSelector
	if s.Namespaces != nil {
		namespaces = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
			Key: "kubernetes.io/metadata.name", Operator: metav1.LabelSelectorOpIn, Values: slices.Sorted(slices.Values(s.Namespaces)),
		}}}
	}
	return &admissionregv1.MutatingWebhook{
		Name:                    webhookName(StampID, suffix),
		ClientConfig:            withHandlerID(cc, StampID),
		Rules:                   rules,
		FailurePolicy:           ptr.To(admissionregv1.Ignore),
		MatchPolicy:             ptr.To(admissionregv1.Equivalent),
		NamespaceSelector:       namespaces,
		SideEffects:             ptr.To(admissionregv1.SideEffectClassNone),
		TimeoutSeconds:          ptr.To[int32](StampTimeout),
		AdmissionReviewVersions: []string{"v1"},
		ReinvocationPolicy:      ptr.To(admissionregv1.IfNeededReinvocationPolicy),
	}
}

// stampHandler serves the stamp's AdmissionReviews: always allowed, with
// the label's patch if the object needs it.
type stampHandler struct {
	stamp  *Stamp
	logger *slog.Logger
	max    int64
}

func (h *stampHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "admission requests are POSTed", http.StatusMethodNotAllowed)
		return
	}
	req, err := readReview(r.Body, r.ContentLength, h.max)
	if err != nil {
		var bad *badRequest
		if !errors.As(err, &bad) {
			bad = &badRequest{http.StatusBadRequest, err.Error()}
		}
		h.logger.Error(fmt.Sprintf("Admission request to %s refused: %s", r.URL.Path, bad.msg))
		http.Error(w, bad.msg, bad.status)
		return
	}
	patch, err := h.patch(req)
	if err != nil { // never refused: admitted unlabelled, the labeller labels it
		h.logger.Error(fmt.Sprintf("The bucket label cannot be stamped: %s", err))
	}
	data, err := json.Marshal(response(req, true, nil, nil, patch))
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(data)
}

// patch is the JSON patch that stamps the request's object; nil if none
// is needed or possible.
func (h *stampHandler) patch(req *request) ([]byte, error) {
	ar := req.review.Request
	if ar.Operation != admissionv1.Create || req.object == nil {
		return nil, nil
	}
	name := req.object.Meta().Name()
	if name == "" {
		name = ar.Name
	}
	if name == "" || (h.stamp.Serves != nil && !h.stamp.Serves(ar.Namespace)) {
		return nil, nil // generateName: no name to hash before the API server makes it
	}
	key, value := h.stamp.Label(ar.Namespace, name)
	ops, err := jsonPatch(req.object, patches.Patch{"metadata": map[string]any{"labels": map[string]any{key: value}}})
	if err != nil {
		return nil, err
	}
	return encodePatch(ops)
}
