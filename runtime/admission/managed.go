package admission

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"log/slog"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	admissionregv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	admissionregv1ac "k8s.io/client-go/applyconfigurations/admissionregistration/v1"
	admissionregv1client "k8s.io/client-go/kubernetes/typed/admissionregistration/v1"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/utils/ptr"

	"github.com/kopf-go/kopf/runtime/filters"
	"github.com/kopf-go/kopf/runtime/leases"
	"github.com/kopf-go/kopf/runtime/registry"
	"github.com/kopf-go/kopf/runtime/resources"
	"github.com/kopf-go/kopf/runtime/settings"
)

// replicaLabel marks the leases of the replicas serving managed
// configurations; its value is the configurations' name.
const replicaLabel = "kopf.dev/admission-managed"

// manager keeps the managed ValidatingWebhookConfiguration and
// MutatingWebhookConfiguration (Kopf's configuration_manager): one webhook
// per handler, written by server-side apply (the API server writes only
// what differs from what the handlers call for), and reduced to the persistent handlers' webhooks at
// exit by the last replica.
//
// Replicas: each replica holds a Lease of its own (runtime/leases: named
// "<name>.<hash of its identity>", labelled
// kopf.dev/admission-managed=<name>, in the certificate's namespace),
// renewed every leases.DefaultRetryPeriod and valid for
// leases.DefaultDuration; at each renewal it observes the others' Leases.
// At exit, a replica deletes its Lease and cleans the configurations up
// only if no other replica's Lease is live by runtime/leases' rule (seen
// to change within its duration on this replica's clock; one seen for
// the first time is live). Two replicas exiting at once may both see the
// other and both keep the webhooks, as may a replica that exits within a
// Lease duration of a replica's crash: the error is on the side of
// keeping them (the next replica to start takes them over; with
// IgnoreFailures the API server admits meanwhile).
type manager struct {
	name         string
	registry     *registry.Registry
	configs      admissionregv1client.AdmissionregistrationV1Interface
	leases       coordinationv1client.LeasesGetter
	namespace    string
	identity     string // leases.DetectOwnID or the peering identity
	discover     func(ctx context.Context) ([]resources.Resource, error)
	clientConfig func() admissionregv1.WebhookClientConfig
	interval     time.Duration
	logger       *slog.Logger
	wake         chan struct{}
	onFound      func([]resources.Resource)
	found        []resources.Resource
	stamp        *Stamp // nil: none
	stampDenied  bool   // RBAC refused the stamp's configuration (said once)

	timing   leases.Timing   // runtime/leases' defaults
	lease    *leases.Held    // this replica's
	observer leases.Observer // the others'
}

// poke asks for the configurations to be checked again (a new CA bundle).
func (m *manager) poke() {
	select {
	case m.wake <- struct{}{}:
	default:
	}
}

// start takes this replica's lease and applies the configurations once.
func (m *manager) start(ctx context.Context) error {
	m.timing = leases.Timing{}.Defaulted()
	h := fnv.New32a()
	_, _ = h.Write([]byte(m.identity))
	m.lease = &leases.Held{
		Writer: leases.Writer{Leases: m.leases.Leases(m.namespace), Identity: m.identity, Duration: m.timing.Duration},
		Name:   fmt.Sprintf("%s.%08x", m.name, h.Sum32()),
		Labels: map[string]string{replicaLabel: m.name},
	}
	if err := m.renewLease(ctx); apierrors.IsForbidden(err) {
		return fmt.Errorf("taking the lease of the admission webhooks %s: %w", m.name, err)
	} else if err != nil {
		m.logger.Error(fmt.Sprintf("The lease of the admission webhooks %s cannot be taken yet: %s", m.name, err))
	}
	// Not allowed to: the operator cannot work as configured (Kopf's
	// manager fails the operator too). Anything else is retried every
	// interval.
	err := m.apply(ctx)
	if apierrors.IsForbidden(err) {
		m.logger.Error(fmt.Sprintf("Not enough RBAC permissions to manage the admission webhooks %s: %s", m.name, err))
		return err
	}
	if err != nil {
		m.logger.Error(fmt.Sprintf("The admission webhooks %s cannot be configured: %s", m.name, err))
	}
	return nil
}

