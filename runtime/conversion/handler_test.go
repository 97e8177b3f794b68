package conversion

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/kopf-go/kopf/internal/testutil"
	"github.com/kopf-go/kopf/runtime/registry"
)

// The kind Widget: v1 (the hub) has spec.newName, v1alpha1 spec.oldName,
// v1beta1 spec.betaName.
func renaming(from, to string) registry.ConversionFn {
	return func(_ context.Context, obj map[string]any) (map[string]any, error) {
		spec, _ := obj["spec"].(map[string]any)
		switch spec[from] {
		case "error":
			return nil, errors.New("cannot convert this one")
		case "panic":
			panic("boom")
		case "rename":
			obj["metadata"].(map[string]any)["name"] = "other"
		case "label":
			obj["metadata"].(map[string]any)["labels"] = map[string]any{"converted": "yes"}
		}
		if v, ok := spec[from]; ok {
			delete(spec, from)
			spec[to] = v
		}
		return obj, nil
	}
}

func widgetRegistry(t *testing.T) *registry.Registry {
	t.Helper()
	r := registry.New()
	for _, c := range []registry.Conversion{
		{Group: "kopf.dev", Kind: "Widget", Hub: "v1", Spoke: "v1alpha1", ToHub: renaming("oldName", "newName"), FromHub: renaming("newName", "oldName")},
		{Group: "kopf.dev", Kind: "Widget", Hub: "v1", Spoke: "v1beta1", ToHub: renaming("betaName", "newName"), FromHub: renaming("newName", "betaName")},
	} {
		if err := r.AddConversion(c); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

func widget(version, field, value string) map[string]any {
	return map[string]any{
		"apiVersion": "kopf.dev/" + version, "kind": "Widget",
		"metadata": map[string]any{"name": "w", "namespace": "ns", "uid": "u-1", "generation": int64(2), "finalizers": []any{}},
		"spec":     map[string]any{field: value, "size": int64(3)},
	}
}

func reviewOf(desired string, objs ...map[string]any) string {
	data, _ := json.Marshal(map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
		"request": map[string]any{"uid": "r-1", "desiredAPIVersion": desired, "objects": objs},
	})
	return string(data)
}

func post(t *testing.T, h http.Handler, body string) (*httptest.ResponseRecorder, *reviewResponse) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/convert", strings.NewReader(body)))
	if rec.Code != http.StatusOK {
		return rec, nil
	}
	var rv review
	if err := json.Unmarshal(rec.Body.Bytes(), &rv); err != nil || rv.Response == nil {
		t.Fatalf("not a ConversionReview response: %v: %s", err, rec.Body)
	}
	if rv.APIVersion != reviewVersion || rv.Kind != "ConversionReview" || rv.Response.UID != "r-1" {
		t.Errorf("response's apiVersion, kind, uid: %q %q %q", rv.APIVersion, rv.Kind, rv.Response.UID)
	}
	return rec, rv.Response
}

func TestHandlerConverts(t *testing.T) {
	tests := []struct {
		name    string
		desired string
		objs    []map[string]any
		want    []map[string]any
	}{
		{"spoke to hub", "kopf.dev/v1", []map[string]any{widget("v1alpha1", "oldName", "x")}, []map[string]any{widget("v1", "newName", "x")}},
		{"hub to spoke", "kopf.dev/v1alpha1", []map[string]any{widget("v1", "newName", "x")}, []map[string]any{widget("v1alpha1", "oldName", "x")}},
		{"spoke to spoke", "kopf.dev/v1beta1", []map[string]any{widget("v1alpha1", "oldName", "x")}, []map[string]any{widget("v1beta1", "betaName", "x")}},
		{"same version", "kopf.dev/v1", []map[string]any{widget("v1", "newName", "x")}, []map[string]any{widget("v1", "newName", "x")}},
		{"mixed versions", "kopf.dev/v1",
			[]map[string]any{widget("v1", "newName", "a"), widget("v1beta1", "betaName", "b")},
			[]map[string]any{widget("v1", "newName", "a"), widget("v1", "newName", "b")}},
		{"labels may change", "kopf.dev/v1", []map[string]any{widget("v1alpha1", "oldName", "label")}, func() []map[string]any {
			w := widget("v1", "newName", "label")
			w["metadata"].(map[string]any)["labels"] = map[string]any{"converted": "yes"}
			return []map[string]any{w}
		}()},
		{"no objects", "kopf.dev/v1", nil, []map[string]any{}},
	}
	h := &Handler{Registry: widgetRegistry(t), Logger: slog.New(slog.DiscardHandler)}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, resp := post(t, h, reviewOf(tt.desired, tt.objs...))
			if resp == nil {
				t.Fatal("no review in the answer")
			}
			if resp.Result.Status != "Success" {
				t.Fatalf("result: %+v", resp.Result)
			}
			if !reflect.DeepEqual(fmt.Sprint(resp.ConvertedObjects), fmt.Sprint(tt.want)) {
				t.Errorf("converted:\n%v\nwant\n%v", resp.ConvertedObjects, tt.want)
			}
		})
	}
}

