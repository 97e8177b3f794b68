package registry

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/kopf-go/kopf/runtime/body"
	"github.com/kopf-go/kopf/runtime/kwargs"
	"github.com/kopf-go/kopf/runtime/resources"
)

func nopWebhook(context.Context, *kwargs.Admission) error { return nil }

func TestAddWebhook(t *testing.T) {
	sel := resources.Selector{Group: "kopf.dev", Version: "v1", Name: "kopfexamples"}
	tests := []struct {
		name    string
		first   *WebhookHandler
		h       WebhookHandler
		wantErr string
	}{
		{"ok", nil, WebhookHandler{ID: "a", Selector: sel, Kind: WebhookValidating, Fn: nopWebhook}, ""},
		{"no id", nil, WebhookHandler{Selector: sel, Kind: WebhookValidating, Fn: nopWebhook}, "no id"},
		{"no fn", nil, WebhookHandler{ID: "a", Selector: sel, Kind: WebhookValidating}, "no function"},
		{"no kind", nil, WebhookHandler{ID: "a", Selector: sel, Fn: nopWebhook}, "unknown kind"},
		{"bad op", nil, WebhookHandler{ID: "a", Selector: sel, Kind: WebhookMutating, Fn: nopWebhook, Operations: []string{"PATCH"}}, "unknown operation"},
		{"duplicate id of a kind",
			&WebhookHandler{ID: "a", Selector: sel, Kind: WebhookValidating, Fn: nopWebhook},
			WebhookHandler{ID: "a", Selector: resources.Selector{Version: "v1", Name: "pods", Core: true}, Kind: WebhookValidating, Fn: nopWebhook},
			"registered twice"},
		{"same id, other kind",
			&WebhookHandler{ID: "a", Selector: sel, Kind: WebhookValidating, Fn: nopWebhook},
			WebhookHandler{ID: "a", Selector: sel, Kind: WebhookMutating, Fn: nopWebhook}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := New()
			if tt.first != nil {
				if err := r.AddWebhook(*tt.first); err != nil {
					t.Fatal(err)
				}
			}
			err := r.AddWebhook(tt.h)
			if tt.wantErr == "" && err != nil {
				t.Fatalf("AddWebhook: %v", err)
			}
			if tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Fatalf("AddWebhook: %v, want an error with %q", err, tt.wantErr)
			}
		})
	}
}

func TestWebhookAccessors(t *testing.T) {
	r := New()
	pods := resources.Selector{Version: "v1", Name: "pods", Core: true}
	examples := resources.Selector{Group: "kopf.dev", Version: "v1", Name: "kopfexamples"}
	for _, h := range []WebhookHandler{
		{ID: "v1", Selector: pods, Kind: WebhookValidating, Fn: nopWebhook},
		{ID: "m1", Selector: examples, Kind: WebhookMutating, Fn: nopWebhook},
		{ID: "v2", Selector: pods, Kind: WebhookValidating, Fn: nopWebhook},
	} {
		if err := r.AddWebhook(h); err != nil {
			t.Fatal(err)
		}
	}
	ids := func(hs []*WebhookHandler) string {
		var out []string
		for _, h := range hs {
			out = append(out, h.ID)
		}
		return strings.Join(out, ",")
	}
	if got := ids(r.WebhookHandlers(WebhookValidating)); got != "v1,v2" {
		t.Errorf("validating: %s", got)
	}
	if got := ids(r.WebhookHandlers(WebhookMutating)); got != "m1" {
		t.Errorf("mutating: %s", got)
	}
	if got := ids(r.WebhookHandlers("")); got != "v1,m1,v2" {
		t.Errorf("all: %s", got)
	}
	if got := r.WebhookSelectors(); len(got) != 2 || got[0] != pods || got[1] != examples {
		t.Errorf("selectors: %v", got)
	}
	if !r.HasWebhooks() || New().HasWebhooks() {
		t.Error("HasWebhooks is wrong")
	}
	if len(r.Selectors()) != 0 {
		t.Errorf("webhooks need no watch, but Selectors lists %v", r.Selectors())
	}
}

func TestWebhookAdmits(t *testing.T) {
	tests := []struct {
		name       string
		h          WebhookHandler
		op, subres string
		want       bool
	}{
		{"all ops, main", WebhookHandler{Kind: WebhookValidating}, "CREATE", "", true},
		{"main only, status request", WebhookHandler{Kind: WebhookValidating}, "UPDATE", "status", false},
		{"status handler", WebhookHandler{Kind: WebhookValidating, Subresource: "status"}, "UPDATE", "status", true},
		{"status handler, main request", WebhookHandler{Kind: WebhookValidating, Subresource: "status"}, "UPDATE", "", false},
		{"any subresource", WebhookHandler{Kind: WebhookValidating, Subresource: "*"}, "UPDATE", "scale", true},
		{"op listed", WebhookHandler{Kind: WebhookValidating, Operations: []string{"CREATE", "UPDATE"}}, "UPDATE", "", true},
		{"op not listed", WebhookHandler{Kind: WebhookValidating, Operations: []string{"CREATE"}}, "DELETE", "", false},
		{"validating delete", WebhookHandler{Kind: WebhookValidating}, "DELETE", "", true},
		{"mutating delete, all ops", WebhookHandler{Kind: WebhookMutating}, "DELETE", "", false},
		{"mutating delete, mixed ops", WebhookHandler{Kind: WebhookMutating, Operations: []string{"CREATE", "DELETE"}}, "DELETE", "", false},
		{"mutating delete, only delete", WebhookHandler{Kind: WebhookMutating, Operations: []string{"DELETE"}}, "DELETE", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.h.Admits(tt.op, tt.subres); got != tt.want {
				t.Errorf("Admits(%s, %q) = %v, want %v", tt.op, tt.subres, got, tt.want)
			}
		})
	}
}

type typedExample struct {
	Spec struct {
		Field string `json:"field"`
	} `json:"spec"`
}

func TestAdmissionAdapters(t *testing.T) {
	b := body.Body{"spec": map[string]any{"field": "value"}}
	kw := &kwargs.Admission{Base: kwargs.Base{Body: b}, New: b}
	var seen string
	fn := TypedAdmissionFunc(func(_ context.Context, kw kwargs.TypedAdmission[typedExample]) error {
		seen = kw.Object.Spec.Field + "/" + kw.New.Spec.Field
		return nil
	})
	if err := fn(context.Background(), kw); err != nil || seen != "value/value" {
		t.Errorf("typed handler: err %v, saw %q", err, seen)
	}
	bad := &kwargs.Admission{Base: kwargs.Base{Body: body.Body{"spec": 1}}}
	if err := fn(context.Background(), bad); err == nil {
		t.Error("an undecodable body: no error")
	}
	if !TypedAdmissionWhen(func(kwargs.TypedAdmission[typedExample]) bool { return false })(bad) {
		t.Error("an undecodable body: when= does not match (the handler must run and report it)")
	}
	errRefused := errors.New("refused")
	plain := AdmissionFunc(func(_ context.Context, kw kwargs.Admission) error {
		kw.Patch["x"] = 1 // the patch is shared with the caller
		return errRefused
	})
	kw.Patch = map[string]any{}
	if err := plain(context.Background(), kw); !errors.Is(err, errRefused) || kw.Patch["x"] != 1 {
		t.Errorf("body-only handler: err %v, patch %v", err, kw.Patch)
	}
	if !AdmissionWhen(func(kw kwargs.Admission) bool { return kw.Body != nil })(kw) {
		t.Error("when= does not see the body")
	}
}