// run keeps the configurations and the Lease until ctx is done, then
// cleans up.
func (m *manager) run(ctx context.Context) {
	check := time.NewTicker(m.interval)
	defer check.Stop()
	renew := time.NewTicker(m.timing.RetryPeriod)
	defer renew.Stop()
	for {
		select {
		case <-ctx.Done():
			m.cleanup(context.WithoutCancel(ctx))
			return
		case <-renew.C:
			if err := m.renewLease(ctx); err != nil && ctx.Err() == nil {
				m.logger.Error(fmt.Sprintf("The lease of the admission webhooks %s cannot be renewed: %s", m.name, err))
			}
			continue
		case <-check.C:
		case <-m.wake:
		}
		if err := m.apply(ctx); err != nil && ctx.Err() == nil {
			m.logger.Error(fmt.Sprintf("The admission webhooks %s cannot be configured: %s", m.name, err))
		}
	}
}

// renewLease renews this replica's Lease and observes the others'.
func (m *manager) renewLease(ctx context.Context) error {
	if err := m.lease.Renew(ctx); err != nil {
		return err
	}
	_, err := m.othersAlive(ctx)
	return err
}

// othersAlive observes the replicas' Leases and reports whether another
// replica's is live.
func (m *manager) othersAlive(ctx context.Context) (bool, error) {
	list, err := m.leases.Leases(m.namespace).List(ctx, metav1.ListOptions{LabelSelector: replicaLabel + "=" + m.name})
	if err != nil {
		return false, fmt.Errorf("listing the replicas' Leases: %w", err)
	}
	alive := false
	seen := map[string]bool{}
	for i := range list.Items {
		l := &list.Items[i]
		seen[leases.Key(l)] = true
		if l.Name != m.lease.Name && m.observer.Live(l, m.timing.Duration) {
			alive = true
		}
	}
	m.observer.Forget(seen)
	return alive, nil
}

// cleanup releases the Lease and, if no other replica lives, leaves only
// the persistent handlers' webhooks (Kopf's cleanup at exit).
func (m *manager) cleanup(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := m.lease.Delete(ctx); err != nil {
		m.logger.Warn(fmt.Sprintf("The lease of the admission webhooks %s cannot be released: %s", m.name, err))
	}
	alive, err := m.othersAlive(ctx)
	if err != nil {
		m.logger.Error(fmt.Sprintf("The admission webhooks %s are left as they are: the other replicas cannot be counted: %s", m.name, err))
		return
	}
	if alive {
		m.logger.Info(fmt.Sprintf("Keeping the admission webhook %s: other replicas serve it.", m.name))
		return
	}
	m.logger.Info(fmt.Sprintf("Cleaning up the admission webhook %s.", m.name))
	if err := m.reconcile(ctx, true); err != nil {
		m.logger.Error(fmt.Sprintf("The admission webhooks %s cannot be cleaned up: %s", m.name, err))
	}
}

// apply makes both configurations hold what the handlers call for.
func (m *manager) apply(ctx context.Context) error {
	if m.discover != nil {
		found, err := m.discover(ctx)
		if err != nil {
			return fmt.Errorf("discovering the resources: %w", err)
		}
		m.found = found
		if m.onFound != nil {
			m.onFound(found)
		}
	}
	return m.reconcile(ctx, false)
}

// reconcile applies both configurations (only the persistent handlers'
// webhooks at the last replica's exit).
func (m *manager) reconcile(ctx context.Context, persistentOnly bool) error {
	cc := m.clientConfig()
	if len(cc.CABundle) == 0 {
		return nil // no certificate yet: configured once there is one
	}
	if hs := m.registry.WebhookHandlers(registry.WebhookValidating); len(hs) > 0 {
		want := buildWebhooks(hs, m.found, m.name, cc, persistentOnly)
		ac := admissionregv1ac.ValidatingWebhookConfiguration(m.name)
		if err := recode(want, &ac.Webhooks); err != nil {
			return err
		}
		api := m.configs.ValidatingWebhookConfigurations()
		out, err := applyConfig(ctx, m, "validating", api, ac)
		if err != nil {
			return err
		}
		if err := prune(ctx, api, out, &out.Webhooks, func(w admissionregv1.ValidatingWebhook) string { return w.Name }, webhookNames(want)); err != nil {
			return err
		}
	}
	return m.reconcileMutating(ctx, cc, persistentOnly)
}

