package admission

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"

	"github.com/kopf-go/kopf/internal/testutil"
	"github.com/kopf-go/kopf/runtime/execution"
	"github.com/kopf-go/kopf/runtime/kwargs"
	"github.com/kopf-go/kopf/runtime/logging"
	"github.com/kopf-go/kopf/runtime/registry"
	"github.com/kopf-go/kopf/runtime/resources"
)

var examples = resources.Selector{Group: "kopf.dev", Version: "v1", Name: "kopfexamples"}

// review returns an AdmissionReview request as the API server sends it.
func review(op string, subresource string, object, old string) string {
	obj := func(s string) string {
		if s == "" {
			return "null"
		}
		return s
	}
	return fmt.Sprintf(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{
		"uid":"u-1","kind":{"group":"kopf.dev","version":"v1","kind":"KopfExample"},
		"resource":{"group":"kopf.dev","version":"v1","resource":"kopfexamples"},
		"subResource":%q,"name":"kopf-example-1","namespace":"default","operation":%q,
		"userInfo":{"username":"alice","groups":["devs"]},"dryRun":true,
		"object":%s,"oldObject":%s}}`, subresource, op, obj(object), obj(old))
}

const example = `{"apiVersion":"kopf.dev/v1","kind":"KopfExample","metadata":{"name":"kopf-example-1","namespace":"default","labels":{"app":"x"}},"spec":{"field":"value","items":[1,2]}}`

func post(t *testing.T, h http.Handler, path, body string) (*http.Response, *admissionv1.AdmissionReview, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, path, strings.NewReader(body)))
	resp := rec.Result()
	text := rec.Body.String()
	if resp.StatusCode != http.StatusOK {
		return resp, nil, text
	}
	var out admissionv1.AdmissionReview
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		t.Fatalf("the response is not an AdmissionReview: %v: %s", err, text)
	}
	return resp, &out, text
}

func newHandler(t *testing.T, hs ...registry.WebhookHandler) (*Handler, *testutil.Buffer) {
	t.Helper()
	reg := registry.New()
	for _, h := range hs {
		if h.Selector == (resources.Selector{}) {
			h.Selector = examples
		}
		if err := reg.AddWebhook(h); err != nil {
			t.Fatal(err)
		}
	}
	logs := &testutil.Buffer{}
	return &Handler{Registry: reg, Logger: logging.New(logs, logging.Plain, slog.LevelDebug), Timeout: 2 * time.Second}, logs
}

func TestReviews(t *testing.T) {
	var seen kwargs.Admission
	record := func(_ context.Context, kw *kwargs.Admission) error { seen = *kw; return nil }
	tests := []struct {
		name        string
		handlers    []registry.WebhookHandler
		path, body  string
		wantAllowed bool
		wantCode    int32
		wantMessage string
		wantPatch   string
		wantWarn    []string
		wantLog     string
	}{
		{
			name:        "allowed",
			handlers:    []registry.WebhookHandler{{ID: "check", Kind: registry.WebhookValidating, Fn: record}},
			path:        "/check",
			body:        review("CREATE", "", example, ""),
			wantAllowed: true,
			wantLog:     "Webhook 'check' succeeded.",
		},
		{
			name: "AdmissionError: its message and code",
			handlers: []registry.WebhookHandler{{ID: "check", Kind: registry.WebhookValidating, Fn: func(context.Context, *kwargs.Admission) error {
				return fmt.Errorf("checking: %w", NewError("Meh! I don't like it. Change the field.", 400))
			}}},
			path: "/check", body: review("CREATE", "", example, ""),
			wantCode: 400, wantMessage: "checking: Meh! I don't like it. Change the field.",
			wantLog: "Webhook 'check' failed permanently: checking: Meh!",
		},
		{
			name: "an arbitrary error: 500",
			handlers: []registry.WebhookHandler{{ID: "check", Kind: registry.WebhookValidating, Fn: func(context.Context, *kwargs.Admission) error {
				return errors.New("boom")
			}}},
			path: "/check", body: review("CREATE", "", example, ""),
			wantCode: 500, wantMessage: "boom",
		},
		{
			name: "a panic: refused, logged, no crash",
			handlers: []registry.WebhookHandler{{ID: "check", Kind: registry.WebhookValidating, Fn: func(context.Context, *kwargs.Admission) error {
				panic("oops")
			}}},
			path: "/check", body: review("CREATE", "", example, ""),
			wantCode: 500, wantMessage: "panic: oops",
			wantLog: "Webhook 'check' failed permanently: panic: oops",
		},
		{
			name: "the AdmissionError is preferred",
			handlers: []registry.WebhookHandler{
				{ID: "a", Kind: registry.WebhookValidating, Fn: func(context.Context, *kwargs.Admission) error { return errors.New("other") }},
				{ID: "b", Kind: registry.WebhookValidating, Fn: func(context.Context, *kwargs.Admission) error {
					return execution.NewPermanentError("permanent")
				}},
				{ID: "c", Kind: registry.WebhookValidating, Fn: func(context.Context, *kwargs.Admission) error { return NewError("admission", 403) }},
			},
			path: "/", body: review("CREATE", "", example, ""),
			wantCode: 403, wantMessage: "admission",
		},
		{
			name: "warnings",
			handlers: []registry.WebhookHandler{{ID: "check", Kind: registry.WebhookValidating, Fn: func(_ context.Context, kw *kwargs.Admission) error {
				kw.Warn("careful")
				*kw.Warnings = append(*kw.Warnings, "very careful")
				return nil
			}}},
			path: "/check", body: review("CREATE", "", example, ""),
			wantAllowed: true, wantWarn: []string{"careful", "very careful"},
		},
		{
			name: "mutation: a JSON Patch against the object",
			handlers: []registry.WebhookHandler{{ID: "mutate", Kind: registry.WebhookMutating, Fn: func(_ context.Context, kw *kwargs.Admission) error {
				kw.Patch.Spec()["injected"] = 123
				kw.Patch.Spec()["field"] = nil
				kw.Patch.Dict("metadata", "labels")["a/b"] = "c"
				return nil
			}}},
			path: "/mutate", body: review("CREATE", "", example, ""),
			wantAllowed: true,
			wantPatch:   `[{"op":"add","path":"/metadata/labels/a~1b","value":"c"},{"op":"remove","path":"/spec/field"},{"op":"add","path":"/spec/injected","value":123}]`,
		},
		{
			name: "a validating handler's patch is not sent",
			handlers: []registry.WebhookHandler{{ID: "check", Kind: registry.WebhookValidating, Fn: func(_ context.Context, kw *kwargs.Admission) error {
				kw.Patch.Spec()["injected"] = 123
				return nil
			}}},
			path: "/check", body: review("CREATE", "", example, ""),
			wantAllowed: true,
		},
		{
			name:        "another subresource: not called",
			handlers:    []registry.WebhookHandler{{ID: "check", Kind: registry.WebhookValidating, Fn: func(context.Context, *kwargs.Admission) error { return errors.New("called") }}},
			path:        "/check",
			body:        review("UPDATE", "status", example, example),
			wantAllowed: true,
		},
		{
			name: "label filter not matching: not called",
			handlers: []registry.WebhookHandler{{ID: "check", Kind: registry.WebhookValidating,
				Fn:   func(context.Context, *kwargs.Admission) error { return errors.New("called") },
				When: func(kw *kwargs.Admission) bool { return kw.Labels["app"] == "other" }}},
			path: "/check", body: review("CREATE", "", example, ""),
			wantAllowed: true,
		},
		{
			name: "a panicking when=: not called, logged",
			handlers: []registry.WebhookHandler{{ID: "check", Kind: registry.WebhookValidating,
				Fn:   func(context.Context, *kwargs.Admission) error { return errors.New("called") },
				When: func(kw *kwargs.Admission) bool { panic("when") }}},
			path: "/check", body: review("CREATE", "", example, ""),
			wantAllowed: true, wantLog: "The filters of webhook 'check' failed: panic: when",
		},
		{
			name: "a handler past the timeout: 504",
			handlers: []registry.WebhookHandler{{ID: "slow", Kind: registry.WebhookValidating, Fn: func(ctx context.Context, _ *kwargs.Admission) error {
				<-ctx.Done()
				time.Sleep(10 * time.Millisecond) // ignores ctx for a while
				return nil
			}}},
			path: "/slow", body: review("CREATE", "", example, ""),
			wantCode: 504, wantMessage: "The admission request has timed out.",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, logs := newHandler(t, tt.handlers...)
			if tt.name == "a handler past the timeout: 504" {
				h.Timeout = 50 * time.Millisecond
			}
			resp, out, text := post(t, h, tt.path, tt.body)
			if out == nil {
				t.Fatalf("HTTP %d: %s", resp.StatusCode, text)
			}
			r := out.Response
			if out.APIVersion != "admission.k8s.io/v1" || out.Kind != "AdmissionReview" || r.UID != "u-1" {
				t.Errorf("response header: %s", text)
			}
			if r.Allowed != tt.wantAllowed {
				t.Errorf("allowed = %v, want %v: %s", r.Allowed, tt.wantAllowed, text)
			}
			if !tt.wantAllowed && (r.Result == nil || r.Result.Code != tt.wantCode || r.Result.Message != tt.wantMessage) {
				t.Errorf("status = %+v, want %d %q", r.Result, tt.wantCode, tt.wantMessage)
			}
			if got := string(r.Patch); got != tt.wantPatch {
				t.Errorf("patch = %s, want %s", got, tt.wantPatch)
			}
			if tt.wantPatch != "" && (r.PatchType == nil || *r.PatchType != admissionv1.PatchTypeJSONPatch) {
				t.Errorf("patchType = %v", r.PatchType)
			}
			if strings.Join(r.Warnings, "|") != strings.Join(tt.wantWarn, "|") {
				t.Errorf("warnings = %q, want %q", r.Warnings, tt.wantWarn)
			}
			if tt.wantLog != "" && !strings.Contains(logs.String(), tt.wantLog) {
				t.Errorf("the log has no %q:\n%s", tt.wantLog, logs.String())
			}
		})
	}
	if seen.UserInfo.Username != "alice" || !seen.DryRun || seen.Operation != "CREATE" || seen.Name != "kopf-example-1" || seen.New == nil || seen.Old != nil {
		t.Errorf("kwargs: user %q, dry run %v, operation %q, name %q, new %v, old %v", seen.UserInfo.Username, seen.DryRun, seen.Operation, seen.Name, seen.New, seen.Old)
	}
}

func TestBadRequests(t *testing.T) {
	h, logs := newHandler(t, registry.WebhookHandler{ID: "check", Kind: registry.WebhookValidating, Fn: func(context.Context, *kwargs.Admission) error { return nil }})
	h.MaxRequestBytes = 4096
	tests := []struct {
		name, path, body string
		want             int
		wantText         string
	}{
		{"not JSON", "/check", "{", 400, "malformed admission review"},
		{"v1beta1", "/check", strings.Replace(review("CREATE", "", example, ""), "admission.k8s.io/v1", "admission.k8s.io/v1beta1", 1), 400, "unsupported review"},
		{"no request", "/check", `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}`, 400, "has no request"},
		{"no object", "/check", review("CREATE", "", "", ""), 400, "Either old or new object is missing"},
		{"an object that is not one", "/check", review("CREATE", "", "[1]", ""), 400, "malformed"},
		{"too large", "/check", review("CREATE", "", `{"spec":{"x":"`+strings.Repeat("x", 5000)+`"}}`, ""), 413, "exceeds 4096 bytes"},
		{"unknown handler", "/nope", review("CREATE", "", example, ""), 404, "No webhook handler"},
		{"unknown resource", "/check", strings.ReplaceAll(review("CREATE", "", example, ""), "kopfexamples", "pods"), 404, "serves the resource kopf.dev/v1 pods"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, _, text := post(t, h, tt.path, tt.body)
			if resp.StatusCode != tt.want || !strings.Contains(text, tt.wantText) {
				t.Errorf("HTTP %d %q, want %d with %q", resp.StatusCode, text, tt.want, tt.wantText)
			}
		})
	}
	if !strings.Contains(logs.String(), "Admission request to /check refused: malformed admission review") {
		t.Errorf("bad requests are not logged:\n%s", logs.String())
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/check", nil))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("GET: %d", rec.Code)
	}
}

// FuzzDecodeReview: whatever the API server (or anyone) sends, decoding
// returns a request or a *badRequest, never panics, and a request has
// what the handlers rely on.
func FuzzDecodeReview(f *testing.F) {
	f.Add([]byte(review("CREATE", "", example, "")))
	f.Add([]byte(review("UPDATE", "status", example, example)))
	f.Add([]byte(review("DELETE", "", "", example)))
	f.Add([]byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"x","resource":{"version":"v1","resource":"pods"},"object":{"a":1e400}}}`))
	f.Add([]byte(`{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":null}`))
	f.Add([]byte(`[]`))
	f.Add([]byte(``))
	f.Fuzz(func(t *testing.T, data []byte) {
		req, err := decodeReview(data)
		if err != nil {
			var bad *badRequest
			if !errors.As(err, &bad) || bad.status != http.StatusBadRequest || bad.msg == "" {
				t.Fatalf("an error that is not a bad request: %#v", err)
			}
			return
		}
		if req.review.Request == nil || req.review.Request.UID == "" || (req.object == nil && req.old == nil) {
			t.Fatalf("an incomplete request accepted: %s", data)
		}
		// The response to it encodes.
		if _, err := json.Marshal(response(req, true, nil, nil, nil)); err != nil {
			t.Fatal(err)
		}
	})
}

// A handler that changes its body does not change what the mutation is
// computed against.
func TestMutationAgainstTheReceivedObject(t *testing.T) {
	h, _ := newHandler(t, registry.WebhookHandler{ID: "m", Kind: registry.WebhookMutating, Fn: func(_ context.Context, kw *kwargs.Admission) error {
		kw.Spec["field"] = "changed in the body" // not a mutation: not sent
		kw.New["extra"] = true
		kw.Patch.Spec()["injected"] = "x"
		return nil
	}})
	_, out, text := post(t, h, "/m", review("CREATE", "", example, ""))
	if out == nil {
		t.Fatal(text)
	}
	if got := string(out.Response.Patch); got != `[{"op":"add","path":"/spec/injected","value":"x"}]` {
		t.Errorf("patch = %s", got)
	}
}
