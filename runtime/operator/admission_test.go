package operator

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"

	"k8s.io/client-go/rest"

	"github.com/kopf-go/kopf/runtime/admission"
	"github.com/kopf-go/kopf/runtime/kwargs"
	"github.com/kopf-go/kopf/runtime/registry"
	"github.com/kopf-go/kopf/runtime/resources"
	"github.com/kopf-go/kopf/runtime/scope"
	"github.com/kopf-go/kopf/runtime/settings"
	"github.com/kopf-go/kopf/runtime/sharding"
)

// An operator with conversions and no webhook handlers needs the
// admission server too, and says so when none is configured outside of
// a cluster; one with neither starts nothing.
func TestServeAdmissionForConversions(t *testing.T) {
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	opts := Options{Settings: settings.Default(), Logger: slog.New(slog.DiscardHandler)}
	stop, err := serveAdmission(t.Context(), &rest.Config{Host: "https://127.0.0.1:1"}, registry.New(), opts, nil, nil, "", nil)
	if err != nil || stop == nil {
		t.Fatalf("no webhooks, no conversions: %v", err)
	}
	stop()
	reg := registry.New()
	nop := func(_ context.Context, obj map[string]any) (map[string]any, error) { return obj, nil }
	if err := reg.AddConversion(registry.Conversion{Group: "kopf.dev", Kind: "Widget", Hub: "v1", Spoke: "v1alpha1", ToHub: nop, FromHub: nop}); err != nil {
		t.Fatal(err)
	}
	_, err = serveAdmission(t.Context(), &rest.Config{Host: "https://127.0.0.1:1"}, reg, opts, nil, nil, "", nil)
	if !errors.Is(err, admission.ErrNoServer) || !strings.Contains(err.Error(), "the conversions are served by the admission server") {
		t.Errorf("conversions without a server: %v", err)
	}
}

// The bucket stamp: only in the label mode, with managed configurations
// and webhook handlers; its label is sharding.BucketLabel's, in the
// served namespaces.
func TestBucketStamp(t *testing.T) {
	withWebhook := registry.New()
	allow := func(context.Context, *kwargs.Admission) error { return nil }
	if err := withWebhook.AddWebhook(registry.WebhookHandler{ID: "check", Kind: registry.WebhookValidating, Selector: resources.Selector{Group: "kopf.dev", Version: "v1", Name: "kopfexamples"}, Fn: allow}); err != nil {
		t.Fatal(err)
	}
	managed := settings.Default()
	managed.Admission.Managed = "auto.kopf.dev"
	tests := []struct {
		name     string
		mode     sharding.Mode // "": no sharding
		reg      *registry.Registry
		settings *settings.Settings
		want     bool
	}{
		{"no sharding", "", withWebhook, managed, false},
		{"the filter mode", sharding.ModeFilter, withWebhook, managed, false},
		{"not managed", sharding.ModeLabel, withWebhook, settings.Default(), false},
		{"no webhook handlers", sharding.ModeLabel, registry.New(), managed, false},
		{"the label mode, managed", sharding.ModeLabel, withWebhook, managed, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc, err := scope.Parse([]string{"ns1,ns2"})
			if err != nil {
				t.Fatal(err)
			}
			o := &operator{opts: Options{Settings: tt.settings}, reg: tt.reg, scope: sc}
			if tt.mode != "" {
				o.shards = &shards{cfg: Sharding{Mode: tt.mode, Buckets: 16}}
			}
			stamp := o.bucketStamp()
			if (stamp != nil) != tt.want || (o.shards != nil && o.shards.stamp != stamp) {
				t.Fatalf("stamp %v, shards' %v; want one: %v", stamp, o.shards, tt.want)
			}
			if stamp == nil {
				return
			}
			key, value := stamp.Label("ns1", "a")
			wantKey, wantValue := sharding.BucketLabel("ns1", "a", 16)
			if key != wantKey || value != wantValue {
				t.Errorf("label %s=%s, want %s=%s", key, value, wantKey, wantValue)
			}
			if !slices.Equal(stamp.Namespaces, []string{"ns1", "ns2"}) || !stamp.Serves("ns2") || stamp.Serves("ns3") || !stamp.Serves("") {
				t.Errorf("namespaces %v, serves ns2 %v, ns3 %v, cluster-scoped %v", stamp.Namespaces, stamp.Serves("ns2"), stamp.Serves("ns3"), stamp.Serves(""))
			}
		})
	}
}
