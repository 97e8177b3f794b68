package conversion

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"reflect"
	"slices"
	"sync"
	"time"

	admissionregv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/kopf-go/kopf/runtime/registry"
	"github.com/kopf-go/kopf/runtime/resources"
	"github.com/kopf-go/kopf/runtime/settings"
)

// CRDGVR is the resource of CustomResourceDefinitions.
var CRDGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// CRDs keeps the conversion webhook of the CRD of each kind that has
// conversions in the registry (see the package doc): it gets each CRD
// and patches it (a JSON merge patch of spec.conversion) only when its
// conversion differs from what the server calls for. The verbs it needs
// are get and patch on those CRDs (by name: <plural>.<group>).
type CRDs struct {
	Registry *registry.Registry
	Client   dynamic.Interface
	// Discover returns the cluster's resources: a kind's plural names its
	// CRD.
	Discover func(ctx context.Context) ([]resources.Resource, error)
	// ClientConfig is how the API server reaches the conversion webhook
	// now (the admission server's Service or URL at <root>/convert, and
	// its CA bundle); nothing is written while its CA bundle is empty.
	ClientConfig func() admissionregv1.WebhookClientConfig
	// Interval is how often the CRDs are checked (besides Poke).
	Interval time.Duration
	Logger   *slog.Logger

	wakeOnce sync.Once
	wake     chan struct{}
}

func (c *CRDs) logger() *slog.Logger {
	if c.Logger == nil {
		return slog.Default()
	}
	return c.Logger
}

// Poke asks for the CRDs to be checked again (a new CA bundle).
func (c *CRDs) Poke() {
	select {
	case c.wakeCh() <- struct{}{}:
	default:
	}
}

func (c *CRDs) wakeCh() chan struct{} {
	c.wakeOnce.Do(func() { c.wake = make(chan struct{}, 1) })
	return c.wake
}

// Start checks the CRDs once, then every Interval and when poked until
// the returned stop is called (which waits for the check in progress).
// Only a refusal by RBAC fails it: anything else is logged and retried.
func (c *CRDs) Start(ctx context.Context) (stop func(), err error) {
	err = c.Sync(ctx)
	if apierrors.IsForbidden(err) {
		return nil, fmt.Errorf("not enough RBAC permissions to configure the conversion webhooks: %w", err)
	}
	if err != nil {
		c.logger().Error(fmt.Sprintf("The conversion webhooks cannot be configured yet: %s", err))
	}
	bg, cancel := context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(c.Interval)
		defer t.Stop()
		for {
			select {
			case <-bg.Done():
				return
			case <-t.C:
			case <-c.wakeCh():
			}
			if err := c.Sync(bg); err != nil && bg.Err() == nil {
				c.logger().Error(fmt.Sprintf("The conversion webhooks cannot be configured: %s", err))
			}
		}
	})
	return func() { cancel(); wg.Wait() }, nil
}

// Sync makes each CRD's conversion hold what the server calls for.
func (c *CRDs) Sync(ctx context.Context) error {
	cc := c.ClientConfig()
	if len(cc.CABundle) == 0 {
		return nil // no certificate yet: configured once there is one
	}
	want, err := conversionOf(cc)
	if err != nil {
		return err
	}
	found, err := c.Discover(ctx)
	if err != nil {
		return fmt.Errorf("discovering the resources: %w", err)
	}
	var errs []error
	for _, name := range crdNames(c.Registry, found) {
		if err := c.syncOne(ctx, name, want); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) > 0 {
		return errs[0] // the others are alike
	}
	return nil
}

// crdNames are the names of the CRDs of the kinds with conversions
// (<plural>.<group>), or <Kind>.<group> if not discovered (so that the
// error names it).
func crdNames(reg *registry.Registry, found []resources.Resource) []string {
	var out []string
	for _, conv := range reg.Conversions() {
		name := conv.Kind + "." + conv.Group
		for _, r := range found {
			if r.Group == conv.Group && r.Kind == conv.Kind {
				name = r.Plural + "." + r.Group
				break
			}
		}
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}

// syncOne patches the conversion of one CRD if it differs from want.
func (c *CRDs) syncOne(ctx context.Context, name string, want map[string]any) error {
	api := c.Client.Resource(CRDGVR)
	crd, err := api.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("reading the CRD %s: %w", name, err)
	}
	cur, _, _ := unstructured.NestedMap(crd.Object, "spec", "conversion")
	patch := conversionPatch(cur, want)
	if patch == nil {
		return nil
	}
	data, err := json.Marshal(map[string]any{"spec": map[string]any{"conversion": patch}})
	if err != nil {
		return fmt.Errorf("encoding the patch of the CRD %s: %w", name, err)
	}
	if _, err := api.Patch(ctx, name, types.MergePatchType, data, metav1.PatchOptions{FieldManager: fieldManager}); err != nil {
		return fmt.Errorf("patching the conversion webhook of the CRD %s: %w", name, err)
	}
	c.logger().Info(fmt.Sprintf("Reconfiguring the conversion webhook of the CRD %s.", name))
	return nil
}

// fieldManager is the runtime's own, as of the webhook configurations.
const fieldManager = settings.FieldManager

// conversionOf is the CRD's spec.conversion.webhook.clientConfig for cc,
// as JSON.
func conversionOf(cc admissionregv1.WebhookClientConfig) (map[string]any, error) {
	data, err := json.Marshal(cc)
	if err != nil {
		return nil, fmt.Errorf("encoding the conversion webhook's client config: %w", err)
	}
	var out map[string]any
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("decoding the conversion webhook's client config: %w", err)
	}
	return out, nil
}

// conversionPatch is the merge patch of spec.conversion that makes cur
// hold the strategy Webhook, the client config want and the review
// version v1; nil if it holds them already. Of the client config, the
// URL or the Service that the server does not use is removed.
func conversionPatch(cur, want map[string]any) map[string]any {
	webhook, _ := cur["webhook"].(map[string]any)
	have, _ := webhook["clientConfig"].(map[string]any)
	versions, _ := webhook["conversionReviewVersions"].([]any)
	if cur["strategy"] == "Webhook" && reflect.DeepEqual(normalize(have), normalize(want)) && slices.Contains(versions, any("v1")) {
		return nil
	}
	cc := map[string]any{"url": nil, "service": nil}
	for k, v := range want {
		cc[k] = v
	}
	wh := map[string]any{"clientConfig": cc}
	if !slices.Contains(versions, any("v1")) {
		wh["conversionReviewVersions"] = []any{"v1"}
	}
	return map[string]any{"strategy": "Webhook", "webhook": wh}
}

// normalize makes JSON numbers of a client config comparable (a port
// is float64 from encoding/json, int64 from the API's decoding).
func normalize(m map[string]any) string {
	data, _ := json.Marshal(m)
	return string(data)
}