func TestHandlerFailures(t *testing.T) {
	tests := []struct {
		name    string
		desired string
		obj     map[string]any
		want    string
	}{
		{"an error", "kopf.dev/v1", widget("v1alpha1", "oldName", "error"),
			"Conversion of Widget ns/w from kopf.dev/v1alpha1 to kopf.dev/v1 failed: cannot convert this one"},
		{"a panic", "kopf.dev/v1alpha1", widget("v1", "newName", "panic"),
			"Conversion of Widget ns/w from kopf.dev/v1 to kopf.dev/v1alpha1 failed: "},
		{"metadata changed", "kopf.dev/v1", widget("v1alpha1", "oldName", "rename"),
			"failed: the conversion changed metadata.name (only labels and annotations may change)"},
		{"unknown version", "kopf.dev/v2", widget("v1", "newName", "x"),
			"failed: the operator has no conversion to v2 (the hub is v1)"},
		{"unknown kind", "kopf.dev/v1", map[string]any{"apiVersion": "kopf.dev/v1alpha1", "kind": "Gadget", "metadata": map[string]any{"name": "g"}},
			"Conversion of Gadget g from kopf.dev/v1alpha1 to kopf.dev/v1 failed: the operator has no conversions of Gadget.kopf.dev"},
		{"no kind", "kopf.dev/v1", map[string]any{"metadata": map[string]any{"name": "g"}}, "the object has no valid apiVersion and kind"},
		{"another group", "other.dev/v1", widget("v1", "newName", "x"), "the groups differ"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			log := &testutil.Buffer{}
			h := &Handler{Registry: widgetRegistry(t), Logger: slog.New(slog.NewTextHandler(log, nil))}
			_, resp := post(t, h, reviewOf(tt.desired, widget("v1", "newName", "fine"), tt.obj))
			if resp == nil {
				t.Fatal("no review in the answer")
			}
			if resp.Result.Status != "Failure" || !strings.Contains(resp.Result.Message, tt.want) || len(resp.ConvertedObjects) != 0 {
				t.Errorf("result: %+v, %d objects; want a Failure with %q", resp.Result, len(resp.ConvertedObjects), tt.want)
			}
			if !strings.Contains(log.String(), "level=ERROR") || !strings.Contains(log.String(), tt.want) {
				t.Errorf("log: %s", log)
			}
		})
	}
}

func TestHandlerRefusesMalformedReviews(t *testing.T) {
	tests := []struct {
		name   string
		body   string
		status int
		want   string
	}{
		{"not JSON", "{", http.StatusBadRequest, "malformed conversion review"},
		{"an admission review", `{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"}`, http.StatusBadRequest, "unsupported review"},
		{"no request", `{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview"}`, http.StatusBadRequest, "no request"},
		{"no uid", `{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview","request":{"desiredAPIVersion":"kopf.dev/v1"}}`, http.StatusBadRequest, "no uid"},
		{"no desired version", `{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview","request":{"uid":"x"}}`, http.StatusBadRequest, "no desiredAPIVersion"},
		{"an object not an object", `{"apiVersion":"apiextensions.k8s.io/v1","kind":"ConversionReview","request":{"uid":"x","desiredAPIVersion":"kopf.dev/v1","objects":[1]}}`, http.StatusBadRequest, "malformed object #0"},
		{"too large", reviewOf("kopf.dev/v1", widget("v1", "newName", strings.Repeat("x", 2000))), http.StatusRequestEntityTooLarge, "exceeds 1000 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			log := &testutil.Buffer{}
			h := &Handler{Registry: widgetRegistry(t), Logger: slog.New(slog.NewTextHandler(log, nil)), MaxRequestBytes: 1000}
			rec, _ := post(t, h, tt.body)
			if rec.Code != tt.status || !strings.Contains(rec.Body.String(), tt.want) {
				t.Errorf("answer %d %q; want %d with %q", rec.Code, rec.Body, tt.status, tt.want)
			}
			if !strings.Contains(log.String(), "Conversion request to /convert refused: ") {
				t.Errorf("log: %s", log)
			}
		})
	}
	rec := httptest.NewRecorder()
	(&Handler{Registry: registry.New()}).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/convert", bytes.NewReader(nil)))
	if rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("GET: %d", rec.Code)
	}
}
