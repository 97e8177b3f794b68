package registry

import (
	"context"
	"reflect"
	"testing"

	"github.com/kopf-go/kopf/runtime/kwargs"
	"github.com/kopf-go/kopf/runtime/resources"
)

type nopIndex struct{}

func (nopIndex) Index(context.Context, *kwargs.Index, string) error { return nil }
func (nopIndex) Discard(string)                                     {}

func TestAddIndex(t *testing.T) {
	r := New()
	for _, tt := range []struct {
		name    string
		h       IndexHandler
		wantErr string
	}{
		{"valid", IndexHandler{ID: "by_label", Selector: pods, Fn: nopIndex{}}, ""},
		{"the same id for another resource", IndexHandler{ID: "by_label", Selector: examples, Fn: nopIndex{}}, ""},
		{"no id", IndexHandler{Selector: pods, Fn: nopIndex{}}, "index has no id"},
		{"no function", IndexHandler{ID: "x", Selector: pods}, `index "x" has no function`},
		{"twice", IndexHandler{ID: "by_label", Selector: pods, Fn: nopIndex{}}, `index "by_label" is registered twice for ` + pods.String()},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := r.AddIndex(tt.h)
			if (err == nil) != (tt.wantErr == "") || (err != nil && err.Error() != tt.wantErr) {
				t.Errorf("AddIndex() = %v, want %q", err, tt.wantErr)
			}
		})
	}
	var ids []string
	for _, h := range r.IndexHandlers(podRes) {
		ids = append(ids, h.ID)
	}
	if !reflect.DeepEqual(ids, []string{"by_label"}) {
		t.Errorf("IndexHandlers(pods) = %v", ids)
	}
	if !r.HasIndices() {
		t.Error("HasIndices() = false")
	}
	// Indexed resources are watched; they have no other handlers.
	if got := r.Selectors(); !reflect.DeepEqual(got, []resources.Selector{pods, examples}) {
		t.Errorf("Selectors() = %v", got)
	}
	if r.HasHandlers(podRes) {
		t.Error("HasHandlers(pods) = true with indices only")
	}
	if err := r.AddEvent(EventHandler{ID: "e", Selector: pods, Fn: evFn}); err != nil {
		t.Fatal(err)
	}
	if !r.HasHandlers(podRes) {
		t.Error("HasHandlers(pods) = false with an event handler")
	}
	if New().HasIndices() {
		t.Error("an empty registry has indices")
	}
}