// reconcileMutating applies the mutating configuration: the mutating
// handlers' webhooks, then the Stamp's (not at the last replica's exit).
// Where RBAC refuses it and it holds the stamp alone (no mutating
// handlers, whose RBAC the generated Role has), the stamp is left out
// with a warning, once: the labeller labels the new objects.
func (m *manager) reconcileMutating(ctx context.Context, cc admissionregv1.WebhookClientConfig, persistentOnly bool) error {
	hs := m.registry.WebhookHandlers(registry.WebhookMutating)
	if len(hs) == 0 && (m.stamp == nil || m.stampDenied) {
		return nil
	}
	want := buildWebhooks(hs, m.found, m.name, cc, persistentOnly)
	ac := admissionregv1ac.MutatingWebhookConfiguration(m.name)
	if err := recode(want, &ac.Webhooks); err != nil {
		return err
	}
	for i := range ac.Webhooks {
		ac.Webhooks[i].WithReinvocationPolicy(admissionregv1.NeverReinvocationPolicy)
	}
	names := webhookNames(want)
	if m.stamp != nil && !persistentOnly {
		if w := m.stamp.webhook(m.name, cc); w != nil {
			var stamp admissionregv1ac.MutatingWebhookApplyConfiguration
			if err := recodeAs(w, &stamp); err != nil {
				return err
			}
			ac.WithWebhooks(&stamp)
			names[w.Name] = true
		}
	}
	api := m.configs.MutatingWebhookConfigurations()
	out, err := applyConfig(ctx, m, "mutating", api, ac)
	if apierrors.IsForbidden(err) && len(hs) == 0 {
		m.stampDenied = true
		m.logger.Warn(fmt.Sprintf("The bucket label is not stamped at creation: RBAC does not allow the mutating webhook configuration %s (the labeller labels the new objects): %s", m.name, err))
		return nil
	}
	if err != nil {
		return err
	}
	return prune(ctx, api, out, &out.Webhooks, func(w admissionregv1.MutatingWebhook) string { return w.Name }, names)
}

// webhookNames are the webhooks' names.
func webhookNames(ws []admissionregv1.ValidatingWebhook) map[string]bool {
	out := map[string]bool{}
	for _, w := range ws {
		out[w.Name] = true
	}
	return out
}

// prune removes from a configuration as applied (cfg, whose webhooks are
// *webhooks) the webhooks that kopf did not apply now but another field
// manager wrote (a kopf-go before server-side apply wrote them by update):
// the configuration holds the handlers' webhooks only. An update guarded
// by the resourceVersion; a conflict is retried at the next check.
func prune[T, W any](ctx context.Context, api interface {
	Update(ctx context.Context, cfg T, opts metav1.UpdateOptions) (T, error)
}, cfg T, webhooks *[]W, name func(W) string, keep map[string]bool) error {
	kept := slices.DeleteFunc(slices.Clone(*webhooks), func(w W) bool { return !keep[name(w)] })
	if len(kept) == len(*webhooks) {
		return nil
	}
	*webhooks = kept
	if _, err := api.Update(ctx, cfg, metav1.UpdateOptions{FieldManager: fieldManager}); err != nil {
		return fmt.Errorf("removing the webhooks of other field managers: %w", err)
	}
	return nil
}

// fieldManager is the operator's name as the owner of the fields of the
// managed configurations: the one that handlers' applies have by default.
const fieldManager = settings.FieldManager

// configAPI is the client of one kind of webhook configuration.
type configAPI[T interface{ GetResourceVersion() string }, AC any] interface {
	Get(ctx context.Context, name string, opts metav1.GetOptions) (T, error)
	Apply(ctx context.Context, cfg *AC, opts metav1.ApplyOptions) (T, error)
}

// applyConfig writes a configuration by server-side apply as the field
// manager "kopf", owning every field it sets (Force): the API server
// defaults what is applied and compares it with what is stored, and
// writes only if they differ, so an unchanged configuration keeps its
// resourceVersion (Kopf #889) and nothing is compared here. The webhooks
// are a list keyed by name: those kopf applied before and not now go.
// "Reconfiguring" is logged when the resourceVersion changed.
func applyConfig[T interface{ GetResourceVersion() string }, AC any](ctx context.Context, m *manager, kind string, api configAPI[T, AC], ac *AC) (T, error) {
	var zero T
	before := ""
	cur, err := api.Get(ctx, m.name, metav1.GetOptions{})
	switch {
	case err == nil:
		before = cur.GetResourceVersion()
	case !apierrors.IsNotFound(err):
		return zero, fmt.Errorf("reading the %s webhook configuration %s: %w", kind, m.name, err)
	}
	out, err := api.Apply(ctx, ac, metav1.ApplyOptions{FieldManager: fieldManager, Force: true})
	if err != nil {
		return zero, fmt.Errorf("applying the %s webhook configuration %s: %w", kind, m.name, err)
	}
	if out.GetResourceVersion() != before {
		m.logger.Info(fmt.Sprintf("Reconfiguring the %s webhook %s.", kind, m.name))
	}
	return out, nil
}

// recode converts the webhooks as built into their apply configurations
// (the same JSON).
func recode(webhooks []admissionregv1.ValidatingWebhook, into any) error {
	return recodeAs(webhooks, into)
}

