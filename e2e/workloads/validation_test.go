package workloads_test

import (
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	v1 "github.com/kopf-go/kopf/e2e/workloads/internal/deployop/api/v1"
)

// The CRD that kopf-gen wrote from deployop's markers carries their CEL
// rules (+kubebuilder:validation:XValidation) and one-of constraints
// (+kubebuilder:validation:AtMostOneOf): the API server refuses an invalid
// WebApp with the rule's message, and accepts a valid one.
func TestValidationRules(t *testing.T) {
	t.Parallel()
	c := newClients()
	ns := namespace(t, c, "validation")
	tests := []struct {
		name    string
		spec    map[string]any
		wantErr string // "" for a WebApp the API server accepts
	}{
		{"valid", map[string]any{"image": "nginx", "replicas": int64(100), "command": []any{"nginx"}}, ""},
		{"a CEL rule", map[string]any{"image": "nginx", "replicas": int64(101)}, "a WebApp runs at most 100 replicas"},
		{"at most one of", map[string]any{"image": "nginx", "replicas": int64(1), "command": []any{"nginx"}, "args": []any{"-g"}},
			"at most one of the fields in [command args] may be set"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": v1.SchemeGroupVersion.String(),
				"kind":       "WebApp",
				"metadata":   map[string]any{"name": "app-" + string(rune('a'+i))},
				"spec":       tt.spec,
			}}
			_, err := c.webapps.Namespace(ns).Create(t.Context(), obj, metav1.CreateOptions{})
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("a valid WebApp is refused: %v", err)
			case tt.wantErr != "" && (!apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("err = %v, want Invalid (422) with %q", err, tt.wantErr)
			}
		})
	}
}
