package operator

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"k8s.io/client-go/rest"

	"github.com/kopf-go/kopf/runtime/admission"
	"github.com/kopf-go/kopf/runtime/registry"
	"github.com/kopf-go/kopf/runtime/settings"
)

// An operator with conversions and no webhook handlers needs the
// admission server too, and says so when none is configured outside of
// a cluster; one with neither starts nothing.
func TestServeAdmissionForConversions(t *testing.T) {
	t.Setenv("KUBERNETES_SERVICE_HOST", "")
	opts := Options{Settings: settings.Default(), Logger: slog.New(slog.DiscardHandler)}
	stop, err := serveAdmission(t.Context(), &rest.Config{Host: "https://127.0.0.1:1"}, registry.New(), opts, nil, nil, "")
	if err != nil || stop == nil {
		t.Fatalf("no webhooks, no conversions: %v", err)
	}
	stop()
	reg := registry.New()
	nop := func(_ context.Context, obj map[string]any) (map[string]any, error) { return obj, nil }
	if err := reg.AddConversion(registry.Conversion{Group: "kopf.dev", Kind: "Widget", Hub: "v1", Spoke: "v1alpha1", ToHub: nop, FromHub: nop}); err != nil {
		t.Fatal(err)
	}
	_, err = serveAdmission(t.Context(), &rest.Config{Host: "https://127.0.0.1:1"}, reg, opts, nil, nil, "")
	if !errors.Is(err, admission.ErrNoServer) || !strings.Contains(err.Error(), "the conversions are served by the admission server") {
		t.Errorf("conversions without a server: %v", err)
	}
}
