package conversion

import (
	"reflect"
	"testing"

	admissionregv1 "k8s.io/api/admissionregistration/v1"
	"k8s.io/utils/ptr"

	"github.com/kopf-go/kopf/runtime/registry"
	"github.com/kopf-go/kopf/runtime/resources"
)

func TestConversionPatch(t *testing.T) {
	svc, err := conversionOf(admissionregv1.WebhookClientConfig{CABundle: []byte("CA"),
		Service: &admissionregv1.ServiceReference{Namespace: "ns", Name: "kopf-webhooks", Path: ptr.To("/convert"), Port: ptr.To[int32](443)}})
	if err != nil {
		t.Fatal(err)
	}
	url, err := conversionOf(admissionregv1.WebhookClientConfig{CABundle: []byte("CA"), URL: ptr.To("https://127.0.0.1:9443/convert")})
	if err != nil {
		t.Fatal(err)
	}
	// As the API server returns them: numbers as int64.
	stored := func(strategy string, cc map[string]any, versions ...any) map[string]any {
		return map[string]any{"strategy": strategy, "webhook": map[string]any{"clientConfig": cc, "conversionReviewVersions": versions}}
	}
	svcStored := map[string]any{"caBundle": "Q0E=", "service": map[string]any{"namespace": "ns", "name": "kopf-webhooks", "path": "/convert", "port": int64(443)}}
	svcNoCA := map[string]any{"service": map[string]any{"namespace": "ns", "name": "kopf-webhooks", "path": "/convert", "port": int64(443)}}
	tests := []struct {
		name      string
		cur, want map[string]any
		patched   bool
		versions  bool // the patch sets conversionReviewVersions
	}{
		{"as wanted", stored("Webhook", svcStored, "v1"), svc, false, false},
		{"no CA bundle (as kopf-gen writes it)", stored("Webhook", svcNoCA, "v1"), svc, true, false},
		{"strategy None", map[string]any{"strategy": "None"}, svc, true, true},
		{"no conversion", nil, svc, true, true},
		{"a URL instead of the Service", stored("Webhook", svcStored, "v1beta1", "v1"), url, true, false},
		{"no v1 review", stored("Webhook", svcStored, "v1beta1"), svc, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := conversionPatch(tt.cur, tt.want)
			if (p != nil) != tt.patched {
				t.Fatalf("patch %v; want one: %v", p, tt.patched)
			}
			if p == nil {
				return
			}
			wh := p["webhook"].(map[string]any)
			cc := wh["clientConfig"].(map[string]any)
			if p["strategy"] != "Webhook" || !reflect.DeepEqual(cc["caBundle"], "Q0E=") {
				t.Errorf("patch: %v", p)
			}
			if _, ok := wh["conversionReviewVersions"]; ok != tt.versions {
				t.Errorf("patch sets the review versions: %v, want %v", ok, tt.versions)
			}
			if tt.want["url"] != nil && (cc["service"] != nil || cc["url"] == nil) {
				t.Errorf("URL mode: the Service must go: %v", cc)
			}
			if tt.want["service"] != nil && (cc["url"] != nil || cc["service"] == nil) {
				t.Errorf("Service mode: the URL must go: %v", cc)
			}
		})
	}
}

func TestCRDNames(t *testing.T) {
	r := widgetRegistry(t)
	found := []resources.Resource{{Group: "kopf.dev", Version: "v1", Plural: "widgets", Kind: "Widget"}, {Group: "other.dev", Plural: "widgets", Kind: "Widget"}}
	if got := crdNames(r, found); !reflect.DeepEqual(got, []string{"widgets.kopf.dev"}) {
		t.Errorf("names: %v", got)
	}
	if got := crdNames(r, nil); !reflect.DeepEqual(got, []string{"Widget.kopf.dev"}) {
		t.Errorf("names when not discovered: %v", got)
	}
	if got := crdNames(registry.New(), found); got != nil {
		t.Errorf("names without conversions: %v", got)
	}
}