// recodeAs converts a value into another of the same JSON.
func recodeAs(from, into any) error {
	data, err := json.Marshal(from)
	if err != nil {
		return fmt.Errorf("encoding the webhooks: %w", err)
	}
	if err := json.Unmarshal(data, into); err != nil {
		return fmt.Errorf("decoding the webhooks' apply configurations: %w", err)
	}
	return nil
}

// buildWebhooks is Kopf's build_webhooks: one webhook per handler, for the
// resources its selector names, with Kopf's conventions.
func buildWebhooks(hs []*registry.WebhookHandler, found []resources.Resource, suffix string, cc admissionregv1.WebhookClientConfig, persistentOnly bool) []admissionregv1.ValidatingWebhook {
	var out []admissionregv1.ValidatingWebhook
	for _, h := range hs {
		if persistentOnly && !h.Persistent {
			continue
		}
		ops := []admissionregv1.OperationType{admissionregv1.OperationAll}
		if len(h.Operations) > 0 {
			ops = nil
			for _, op := range h.Operations {
				ops = append(ops, admissionregv1.OperationType(op))
			}
		}
		var rules []admissionregv1.RuleWithOperations
		for _, r := range resources.ResolveAll(found, h.Selector) {
			plural := r.Plural
			if h.Subresource != "" {
				plural += "/" + h.Subresource
			}
			rules = append(rules, admissionregv1.RuleWithOperations{
				Operations: ops,
				Rule: admissionregv1.Rule{
					APIGroups:   []string{r.Group},
					APIVersions: []string{r.Version},
					Resources:   []string{plural},
					Scope:       ptr.To(admissionregv1.AllScopes),
				},
			})
		}
		sideEffects := admissionregv1.SideEffectClassNone
		if h.SideEffects {
			sideEffects = admissionregv1.SideEffectClassNoneOnDryRun
		}
		failure := admissionregv1.Fail
		if h.IgnoreFailures {
			failure = admissionregv1.Ignore
		}
		out = append(out, admissionregv1.ValidatingWebhook{
			Name:                    webhookName(h.ID, suffix),
			ClientConfig:            withHandlerID(cc, h.ID),
			Rules:                   rules,
			FailurePolicy:           &failure,
			MatchPolicy:             ptr.To(admissionregv1.Equivalent),
			ObjectSelector:          labelSelector(h.Filter.Labels),
			SideEffects:             &sideEffects,
			TimeoutSeconds:          ptr.To[int32](30), // the most allowed
			AdmissionReviewVersions: []string{"v1"},
		})
	}
	return out
}

var badWebhookName = regexp.MustCompile(`[^\w\d.-]`)

// webhookName is Kopf's _normalize_name.
func webhookName(id, suffix string) string {
	name := strings.NewReplacer("/", ".", "_", "-").Replace(id)
	name = badWebhookName.ReplaceAllStringFunc(name, func(s string) string { return hex.EncodeToString([]byte(s)) })
	if suffix != "" {
		return name + "." + suffix
	}
	return name
}

// withHandlerID is Kopf's _inject_handler_id: the handler's id is the
// last element of the URL's or the Service's path.
func withHandlerID(cc admissionregv1.WebhookClientConfig, id string) admissionregv1.WebhookClientConfig {
	cc = *cc.DeepCopy()
	esc := url.PathEscape(id)
	if cc.URL != nil {
		cc.URL = ptr.To(strings.TrimRight(*cc.URL, "/") + "/" + esc)
	}
	if cc.Service != nil {
		path := ""
		if cc.Service.Path != nil {
			path = strings.TrimRight(*cc.Service.Path, "/")
		}
		cc.Service.Path = ptr.To(path + "/" + esc)
	}
	return cc
}

// labelSelector is Kopf's _build_labels_selector: the label filters
// without callbacks.
func labelSelector(labels map[string]filters.Matcher) *metav1.LabelSelector {
	var exprs []metav1.LabelSelectorRequirement
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		m := labels[k]
		switch m.Op {
		case filters.Present:
			exprs = append(exprs, metav1.LabelSelectorRequirement{Key: k, Operator: metav1.LabelSelectorOpExists})
		case filters.Absent:
			exprs = append(exprs, metav1.LabelSelectorRequirement{Key: k, Operator: metav1.LabelSelectorOpDoesNotExist})
		case filters.Equal:
			exprs = append(exprs, metav1.LabelSelectorRequirement{Key: k, Operator: metav1.LabelSelectorOpIn, Values: []string{fmt.Sprint(m.Value)}})
		}
	}
	if len(exprs) == 0 {
		return nil
	}
	return &metav1.LabelSelector{MatchExpressions: exprs}
}
